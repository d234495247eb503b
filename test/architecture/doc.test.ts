// docs/architecture.md stays true (issue 16): every path it names exists, and every room the code
// has is on it. A room added, moved or renamed without the page fails here.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { ROOT, tempDir } from '../helpers.js';

const TOP = ['cli', 'daemon', 'sessions', 'budget', 'logs', 'report', 'memory', 'vault', 'config', 'core', 'rehearsal', 'prompts', 'deploy'];

// The folders that hold source: the top rooms and each folder below them.
export function rooms(root: string): string[] {
  const out: string[] = [];
  const walk = (rel: string) => {
    out.push(rel);
    for (const e of fs.readdirSync(path.join(root, rel), { withFileTypes: true })) if (e.isDirectory()) walk(`${rel}/${e.name}`);
  };
  for (const top of TOP) if (fs.existsSync(path.join(root, top))) walk(top);
  return out;
}

// What the page gets wrong: paths it names that do not exist, rooms it does not name.
export function docProblems(root: string, doc: string): string[] {
  const named = [...doc.matchAll(/`([a-z][\w./-]*\/[\w./-]*)`/g)].map((m) => m[1].replace(/\/$/, ''));
  const missing = named.filter((p) => !fs.existsSync(path.join(root, p))).map((p) => `names ${p}, which does not exist`);
  const unnamed = rooms(root).filter((r) => !named.includes(r)).map((r) => `does not name the room ${r}/`);
  return [...missing, ...unnamed];
}

test('docs/architecture.md names every room, and only paths that exist', () => {
  assert.deepEqual(docProblems(ROOT, fs.readFileSync(path.join(ROOT, 'docs', 'architecture.md'), 'utf8')), []);
});

test('negative control: a room missing from the page and a path that is gone are both found', (t) => {
  const root = tempDir(t);
  for (const d of ['cli', 'daemon/tick', 'daemon/git']) fs.mkdirSync(path.join(root, d), { recursive: true });
  fs.writeFileSync(path.join(root, 'daemon', 'tick', 'tick.ts'), '');
  const doc = '`cli/` `daemon/` `daemon/tick/` does `daemon/tick/tick.ts` then `daemon/tick/gone.ts`';
  assert.deepEqual(docProblems(root, doc), ['names daemon/tick/gone.ts, which does not exist', 'does not name the room daemon/git/']);
});
