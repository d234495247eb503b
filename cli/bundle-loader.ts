// Runs the bundled CLI (dist/bundle/cli.cjs) with V8's code cache beside it. Node 20 caches no
// compiled code between runs, and compiling the ~1.3 MB bundle was a third of every start; the
// cache is made at build time (deploy/bundle.mjs) and a cache V8 rejects (another node version,
// other flags) only costs the compile it would have saved.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import vm from 'node:vm';
import { mark } from '../core/profile.js';

// The bundle runs as a CommonJS body. A dynamic import() in a vm script needs a callback node 20
// marks experimental and loses with a code cache, so the bundle calls this parameter instead
// (the build rewrites its few `import("pkg")` to it and refuses any other).
const HEAD = '(function (exports, require, module, __filename, __dirname, __nightshiftImport) {';
const TAIL = '\n})';

export function compileBundle(file: string, cachedData?: Buffer): vm.Script {
  // The build leaves it pure ASCII (deploy/bundle.mjs): latin1 reads it straight into a one-byte string.
  return new vm.Script(HEAD + fs.readFileSync(file, 'latin1') + TAIL, { filename: file, cachedData });
}

// Two caches, made by the build: `start` from a tick with nothing due (every command's start),
// `session` from a tick that ran one whole session. The bigger one costs a few ms more to load, so
// only `run`, where the operator waits on the session, takes it.
export type CacheKind = 'start' | 'session';

export function cacheFileOf(file: string, kind: CacheKind = 'start'): string {
  return kind === 'session' ? `${file}.session.cache` : `${file}.cache`;
}

// Pure: the cache for a command line (the first word that is not a flag names the command).
export function cacheKindFor(argv: string[]): CacheKind {
  return argv.find((a) => !a.startsWith('-')) === 'run' ? 'session' : 'start';
}

export type BundleRun = { cache: 'accepted' | 'rejected' | 'none' };

// `writeCacheTo` is the build's seam: the cache is written as the process exits, so it holds the
// functions this run compiled, not just the top level.
export function runBundle(file: string, opts: { writeCacheTo?: string; cache?: CacheKind } = {}): BundleRun {
  let cachedData: Buffer | undefined;
  try {
    cachedData = fs.readFileSync(cacheFileOf(file, opts.cache));
  } catch {
    cachedData = undefined;
  }
  const script = compileBundle(file, cachedData);
  mark('bundle_compiled');
  if (opts.writeCacheTo) {
    const out = opts.writeCacheTo;
    process.once('exit', () => fs.writeFileSync(out, script.createCachedData()));
  }
  const module = { exports: {} };
  const body = script.runInThisContext() as (...args: unknown[]) => void;
  mark('bundle_ran');
  body.call(module.exports, module.exports, createRequire(file), module, file, path.dirname(file), (spec: string) => import(spec));
  return { cache: !cachedData ? 'none' : script.cachedDataRejected ? 'rejected' : 'accepted' };
}
