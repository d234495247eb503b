#!/usr/bin/env -S node --min-semi-space-size=32
// The bin. Every command but help runs from the bundle (deploy/bundle.mjs): one file, compiled
// from V8's code cache, loads in a fraction of the time of ~150 modules, and a session starts that
// much sooner. Help and version need almost nothing, so they take the plain modules.
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { mark } from '../core/profile.js';

mark('bin');
const argv = process.argv.slice(2);
const light = argv.length === 0 || argv[0] === 'help' || argv.some((a) => a === '--help' || a === '-h' || a === '--version' || a === '-V');
const bundle = fileURLToPath(new URL('../bundle/cli.cjs', import.meta.url));
// A build without the bundle (tsc alone) still runs, from the plain modules.
if (!light && fs.existsSync(bundle)) {
  const { cacheKindFor, runBundle } = await import('./bundle-loader.js');
  // Set only by the build, which runs one command to make the cache.
  runBundle(bundle, { cache: cacheKindFor(argv), writeCacheTo: process.env.NIGHTSHIFT_BUILD_CODE_CACHE || undefined });
} else await import('./cli.js');
