// `nightshift memory forget`: a dry run with a code, and deletion only with that code, for those ids, today.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test, type TestContext } from 'node:test';
import { forgetCode } from '../../../cli/commands/memory-learning.js';
import { MemoryStore } from '../../../memory/store.js';
import { spawn } from 'node:child_process';
import { BIN, configYaml, nightshift, tempDir } from '../../helpers.js';

// Runs the built CLI with a terminal on its stdin, as a human at a shell would (util-linux
// `script` gives it a pty; its output is stdout and stderr together).
function atTerminal(args: string[], env: NodeJS.ProcessEnv, cwd: string): Promise<{ code: number | null; out: string }> {
  const cmd = [process.execPath, BIN, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
  return new Promise((resolve) => {
    const c = spawn('script', ['-qec', cmd, '/dev/null'], { env, cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    c.stdout.on('data', (d) => (out += d));
    c.stderr.on('data', (d) => (out += d));
    c.on('close', (code) => resolve({ code, out }));
  });
}

function ws(t: TestContext): { dir: string; env: NodeJS.ProcessEnv; db: string } {
  const dir = tempDir(t, 'nightshift-forget-');
  for (const d of ['vault', 'prompts']) fs.mkdirSync(path.join(dir, d));
  fs.writeFileSync(path.join(dir, 'nightshift.yaml'), configYaml());
  return { dir, env: { PATH: process.env.PATH, HOME: dir, NIGHTSHIFT_CONFIG: path.join(dir, 'nightshift.yaml') }, db: path.join(dir, 'state', 'memory.db') };
}

test('the forget code depends on the exact id set, the day and the store', () => {
  const c = forgetCode([3, 1, 2], '2026-03-01', '/s/memory.db');
  assert.match(c, /^[0-9A-F]{4}-[0-9A-F]{4}$/);
  assert.equal(forgetCode([1, 2, 3, 3], '2026-03-01', '/s/memory.db'), c, 'order and repeats do not matter');
  assert.notEqual(forgetCode([1, 2], '2026-03-01', '/s/memory.db'), c);
  assert.notEqual(forgetCode([1, 2, 3], '2026-02-28', '/s/memory.db'), c);
  assert.notEqual(forgetCode([1, 2, 3], '2026-03-01', '/t/memory.db'), c);
});

test('dry run prints what would go and the exact command; wrong, other-set and yesterday\'s codes exit 77 and delete nothing; the right one deletes and tombstones', async (t) => {
  const w = ws(t);
  for (const text of ['The old VPN password hint is on the fridge', 'The VPN moved to WireGuard', 'Lunch is at noon']) {
    const r = await nightshift(['memory', 'observe', text], w.env, w.dir);
    assert.equal(r.code, 0, r.stderr);
  }
  const dry = await nightshift(['memory', 'forget', '1', '2'], w.env, w.dir);
  assert.equal(dry.code, 0, dry.stderr);
  assert.match(dry.stdout, /Would delete 2 memories for good/);
  assert.match(dry.stdout, /#1 \[observation\] The old VPN password hint is on the fridge/);
  const cmd = /^\s+(nightshift memory forget 1 2 --approve ([0-9A-F]{4}-[0-9A-F]{4}))$/m.exec(dry.stdout);
  assert.ok(cmd, dry.stdout);
  const code = cmd![2];
  const json = JSON.parse((await nightshift(['memory', 'forget', '2', '1', '--json'], w.env, w.dir)).stdout);
  assert.equal(json.code, code);
  assert.equal(json.command, cmd![1]);

  const day = json.day as string;
  const file = fs.realpathSync(w.db);
  const yesterday = new Date(Date.parse(`${day}T12:00:00Z`) - 86_400_000).toISOString().slice(0, 10);
  for (const [args, why] of [
    [['1', '2', '--approve', 'ABCD-1234'], 'a wrong code'],
    [['1', '--approve', code], 'the code of another set'],
    [['1', '2', '3', '--approve', code], 'the code of another set'],
    [['1', '2', '--approve', forgetCode([1, 2], yesterday, file)], "yesterday's code"],
  ] as Array<[string[], string]>) {
    const r = await atTerminal(['memory', 'forget', ...args], w.env, w.dir);
    assert.equal(r.code, 77, `${why}: ${r.out}`);
    assert.match(r.out, /is not the approval code/);
  }
  // The right code, but not from a terminal (a session's shell has none): refused too.
  const scripted = await nightshift(['memory', 'forget', '1', '2', '--approve', code], w.env, w.dir);
  assert.equal(scripted.code, 77, scripted.stderr);
  assert.match(scripted.stderr, /must be typed by a human at a terminal/);
  const s0 = MemoryStore.open(w.db);
  assert.equal(s0.stats().memories, 3, 'nothing deleted');
  s0.close();

  // A session's state copy beside its transcript quotes memory 1.
  const copy = path.join(w.dir, 'logs', 'transcripts', 'sess-1.state.md');
  fs.mkdirSync(path.dirname(copy), { recursive: true });
  fs.writeFileSync(copy, '# Identity\n- [observation] The old VPN password hint is on the fridge (#1, salience 0.50)\n- [observation] Lunch is at noon (#3, salience 0.50)\n');
  const ok = await atTerminal(['memory', 'forget', '1', '2', '--approve', code.toLowerCase()], w.env, w.dir);
  assert.equal(ok.code, 0, ok.out);
  assert.match(ok.out, /deleted 2 memories for good; 6 tombstone keys written/);
  assert.match(ok.out, /1 session-state file redacted; the file is checkpointed/);
  assert.equal(fs.readFileSync(copy, 'utf8'), '# Identity\n- [forgotten]\n- [observation] Lunch is at noon (#3, salience 0.50)\n');
  assert.ok(!fs.readFileSync(w.db).includes('fridge'), 'the text is gone from the file');
  const s = MemoryStore.open(w.db);
  t.after(() => s.close());
  assert.equal(s.stats().memories, 1);
  assert.equal(s.stats().observations, 1);
  assert.deepEqual((await s.query('VPN', { include_faded: true })).length, 0, 'gone even with include_faded');
  assert.equal(s.auditLog().filter((r) => r.action === 'delete').length, 1);
  const back = await nightshift(['memory', 'observe', 'the old VPN password hint is on the fridge.'], w.env, w.dir);
  assert.equal(back.code, 75, 'the tombstone blocks its return');
  assert.match(back.stderr, /tombstone [0-9a-f]{12}: forgotten by the operator/);
});

test('believe, predict, resolve, review, threads, wander and dream from the CLI', async (t) => {
  const w = ws(t);
  const run = async (...args: string[]) => {
    const r = await nightshift(['memory', ...args], w.env, w.dir);
    assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
    return r.stdout.trim();
  };
  assert.deepEqual(JSON.parse(await run('believe', 'Small commits are easier to review', '--confidence', '0.9', '--json')), { id: 1, decision: 'novel' });
  const p = JSON.parse(await run('predict', 'The CI will stay green all week', '--confidence', '0.8', '--json'));
  assert.deepEqual(JSON.parse(await run('resolve', String(p.id), 'wrong', '--note', 'red on Tuesday', '--json')), { id: p.id, surprise: 0.8 });
  assert.match(await run('review', '1', 'good'), /^#1 graded good: stability/);
  assert.match(await run('threads', 'open', 'Why is CI red on Tuesdays?', '--solo'), /open solo {2}Why is CI red/);
  assert.equal(JSON.parse(await run('threads', '--json')).threads.length, 1);
  const w1 = await run('wander', '--seed', '5', '--steps', '2', '--json');
  assert.equal(w1, await run('wander', '--seed', '5', '--steps', '2', '--json'));
  const d = JSON.parse(await run('dream', '--json'));
  assert.deepEqual(Object.keys(d).sort(), ['duration_ms', 'phases']);
  for (const phase of ['cluster', 'abstract', 'contradictions', 'schedule', 'fade', 'reindex', 'metrics']) assert.equal(d.phases[phase].ok, true, phase);
  const bad = await nightshift(['memory', 'wander', '--approve', 'X'], w.env, w.dir);
  assert.equal(bad.code, 64);
  assert.match(bad.stderr, /does not take --approve/);
});
