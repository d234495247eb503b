// `npm run bench`: speed figures as ratios against a baseline measured in the same run. Nothing
// here is asserted; the numbers go in closing notes and PRs.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { Ledger } from '../budget/ledger.js';
import { LineSplitter } from '../sessions/stream/line-splitter.js';
import { StreamTracker } from '../sessions/stream/stream-tracker.js';
import { startFakeApi } from '../test/fake-api.js';
import { median, timedRun } from './timing.js';
import { NODE_FLAGS } from '../core/node-flags.js';
import { mergeReadme, renderTable, wallRows } from './wall-table.js';
import { BWRAP, CLAUDE, claudeTestEnv, configYaml, SANDBOX, shareWithSession } from '../test/helpers.js';
import { bwrapArgs, SECCOMP_FD } from '../sessions/wall/sandbox.js';
import { seccompProgram } from '../sessions/wall/seccomp.js';
import { inputStdio, writeInputs, type ChildInput } from '../core/child-process.js';
import { loadConfig } from '../config/config.js';
import { loadAgent } from '../config/agents.js';
import { claudeArgs } from '../sessions/run/command.js';
import { prepareGuest } from '../sessions/wall/guest.js';
import { createLogger } from '../logs/logger.js';

const fmt = (n: number, d = 1) => n.toFixed(d);
const report: Record<string, unknown> = {};

// A failed run rejects with its stderr, so it can never be counted as a time. stdout is kept only
// when asked for (the bare CLI baseline discards it, as before).
// `inputs` go to fds 3, 4, ... (bwrap's seccomp program).
function timed(cmd: string, args: string[], env: NodeJS.ProcessEnv, cwd: string, keepStdout = false, inputs: ChildInput[] = [], user: { uid: number; gid: number } | null = null): Promise<{ ms: number; stdout: string }> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    // As the session's own user where nightshift would start it so (a root supervisor).
    const c = spawn(cmd, args, { env, cwd, stdio: ['ignore', keepStdout ? 'pipe' : 'ignore', 'pipe', ...inputStdio(inputs)], ...(user ? { uid: user.uid, gid: user.gid } : {}) });
    writeInputs(c, inputs);
    let stdout = '';
    let stderr = '';
    c.stdout?.on('data', (d) => (stdout += d));
    c.stderr!.on('data', (d) => (stderr += d));
    c.on('error', reject);
    c.on('close', (code, signal) =>
      code === 0 ? resolve({ ms: performance.now() - t0, stdout }) : reject(new Error(`${cmd} ${args.join(' ')} exited ${code ?? signal}:\n${stderr}`)),
    );
  });
}

async function supervisorOverhead(runs = 10) {
  const api = await startFakeApi();
  // Not /tmp (the wall hides it); the session user passes through (never lists) to the vault.
  const dir = fs.mkdtempSync(path.join('/var/tmp', 'nightshift-bench-'));
  try {
    fs.chmodSync(dir, 0o711);
    fs.mkdirSync(path.join(dir, 'vault'));
    fs.mkdirSync(path.join(dir, 'prompts'));
    shareWithSession(path.join(dir, 'vault'));
    fs.writeFileSync(path.join(dir, 'nightshift.yaml'), configYaml({ budget: { max_sessions_per_day: 1000 } }));
    fs.writeFileSync(path.join(dir, 'prompts', 'bench.md'), '---\nallowed_tools: ["Bash(echo:*)"]\n---\nSCENARIO=tool\n');
    const env = claudeTestEnv(dir, api.url);
    const bare = ['-p', 'SCENARIO=tool', '--output-format', 'stream-json', '--verbose', '--include-partial-messages', '--max-turns', '10', '--model', 'sonnet', '--allowedTools', 'Bash(echo:*)'];
    // The sandbox's own cost, measured apart: the same bare CLI inside the same wall nightshift builds.
    const home = path.join(dir, 'home');
    const walled = BWRAP
      ? bwrapArgs({ vault: path.join(dir, 'vault'), writable: [], hidden: [path.join(dir, 'state'), path.join(dir, 'logs'), '/run'], hiddenFiles: [], readable: [path.dirname(CLAUDE)], sessionDir: home, home }, CLAUDE, bare)
      : null;
    // The CLI as nightshift starts it (same wall, state file, hooks and memory server, endpoints
    // served by this process), timed from its spawn to its exit: what the CLI itself spends on
    // being a guest. The rest of nightshift's time is the supervisor's own.
    const config = loadConfig(path.join(dir, 'nightshift.yaml'));
    const agent = loadAgent(config, 'bench');
    const quiet = createLogger({ redact: (t) => t, level: 'warn', stderr: { write: () => {} } });
    let guestN = 0;
    const asGuest = async () => {
      const g = await prepareGuest(
        { config, agent, sessionId: `bench-guest-${guestN++}`, env, logger: quiet, redact: (t) => t, state: 'You are the bench agent.\n', version: 'bench' },
        (extra) => claudeArgs(agent, config, extra),
      );
      try {
        const t0 = performance.now();
        const run = timed(g.command, g.args, g.env, config.vault, false, g.inputs, g.user);
        g.spawned();
        await run;
        return performance.now() - t0;
      } finally {
        await g.close();
      }
    };
    const cli: number[] = [];
    const ns: number[] = [];
    const boxed: number[] = [];
    const guests: number[] = [];
    // Interleaved, so drift on the machine hits both sides alike.
    for (let i = 0; i < runs; i++) {
      cli.push((await timed(CLAUDE, bare, env, path.join(dir, 'vault'))).ms);
      ns.push(await timedRun(env, dir));
      if (walled) boxed.push((await timed('bwrap', walled, env, path.join(dir, 'vault'), false, [seccompProgram()])).ms);
      guests.push(await asGuest());
      process.stderr.write('.');
    }
    process.stderr.write('\n');
    const c = median(cli);
    const n = median(ns);
    const b = walled ? median(boxed) : null;
    const g = median(guests);
    report.supervisor = {
      runs, sandbox: SANDBOX, bare_cli_median_ms: Math.round(c), nightshift_median_ms: Math.round(n), added_ms: Math.round(n - c), ratio: +(n / c).toFixed(3),
      bare_cli_in_bwrap_median_ms: b === null ? null : Math.round(b), bwrap_added_ms: b === null ? null : Math.round(b - c),
      guest_cli_median_ms: Math.round(g), guest_added_ms: Math.round(g - c), supervisor_own_ms: Math.round(n - g), ratio_to_guest_cli: +(n / g).toFixed(3),
    };
    console.log(`supervisor overhead: nightshift run (sandbox: ${SANDBOX}) ${fmt(n, 0)} ms vs bare CLI ${fmt(c, 0)} ms (median of ${runs}): ratio ${fmt(n / c, 3)}, +${fmt(n - c, 0)} ms`);
    if (b !== null) console.log(`sandbox start-up: bare CLI in bwrap ${fmt(b, 0)} ms vs bare CLI ${fmt(c, 0)} ms: +${fmt(b - c, 0)} ms (ratio ${fmt(b / c, 3)})`);
    console.log(`the CLI as a guest (wall, state, hooks, memory server; spawn to exit) ${fmt(g, 0)} ms: +${fmt(g - c, 0)} ms over bare; the supervisor's own share +${fmt(n - g, 0)} ms (ratio ${fmt(n / g, 3)})`);
  } finally {
    await api.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

// The seccomp filter's own cost: the session's wall around `true`, with and without --seccomp
// (the program generated and written to fd 3 each time, as a session does), interleaved.
async function seccompStart(runs = 20) {
  if (!BWRAP) {
    console.log('seccomp filter: skipped (bwrap cannot make a sandbox here)');
    return;
  }
  const dir = fs.mkdtempSync(path.join('/var/tmp', 'nightshift-bench-'));
  try {
    const vault = path.join(dir, 'vault');
    const home = path.join(dir, 'home');
    for (const d of [vault, home]) fs.mkdirSync(d);
    const layout = { vault, writable: [], hidden: [path.join(dir, 'state'), '/run'], hiddenFiles: [], readable: [], sessionDir: home, home };
    const env = { PATH: process.env.PATH };
    const bare = bwrapArgs(layout, '/bin/true', [], { seccompFd: null });
    const filtered = bwrapArgs(layout, '/bin/true', [], { seccompFd: SECCOMP_FD });
    const off: number[] = [];
    const on: number[] = [];
    for (let i = 0; i < runs; i++) {
      off.push((await timed('bwrap', bare, env, vault)).ms);
      on.push((await timed('bwrap', filtered, env, vault, false, [seccompProgram()])).ms);
    }
    const a = median(off);
    const b = median(on);
    report.seccomp = { runs, instructions: seccompProgram().length / 8, bwrap_true_median_ms: +a.toFixed(2), with_filter_median_ms: +b.toFixed(2), ratio: +(b / a).toFixed(3) };
    console.log(`seccomp filter: bwrap … true ${fmt(b, 1)} ms with it vs ${fmt(a, 1)} ms without (median of ${runs}): ratio ${fmt(b / a, 3)}`);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

// A synthetic stream: init, then per API call message_start, deltas, one assistant tool_use, a
// user tool_result, message_delta; a result at the end.
function syntheticStream(events: number): string {
  const lines = ['{"type":"system","subtype":"init","session_id":"s","model":"claude-sonnet-5"}'];
  let i = 0;
  while (lines.length < events - 1) {
    lines.push(JSON.stringify({ type: 'stream_event', event: { type: 'message_start', message: { usage: { input_tokens: 1000, output_tokens: 1 } } } }));
    lines.push(JSON.stringify({ type: 'stream_event', event: { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'working on it' } } }));
    lines.push(JSON.stringify({ type: 'assistant', message: { id: `m${i}`, content: [{ type: 'tool_use', id: `t${i}`, name: 'Bash', input: { command: `echo ${i}`, description: 'step' } }], usage: { input_tokens: 1000, output_tokens: 1 } } }));
    lines.push(JSON.stringify({ type: 'user', message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: `t${i}`, content: `${i}` }] } }));
    lines.push(JSON.stringify({ type: 'stream_event', event: { type: 'message_delta', usage: { output_tokens: 100 } } }));
    i++;
  }
  lines.push('{"type":"result","subtype":"success","is_error":false,"num_turns":1,"total_cost_usd":1}');
  return `${lines.slice(0, events).join('\n')}\n`;
}

function streamThroughput(events = 100_000) {
  const text = syntheticStream(events);
  const chunks: string[] = [];
  for (let i = 0; i < text.length; i += 65536) chunks.push(text.slice(i, i + 65536));
  const best = (fn: () => void) => {
    let b = Infinity;
    for (let r = 0; r < 5; r++) {
      const t0 = performance.now();
      fn();
      b = Math.min(b, performance.now() - t0);
    }
    return b;
  };
  // Baseline: split on newlines and JSON.parse each line, nothing else.
  const base = best(() => {
    let n = 0;
    for (const l of text.split('\n')) if (l) (JSON.parse(l), n++);
  });
  const ours = best(() => {
    const tracker = new StreamTracker({ maxRepeats: 5, window: 20, cycleRepeats: 3 });
    const s = new LineSplitter();
    for (const c of chunks) s.push(c, (l) => tracker.feedLine(l));
    s.end((l) => tracker.feedLine(l));
    if (tracker.loop) throw new Error('synthetic stream must not be a loop');
  });
  report.stream = { events, events_per_s: Math.round(events / (ours / 1000)), baseline_events_per_s: Math.round(events / (base / 1000)), ratio_to_bare_parse: +(ours / base).toFixed(3) };
  console.log(`stream reader + loop detector: ${fmt(events / ours, 0)}k events/s vs bare split+JSON.parse ${fmt(events / base, 0)}k events/s: ${fmt(ours / base, 2)}x the time`);
}

function ledgerPairs(n = 2000) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nightshift-bench-'));
  try {
    const ledger = Ledger.open(path.join(dir, 'l.db'));
    const t0 = performance.now();
    for (let i = 0; i < n; i++) {
      const open = { id: `s${i}`, agent: 'a', day: '2026-11-30', started_at: new Date().toISOString(), transcript: null, model: 'sonnet', supervisor_pid: 1, supervisor_start: null };
      ledger.open(open);
      ledger.settle(open, { outcome: 'ok', ended_at: new Date().toISOString(), duration_ms: 1, cost_usd: 0.01, cost_estimated: false, turns: 1, exit_code: 0, result: 'r', error: null, input_tokens: 1, output_tokens: 1 });
    }
    const ours = performance.now() - t0;
    ledger.close();
    // Baseline: the same two writes as bare statements on an identical WAL database, with the same
    // durability (the charge's insert committed with synchronous=FULL, the settle with NORMAL).
    const db = new Database(path.join(dir, 'b.db'));
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.exec('CREATE TABLE t (id TEXT PRIMARY KEY, a TEXT, cost REAL, outcome TEXT)');
    const ins = db.prepare('INSERT INTO t (id, a) VALUES (?, ?)');
    const upd = db.prepare('UPDATE t SET cost = ?, outcome = ? WHERE id = ?');
    const t1 = performance.now();
    for (let i = 0; i < n; i++) {
      db.pragma('synchronous = FULL');
      ins.run(`s${i}`, 'a');
      db.pragma('synchronous = NORMAL');
      upd.run(0.01, 'ok', `s${i}`);
    }
    const base = performance.now() - t1;
    db.close();
    report.ledger = { pairs: n, pairs_per_s: Math.round(n / (ours / 1000)), baseline_pairs_per_s: Math.round(n / (base / 1000)), ratio: +(ours / base).toFixed(3) };
    console.log(`ledger open+settle: ${fmt(n / ours * 1000, 0)} pairs/s vs bare insert+update ${fmt(n / base * 1000, 0)} pairs/s: ${fmt(ours / base, 2)}x the time`);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

// What the timer and the operator start most: a tick with nothing due (config load to exit) and
// `status`, each against Node's own start-up, interleaved in one run (issue 16: at most 3x, goal
// 2x). The vault is a git work tree with a remote, as on a real host, so status asks git what is
// unpushed.
async function commandStartup(runs = 20) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nightshift-bench-'));
  try {
    for (const d of ['vault', 'prompts']) fs.mkdirSync(path.join(dir, d));
    fs.writeFileSync(path.join(dir, 'prompts', 'idle.md'), 'never due\n');
    const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, stdio: 'ignore' });
    git(dir, 'init', '-q', '--bare', 'remote.git');
    const vault = path.join(dir, 'vault');
    git(vault, 'init', '-q', '-b', 'main');
    fs.writeFileSync(path.join(vault, 'notes.md'), 'notes\n');
    git(vault, 'add', 'notes.md');
    git(vault, '-c', 'user.name=bench', '-c', 'user.email=bench@localhost', 'commit', '-qm', 'start');
    git(vault, 'remote', 'add', 'origin', path.join(dir, 'remote.git'));
    git(vault, 'push', '-q', '-u', 'origin', 'main');
    // No dispatch rule, so nothing is due at any hour; and a claude that does not exist, so that
    // not even a bug could start a real session from here.
    const claude = path.join(dir, 'no-such-claude');
    fs.writeFileSync(path.join(dir, 'nightshift.yaml'), `claude:\n  command: ${JSON.stringify(claude)}\ngit:\n  lock_file: ${JSON.stringify(path.join(dir, 'git.lock'))}\ndispatch: []\n`);
    const env = { PATH: process.env.PATH, HOME: dir, NIGHTSHIFT_CONFIG: path.join(dir, 'nightshift.yaml') };
    const bin = path.join(import.meta.dirname, '..', 'cli', 'bin.js');
    const floor: number[] = [];
    const ticks: number[] = [];
    const statuses: number[] = [];
    for (let i = 0; i < runs; i++) {
      floor.push((await timed(process.execPath, ['-e', '0'], env, dir)).ms);
      // A failing tick throws (with its stderr) and ends the bench; every tick must be a skip.
      // As the unit (ExecStart=) and the bin's #! line start them: with NODE_FLAGS.
      const tick = await timed(process.execPath, [...NODE_FLAGS, bin, 'tick', '--json'], env, dir, true);
      const r = JSON.parse(tick.stdout);
      if (r.action !== 'skip' || r.session !== null) throw new Error(`Expected the bench tick to be a skip, got ${tick.stdout}`);
      ticks.push(tick.ms);
      const status = await timed(process.execPath, [...NODE_FLAGS, bin, 'status', '--json'], env, dir, true);
      if (JSON.parse(status.stdout).unpushed !== 0) throw new Error(`Expected status to count 0 unpushed commits, got ${status.stdout}`);
      statuses.push(status.ms);
    }
    // What the flags are for: the young generation's collections during one tick, with and without.
    const scavenges = (flags: readonly string[]) => (spawnSync(process.execPath, ['--trace-gc', ...flags, bin, 'tick', '--json'], { env, cwd: dir, encoding: 'utf8' }).stdout.match(/Scavenge/g) ?? []).length;
    const gc = { with_flags: scavenges(NODE_FLAGS), without: scavenges([]) };
    console.log(`tick, nothing due: ${gc.with_flags} scavenges with ${NODE_FLAGS.join(' ')}, ${gc.without} without`);
    const f = median(floor);
    for (const [name, times] of [['tick', ticks], ['status', statuses]] as const) {
      const m = median(times);
      report[name] = { runs, node_flags: NODE_FLAGS, node_floor_median_ms: Math.round(f), median_ms: Math.round(m), ratio: +(m / f).toFixed(2), ...(name === 'tick' ? { scavenges: gc } : {}) };
      console.log(`${name === 'tick' ? 'tick, nothing due' : 'status'}: ${fmt(m, 0)} ms vs node -e 0 ${fmt(f, 0)} ms (median of ${runs}): ratio ${fmt(m / f, 2)}`);
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

// The bench to run: the first word that is not a flag (none: all).
const only = process.argv.slice(2).find((a) => !a.startsWith('-'));
if (!only || only === 'stream') streamThroughput();
if (!only || only === 'ledger') ledgerPairs();
if (!only || only === 'tick' || only === 'status') await commandStartup();
if (!only || only === 'startup') report.startup = (await import('./startup.js')).startupBench();
if (!only || only === 'seccomp') await seccompStart();
if (!only || only === 'wall') report.wall = await (await import('./wall.js')).wallBench(Number(process.env.BENCH_RUNS) || 8);
if (!only || only === 'wall-parts') report.wall_parts = await (await import('./wall-parts.js')).wallPartsBench(Number(process.env.BENCH_RUNS) || 30);
if (!only || only === 'per-tool') report.per_tool = await (await import('./per-tool.js')).perToolBench(Number(process.env.BENCH_RUNS) || 5);
if (!only || only === 'supervisor') await supervisorOverhead(Number(process.env.BENCH_RUNS) || 10);
if (!only || only === 'embeddings') report.embeddings = await (await import('./embeddings.js')).embeddingsBench();
if (!only || only === 'memory-mcp') report.memory_mcp = await (await import('./memory-mcp.js')).memoryMcpBench();
if (!only || only === 'memory-recall') {
  const { memoryRecall, formatRecall } = await import('./memory-recall.js');
  const r = await memoryRecall();
  if (r) {
    report.memory_recall = r;
    console.log(formatRecall(r));
  }
}
if (!only || only === 'memory-updates') {
  const { memoryUpdatesBench, formatUpdates } = await import('./memory-updates.js');
  const r = await memoryUpdatesBench();
  report.memory_updates = r;
  console.log(formatUpdates(r));
}
if (!only || only === 'memory-import') report.memory_import = (await import('./memory-import.js')).memoryImportBench();
if (!only || only === 'meter') report.meter = await (await import('./meter.js')).meterBench(Number(process.env.BENCH_RUNS) || 200);
if (!only || only === 'mcp-http') report.mcp_http = await (await import('./mcp-http.js')).mcpHttpBench();
if (!only || only === 'hooks') report.hooks = await (await import('./hooks.js')).hooksBench();
if (!only || only === 'terminal-text') report.terminal_text = (await import('./terminal-text.js')).terminalTextBench();
if (!only || only === 'dream') report.dream = await (await import('./dream.js')).dreamBenchAll();
if (!only || only === 'mcp-start') report.mcp_start = await (await import('./mcp-start.js')).mcpStartBench();
if (!only || only === 'concurrency') report.concurrency = await (await import('./concurrency.js')).concurrencyBench(Number(process.env.BENCH_RUNS) || 3);
if (!only || only === 'tokens') report.tokens = await (await import('./tokens.js')).tokensBench();
if (!only || only === 'fleet') report.fleet = await (await import('./fleet.js')).fleetBench(Number(process.env.BENCH_RUNS) || 20);
if (!only || only === 'telemetry') report.telemetry = await (await import('./telemetry.js')).telemetryBench(Number(process.env.BENCH_RUNS) || 5);
const stamp = `${new Date().toISOString().slice(0, 10)}, ${os.cpus().length} cores, load ${os.loadavg()[0].toFixed(1)}`;
const table = wallRows(report, stamp);
if (table.length) console.log(`\n${renderTable(table)}`);
// --readme: the rows this run measured replace theirs in README.md's table.
if (process.argv.includes('--readme')) {
  if (!table.length) console.log('README.md: no figure of its table was measured in this run; left as it was');
  else {
    const file = path.join(import.meta.dirname, '..', '..', 'README.md');
    fs.writeFileSync(file, mergeReadme(fs.readFileSync(file, 'utf8'), table, stamp));
    console.log(`README.md: ${table.length} of its rows replaced`);
  }
}
if (process.argv.includes('--json')) console.log(JSON.stringify(report));
