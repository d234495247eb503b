// The config and environment a rehearsal runs with (config/rehearsal.ts), as plain data: every
// path nightshift writes moved into the rehearsal's site, nothing sent out, the real site's folders
// hidden from the session (sessions/wall/wall-layout.ts).
import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';
import { validateConfig } from '../../config/config.js';
import { rehearsalConfig, rehearsalCredential, rehearsalEnv, rehearsalPaths } from '../../config/rehearsal.js';
import { layoutFor } from '../../sessions/wall/wall-layout.js';
import { tempDir } from '../helpers.js';

const site = (yaml: Record<string, unknown> = {}) => {
  const r = validateConfig({ monitor: { ping_url: 'https://hc-ping.com/x' }, telemetry: { otlp_endpoint: 'http://127.0.0.1:4318' }, hooks: { extra_dirs: ['../shared'] }, ...yaml }, '/srv/site/nightshift.yaml');
  assert.ok(r.config, JSON.stringify(r.problems));
  return r.config;
};

test('every path a session writes moves under <state_dir>/rehearsal/site; the ping, traces and extra dirs are off', () => {
  const real = site({ git: { lock_file: '/var/lock/nightshift-git' } });
  const p = rehearsalPaths(real);
  const c = rehearsalConfig(real, p);
  const s = '/srv/site/state/rehearsal/site';
  assert.deepEqual(
    { vault: c.vault, state_dir: c.state_dir, log_dir: c.log_dir, memory: c.memory.db, git_lock: c.git.lock_file, ping: c.monitor.ping_url, otlp: c.telemetry.otlp_endpoint, extra: c.hooks.extra_dirs },
    { vault: `${s}/vault`, state_dir: `${s}/state`, log_dir: `${s}/logs`, memory: `${s}/state/memory.db`, git_lock: `${s}/state/git.lock`, ping: undefined, otlp: undefined, extra: [] },
  );
  assert.equal(p.remote, `${s}/remote.git`);
  // The real site's folders, to be hidden; its memory folder too when memory.db lies elsewhere.
  assert.deepEqual(c.rehearsal, { hide: ['/srv/site/state', '/srv/site/logs', '/srv/site/vault'] });
  assert.deepEqual(rehearsalConfig(site({ memory: { db: '/var/lib/mem/memory.db' } }), p).rehearsal?.hide.at(-1), '/var/lib/mem');
  // Control: the site's own config is untouched.
  assert.equal(real.state_dir, '/srv/site/state');
  assert.equal(real.monitor.ping_url, 'https://hc-ping.com/x');
  assert.equal(real.telemetry.otlp_endpoint, 'http://127.0.0.1:4318');
  assert.equal(real.rehearsal, undefined);
});

test('the rehearsal\'s environment: the imitation and its key, no other credential, nothing outward', () => {
  const env = { PATH: '/bin', ANTHROPIC_API_KEY: 'sk-ant-real', CLAUDE_CODE_OAUTH_TOKEN: 'oat', ANTHROPIC_AUTH_TOKEN: 'b', ANTHROPIC_BASE_URL: 'https://gw', DISCORD_WEBHOOK_URL: 'https://discord.com/api/webhooks/1/x', GEMINI_API_KEY: 'g', GOOGLE_API_KEY: 'g2', NIGHTSHIFT_OTLP_HEADERS: 'authorization=Bearer%20t' };
  assert.deepEqual(rehearsalEnv(env, { url: 'http://127.0.0.1:5', key: 'sk-rehearsal-1' }), { PATH: '/bin', ANTHROPIC_BASE_URL: 'http://127.0.0.1:5', ANTHROPIC_API_KEY: 'sk-rehearsal-1' });
  assert.equal(env.ANTHROPIC_API_KEY, 'sk-ant-real', 'the site\'s environment is not changed');
});

test('a rehearsal\'s key is known in any credential variable; a real key is not one', () => {
  assert.equal(rehearsalCredential({ ANTHROPIC_API_KEY: 'sk-rehearsal-abc' }), 'ANTHROPIC_API_KEY');
  assert.equal(rehearsalCredential({ CLAUDE_CODE_OAUTH_TOKEN: ' sk-rehearsal-abc' }), 'CLAUDE_CODE_OAUTH_TOKEN');
  assert.equal(rehearsalCredential({ ANTHROPIC_API_KEY: 'sk-ant-api03-x', ANTHROPIC_BASE_URL: 'http://127.0.0.1:9' }), null);
  assert.equal(rehearsalCredential({}), null);
});

test('the wall hides the real site\'s folders from a rehearsal\'s session, its own vault writable', (t) => {
  const dir = tempDir(t);
  const real = validateConfig({}, path.join(dir, 'nightshift.yaml')).config!;
  const c = rehearsalConfig(real, rehearsalPaths(real));
  const layout = layoutFor(c, {}, path.join(dir, 'sess'), path.join(dir, 'home'), null, null);
  for (const d of [real.state_dir, real.log_dir, real.vault]) assert.ok(layout.hidden.includes(d), `${d} hidden`);
  assert.equal(layout.vault, path.join(dir, 'state', 'rehearsal', 'site', 'vault'));
  // Control: a real session's layout hides its state and logs, never its vault.
  const own = layoutFor(real, {}, path.join(dir, 'sess'), path.join(dir, 'home'), null, null);
  assert.ok(!own.hidden.includes(real.vault));
});
