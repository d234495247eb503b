#!/usr/bin/env node
// The bin. Every command but help runs from the bundle (deploy/bundle.mjs): one file loads in a
// fraction of the time of ~150 modules, and a session starts that much sooner. Help and version
// need almost nothing, so they take the plain modules, the lighter start for them.
import fs from 'node:fs';

const argv = process.argv.slice(2);
const light = argv.length === 0 || argv[0] === 'help' || argv.some((a) => a === '--help' || a === '-h' || a === '--version' || a === '-V');
const bundle = new URL('../bundle/cli.js', import.meta.url);
// A build without the bundle (tsc alone) still runs, from the plain modules.
await import(!light && fs.existsSync(bundle) ? bundle.href : './cli.js');
