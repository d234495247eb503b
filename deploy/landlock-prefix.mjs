// Compiles the shell prefix (sessions/wall/landlock-prefix.c) into dist/sessions/wall/landlock-prefix,
// with the bridge's socket folder as tsc built it. Every Bash command of a walled session runs
// through the prefix: compiled it costs ~0.5 ms a command, the perl script ~2 ms. Without a C
// compiler (or where it fails) the build goes on and sessions keep the perl script, said here and
// by `nightshift doctor`.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const source = path.join(root, 'sessions', 'wall', 'landlock-prefix.c');
const out = path.join(root, 'dist', 'sessions', 'wall', 'landlock-prefix');
const { WALL_API } = await import(path.join(root, 'dist', 'sessions', 'wall', 'bridge.js'));

fs.rmSync(out, { force: true });
const cc = process.env.CC || 'cc';
// A C string literal of the folder: only the characters a path of ours holds are let through.
if (!/^\/[A-Za-z0-9_./-]+$/.test(WALL_API.dir)) throw new Error(`the bridge's socket folder ${WALL_API.dir} is not a plain path`);
const tmp = `${out}.${process.pid}`;
const r = spawnSync(cc, ['-O2', '-Wall', '-Wextra', `-DAPI_DIR="${WALL_API.dir}"`, '-o', tmp, source], { encoding: 'utf8' });
if (r.error || r.status !== 0) {
  fs.rmSync(tmp, { force: true });
  const why = r.error ? `${cc} could not be run (${r.error.code ?? r.error.message})` : `${cc} failed (exit ${r.status ?? r.signal})${r.stderr.trim() ? `:\n${r.stderr.trim()}` : ''}`;
  console.warn(`nightshift build: the shell prefix stays the perl script (~2 ms more each Bash call of a walled session): ${why}. Fix: install a C compiler (Debian: apt-get install gcc libc6-dev), then npm run build`);
} else {
  fs.chmodSync(tmp, 0o755);
  fs.renameSync(tmp, out);
}
