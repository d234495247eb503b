// `nightshift memory import` of 10k prose-like lines through the gate, against the same lines
// parsed and inserted bare into an FTS5 table by a fresh node (both pay a process start-up). The
// goal is well under a minute for the import; the ratio says what the gate costs over storage.
// (The test in test/memory/cli.test.ts checks only that the import finishes and counts every line.)
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { configYaml } from '../test/helpers.js';

import { zipfLines } from '../test/memory/zipf-lines.js';

const ROOT = path.join(import.meta.dirname, '..', '..');
const BIN = path.join(import.meta.dirname, '..', 'cli', 'bin.js');


function timed(args: string[], env: NodeJS.ProcessEnv, cwd: string): number {
  const t0 = performance.now();
  const r = spawnSync(process.execPath, args, { env, cwd, stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8' });
  const ms = performance.now() - t0;
  if (r.status !== 0) throw new Error(`node ${args.join(' ')} exited ${r.status ?? r.signal}:\n${r.stderr}`);
  return ms;
}

export function memoryImportBench(n = 10_000) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nightshift-bench-'));
  try {
    for (const d of ['vault', 'prompts', 'state']) fs.mkdirSync(path.join(dir, d));
    fs.writeFileSync(path.join(dir, 'nightshift.yaml'), configYaml());
    const file = path.join(dir, 'lines.jsonl');
    fs.writeFileSync(file, zipfLines(n));
    const env = { PATH: process.env.PATH, HOME: dir, NIGHTSHIFT_CONFIG: path.join(dir, 'nightshift.yaml') };
    const bare = `
      const Database = require('better-sqlite3');
      const db = new Database(${JSON.stringify(path.join(dir, 'bare.db'))});
      db.pragma('journal_mode = WAL');
      db.exec('CREATE VIRTUAL TABLE m USING fts5(text, source, created_at)');
      const ins = db.prepare('INSERT INTO m VALUES (?, ?, ?)');
      const all = require('fs').readFileSync(${JSON.stringify(file)}, 'utf8').trim().split('\\n').map((l) => JSON.parse(l));
      db.transaction(() => { for (const o of all) ins.run(o.text, o.source, o.created_at); })();`;
    const base = timed(['-e', bare], env, ROOT);
    const ours = timed([BIN, 'memory', 'import', file, '--json'], env, dir);
    console.log(`memory import: ${n} lines in ${(ours / 1000).toFixed(1)} s vs bare FTS5 insert ${(base / 1000).toFixed(1)} s: ratio ${(ours / base).toFixed(1)} (goal: well under 60 s)`);
    return { lines: n, import_ms: Math.round(ours), bare_insert_ms: Math.round(base), ratio: +(ours / base).toFixed(2) };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
