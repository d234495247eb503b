// The V8 flags nightshift's own processes start with: the bin's #! line (cli/bin.ts) and the tick's
// and daemon's ExecStart= (deploy/systemd/). A young generation that starts at 32 MB lets a
// command's start-up (the bundle, zod's schemas, the config) run without a scavenge: a tick with
// nothing due made 4 of them at the default, ~11 ms of its ~120; at 16 MB a one-call session still
// made 2 (~10 ms each, one after the CLI ended), at 32 none, for ~7 MB more at the end of a 61-call
// session and ~3 ms more on a tick with nothing due (docs/benchmarks.md). NODE_OPTIONS may not
// carry it.
export const NODE_FLAGS: readonly string[] = ['--min-semi-space-size=32'];

// The #! line that starts node with them (`env -S`: coreutils 8.30 and later, Debian 10 on).
export const SHEBANG = `#!/usr/bin/env -S node ${NODE_FLAGS.join(' ')}`;
