// NIGHTSHIFT_PROFILE=1: the phase marks a command leaves on stderr (docs/benchmarks.md reads them).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { formatMarks } from '../../core/profile.js';
import { nightshift, tempDir } from '../helpers.js';

test('each mark gets its time and the time since the one before; exit closes the list', () => {
  assert.deepEqual(formatMarks([['a', 10], ['b', 25.04]], 30), [
    { phase: 'a', at_ms: 10, took_ms: 10 },
    { phase: 'b', at_ms: 25, took_ms: 15 },
    { phase: 'exit', at_ms: 30, took_ms: 5 },
  ]);
  // With CPU times: each phase's own share, the first from the process's start.
  assert.deepEqual(formatMarks([['a', 10, 8], ['b', 25, 12.5]], 30, 13), [
    { phase: 'a', at_ms: 10, took_ms: 10, cpu_ms: 8 },
    { phase: 'b', at_ms: 25, took_ms: 15, cpu_ms: 4.5 },
    { phase: 'exit', at_ms: 30, took_ms: 5, cpu_ms: 0.5 },
  ]);
});

test('a command profiled writes its phases, in order, as one JSON line; unprofiled, none', async (t) => {
  const dir = tempDir(t);
  for (const d of ['vault', 'prompts']) fs.mkdirSync(path.join(dir, d));
  fs.writeFileSync(path.join(dir, 'nightshift.yaml'), 'vault: ./vault\nstate_dir: ./state\nlog_dir: ./logs\nagents_dir: ./prompts\ngit:\n  enabled: false\ndispatch: []\n');
  const env = { PATH: process.env.PATH, HOME: dir, NIGHTSHIFT_CONFIG: path.join(dir, 'nightshift.yaml') };
  const line = (stderr: string) => stderr.split('\n').find((l) => l.startsWith('{"nightshift_profile"'));
  const on = await nightshift(['tick', '--json'], { ...env, NIGHTSHIFT_PROFILE: '1' }, dir);
  assert.equal(on.code, 0, on.stderr);
  const phases = JSON.parse(line(on.stderr) ?? 'null')?.nightshift_profile as Array<{ phase: string; at_ms: number }>;
  assert.ok(phases, `no profile line in:\n${on.stderr}`);
  const names = phases.map((p) => p.phase);
  for (const want of ['main', 'config_loaded', 'tick', 'fire_settled', 'command_ran', 'exit']) assert.ok(names.includes(want), `${want} in ${names.join(', ')}`);
  assert.ok(names.indexOf('config_loaded') < names.indexOf('tick') && names.at(-1) === 'exit');
  assert.deepEqual(phases.map((p) => p.at_ms), [...phases.map((p) => p.at_ms)].sort((a, b) => a - b), 'times only grow');
  const off = await nightshift(['tick', '--json'], { ...env, NIGHTSHIFT_PROFILE: '0' }, dir);
  assert.equal(off.code, 0, off.stderr);
  assert.equal(line(off.stderr), undefined);
  // The tick's own answer is unchanged by the profile.
  assert.equal(JSON.parse(on.stdout).action, 'skip');
});
