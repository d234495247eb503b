// The mark of a key the API refused today, and the decision over it: pure, and the small file in
// state_dir (never the key itself).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { clearRefusal, credentialFingerprint, envFileIdentity, hhmm, readRefusal, refusalFile, refusedKeyMessage, refusedKeyVerdict, writeRefusal, type RefusalMark } from '../../budget/credential-refusal.js';
import { tempDir } from '../helpers.js';

const KEY = 'sk-test-refused-key';
const mark = (o: Partial<RefusalMark> = {}): RefusalMark => ({
  fingerprint: credentialFingerprint(KEY), kind: 'api_key', at: '2026-03-01T09:41:07.000Z', day: '2026-03-01', session: 's-1', env_file: '/srv/site/nightshift.env', env_ino: 42, env_mtime_ms: 1000, ...o,
});

test('a fingerprint tells keys apart, is stable, and gives nothing of the key away', () => {
  const fp = credentialFingerprint(KEY);
  assert.match(fp, /^[0-9a-f]{16}$/);
  assert.equal(credentialFingerprint(KEY), fp);
  assert.equal(credentialFingerprint(` ${KEY}\n`), fp, 'the env file\'s whitespace is not a new key');
  assert.notEqual(credentialFingerprint(`${KEY.slice(0, -1)}0`), fp);
  assert.ok(!KEY.includes(fp) && !fp.includes(KEY.slice(-8)));
});

test('refused: the same key on the same day; not another key, another day, or no mark', () => {
  const m = mark();
  assert.equal(refusedKeyVerdict(m, { fingerprint: credentialFingerprint(KEY), day: '2026-03-01' }), m);
  assert.equal(refusedKeyVerdict(m, { fingerprint: credentialFingerprint('sk-test-a-new-key'), day: '2026-03-01' }), null);
  assert.equal(refusedKeyVerdict(m, { fingerprint: credentialFingerprint(KEY), day: '2026-03-02' }), null);
  assert.equal(refusedKeyVerdict(null, { fingerprint: credentialFingerprint(KEY), day: '2026-03-01' }), null);
});

test('the message names the variable, the env file, the time and both fixes; a changed env file is said', () => {
  const same = refusedKeyMessage(mark(), { envFile: '/srv/site/nightshift.env', agent: 'worker', hhmm: '10:41', envNow: { env_ino: 42, env_mtime_ms: 1000 } });
  assert.match(same, /^refused key: the API refused this ANTHROPIC_API_KEY \(401\) at 10:41 today \(session s-1\), and it is still the one in use; nothing was started or charged\./);
  assert.match(same, /Fix: put a valid ANTHROPIC_API_KEY in \/srv\/site\/nightshift\.env \(a changed key clears this by itself\), or, once the key is fixed where it is set, `nightshift hold release worker`$/);
  const edited = refusedKeyMessage(mark(), { envFile: '/srv/site/nightshift.env', agent: 'worker', hhmm: '10:41', envNow: { env_ino: 42, env_mtime_ms: 2000 } });
  assert.match(edited, /\/srv\/site\/nightshift\.env changed since, but the key in use is the same one/);
  assert.match(refusedKeyMessage(mark({ kind: 'oauth' }), { envFile: 'f', agent: 'a', hhmm: '00:00', envNow: { env_ino: 42, env_mtime_ms: 1000 } }), /this CLAUDE_CODE_OAUTH_TOKEN .*a valid CLAUDE_CODE_OAUTH_TOKEN/);
  assert.equal(hhmm('2026-03-01T09:41:07Z', 'Europe/Paris'), '10:41');
  assert.equal(hhmm('2026-03-01T23:05:00Z', 'UTC'), '23:05');
});

test('the mark is written whole, holds no key, is read back, and cleared; a damaged one reads as none', (t) => {
  const dir = tempDir(t);
  const state = path.join(dir, 'state');
  assert.equal(readRefusal(state), null);
  assert.equal(clearRefusal(state), null);
  const env = path.join(dir, 'nightshift.env');
  fs.writeFileSync(env, `ANTHROPIC_API_KEY=${KEY}\n`);
  const id = envFileIdentity(env);
  assert.equal(id.env_ino, fs.statSync(env).ino);
  assert.deepEqual(envFileIdentity(path.join(dir, 'none.env')), { env_file: path.join(dir, 'none.env'), env_ino: null, env_mtime_ms: null });
  writeRefusal(state, mark(id));
  const text = fs.readFileSync(refusalFile(state), 'utf8');
  assert.ok(!text.includes(KEY) && !text.includes(KEY.slice(-10)), 'the key is not in the mark');
  assert.equal(fs.statSync(refusalFile(state)).mode & 0o777, 0o600);
  assert.deepEqual(readRefusal(state), mark(id));
  assert.deepEqual(clearRefusal(state), mark(id));
  assert.equal(fs.existsSync(refusalFile(state)), false);
  fs.writeFileSync(refusalFile(state), '{"fingerprint": 3');
  assert.equal(readRefusal(state), null);
});
