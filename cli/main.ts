// The CLI entry: parses arguments, wires production dependencies, runs a command, and is the one
// place that maps errors to exit codes and calls process.exit.
import { version } from '../daemon/version.js';
import { parseArgs } from 'node:util';
import { dayOf } from '../budget/day.js';
// Start-up: only light modules load statically, so --help and --version answer fast; config,
// the logger, the ledger and the session machinery load on the path that needs them.
import type { Logger } from '../logs/logger.js';
import { makeRedactor, secretValues, type Redactor } from '../logs/redact.js';
import { prefixLines, stderrIsJournal } from '../logs/journal.js';
import { LiveLine } from '../logs/live-line.js';
import type { Config } from '../daemon/config/config.js';
import { formatDuration, parseDuration } from '../daemon/config/duration.js';
import { ConfigError, EXIT, LockedError, NightshiftError, UsageError } from '../daemon/errors.js';
import { errnoAccessProblem } from '../daemon/file-access.js';
import { envFilePath, loadEnvFile, type EnvFileResult } from '../daemon/config/env-file.js';
import type { GitReport } from '../daemon/git/git-sync.js';
import type { LockOwner } from '../daemon/lock.js';
import { COMMAND_HELP, MAIN_HELP } from './help.js';
import { didYouMean } from '../daemon/suggest.js';
import { money } from '../budget/money.js';
import { printRecord } from './commands/sessions.js';
import { withLedger } from './with-ledger.js';
import type { RunDeps } from '../daemon/tick/run.js';

type Io = { out: (text: string) => void; redact: Redactor; live?: LiveLine | null; stdoutIsTTY?: boolean };
type Flags = {
  config?: string; json?: boolean; force?: boolean; date?: string; limit?: string; help?: boolean; version?: boolean;
  at?: string; timeout?: string; user?: string; 'on-calendar'?: string; prefix?: string; unit?: string;
  source?: string; category?: string; tags?: string; explain?: boolean; 'include-faded'?: boolean; alert?: boolean;
  agent?: string; outcome?: string; since?: string; transcript?: boolean; days?: string; follow?: boolean;
  'environment-file'?: string; remote?: string; fix?: boolean;
  confidence?: string; note?: string; due?: string; solo?: boolean; seed?: string; steps?: string; approve?: string;
};

const OPTIONS = {
  config: { type: 'string' },
  json: { type: 'boolean' },
  force: { type: 'boolean' },
  date: { type: 'string' },
  limit: { type: 'string' },
  at: { type: 'string' },
  timeout: { type: 'string' },
  user: { type: 'string' },
  'on-calendar': { type: 'string' },
  prefix: { type: 'string' },
  unit: { type: 'string' },
  source: { type: 'string' },
  category: { type: 'string' },
  tags: { type: 'string' },
  explain: { type: 'boolean' },
  'include-faded': { type: 'boolean' },
  confidence: { type: 'string' },
  note: { type: 'string' },
  due: { type: 'string' },
  solo: { type: 'boolean' },
  seed: { type: 'string' },
  steps: { type: 'string' },
  approve: { type: 'string' },
  agent: { type: 'string' },
  outcome: { type: 'string' },
  since: { type: 'string' },
  transcript: { type: 'boolean' },
  days: { type: 'string' },
  follow: { type: 'boolean', short: 'f' },
  'environment-file': { type: 'string' },
  remote: { type: 'string' },
  fix: { type: 'boolean' },
  alert: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean', short: 'v' },
} as const;

const ALLOWED: Record<string, Array<keyof Flags>> = {
  run: ['config', 'environment-file', 'json', 'force'],
  agents: ['config', 'environment-file', 'json'],
  budget: ['config', 'environment-file', 'json', 'date', 'days'],
  sessions: ['config', 'environment-file', 'json', 'limit', 'agent', 'outcome', 'since'],
  show: ['config', 'environment-file', 'json', 'transcript'],
  logs: ['config', 'environment-file', 'follow'],
  tick: ['config', 'environment-file', 'json'],
  next: ['config', 'environment-file', 'json', 'at'],
  status: ['config', 'environment-file', 'json'],
  lock: ['config', 'environment-file', 'timeout'],
  daemon: ['config', 'environment-file'],
  systemd: ['config', 'environment-file', 'user', 'on-calendar', 'prefix'],
  alert: ['config', 'environment-file', 'unit'],
  doctor: ['config', 'environment-file', 'json', 'alert', 'fix'],
  memory: ['config', 'environment-file', 'json', 'limit', 'source', 'category', 'tags', 'explain', 'include-faded', 'confidence', 'note', 'due', 'solo', 'seed', 'steps', 'approve'],
  mcp: ['config', 'environment-file'],
  state: ['config', 'environment-file', 'json', 'agent'],
  anneal: ['config', 'environment-file', 'json', 'agent'],
  hook: ['config'],
  init: ['remote'],
};

// How many arguments each command takes after its name ([min, max]); more are refused, not ignored.
const ARITY: Record<string, [number, number]> = {
  run: [1, 1], agents: [0, 0], budget: [0, 0], sessions: [0, 0], show: [1, 1], logs: [0, 1], tick: [0, 0], next: [0, 0], status: [0, 0],
  daemon: [0, 0], systemd: [1, 1], alert: [0, 0], doctor: [0, 0], mcp: [0, 0], state: [0, 0],
};

function parse(argv: string[]): { command: string | null; positionals: string[]; flags: Flags } {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
  } catch (err) {
    throw new UsageError(usageProblem(err as Error & { code?: string }, argv));
  }
  const [command = null, ...positionals] = parsed.positionals;
  const flags = parsed.values as Flags;
  if (command && !flags.help) {
    const allowed = ALLOWED[command];
    if (!allowed) throw new UsageError(`Unknown command \`${command}\`.${didYouMean(command, Object.keys(ALLOWED))} Commands: ${Object.keys(ALLOWED).join(', ')}. See \`nightshift --help\`.`);
    for (const k of Object.keys(flags) as Array<keyof Flags>) {
      if (flags[k] !== undefined && !allowed.includes(k)) throw new UsageError(`\`nightshift ${command}\` does not take --${k}.${didYouMean(k, allowed, (o) => `--${o}`)} See \`nightshift ${command} --help\`.`);
    }
    const arity = ARITY[command];
    if (arity && positionals.length > arity[1]) {
      const extra = positionals.slice(arity[1]).map((p) => `\`${p}\``).join(' ');
      throw new UsageError(`\`nightshift ${command}\` takes ${arity[1] === 0 ? 'no arguments' : `at most ${arity[1]} argument${arity[1] > 1 ? 's' : ''}`}, got ${extra} too. See \`nightshift ${command} --help\`.`);
    }
  }
  return { command, positionals, flags };
}

// Node's parser errors, said in our words (the option, what is wrong, what was meant).
function usageProblem(err: Error & { code?: string }, argv: string[]): string {
  const command = argv.find((a) => !a.startsWith('-'));
  const where = command && ALLOWED[command] ? ` for \`nightshift ${command}\`` : '';
  const known = command && ALLOWED[command] ? ALLOWED[command] : (Object.keys(OPTIONS) as string[]);
  const name = /'(-{1,2}[^' =]+)/.exec(err.message)?.[1] ?? '';
  if (err.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
    return `Unknown option \`${name}\`${where}.${didYouMean(name.replace(/^-+/, ''), known, (o) => `--${o}`)} See \`nightshift ${command && ALLOWED[command] ? `${command} ` : ''}--help\`.`;
  }
  if (err.code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
    const opt = name.replace(/^-+/, '');
    const def = (OPTIONS as Record<string, { type: string }>)[opt];
    return def?.type === 'boolean' ? `\`--${opt}\` takes no value${where}.` : `\`--${opt}\` needs a value${where}, as in \`--${opt} VALUE\`.`;
  }
  return `${err.message}. See \`nightshift --help\`.`;
}

function positional(positionals: string[], command: string, what: string): string {
  if (positionals.length !== 1) throw new UsageError(`Expected \`nightshift ${command} <${what}>\`, got ${positionals.length} argument(s). See \`nightshift ${command} --help\`.`);
  return positionals[0];
}

// NIGHTSHIFT_LOG_LEVEL: one of pino's levels. A bad value is ignored with a warning, never fatal:
// a typo in an env file must not stop every tick.
const LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];
export function logLevel(value: string | undefined): { level: string; warning: string | null } {
  if (value === undefined || value === '') return { level: 'info', warning: null };
  if (LEVELS.includes(value)) return { level: value, warning: null };
  return { level: 'info', warning: `Expected NIGHTSHIFT_LOG_LEVEL to be one of ${LEVELS.join(', ')}, got \`${value}\`: using info` };
}

export type MainDeps = {
  argv: string[]; env: NodeJS.ProcessEnv; cwd: string; stdout: (t: string) => void; stderr: (t: string) => void;
  // stderr is a terminal: human log lines and the live session line (never under journald or --json).
  stderrIsTTY?: boolean; stdoutIsTTY?: boolean; columns?: () => number;
};

// Runs a command; returns the exit code. Never calls process.exit itself.
export async function main(deps: MainDeps): Promise<number> {
  let redact = makeRedactor(secretValues(deps.env));
  // stderr is the journal: log lines and error text carry syslog priorities (logs/journal.ts).
  const journal = stderrIsJournal(deps.env.JOURNAL_STREAM);
  const io: Io = { out: (t) => deps.stdout(`${redact(t)}\n`), redact: (t) => redact(t), stdoutIsTTY: !!deps.stdoutIsTTY };
  let logger: Logger | null = null;
  try {
    const { command, positionals, flags } = parse(deps.argv);
    if (flags.version) return io.out(version()), EXIT.OK;
    if (!command) {
      io.out(MAIN_HELP);
      return flags.help ? EXIT.OK : EXIT.USAGE;
    }
    if (flags.help) return io.out(COMMAND_HELP[command] ?? MAIN_HELP), EXIT.OK;
    if (command === 'init') return await (await import('./commands/init.js')).initCommand(positionals, { remote: flags.remote }, { out: io.out, cwd: deps.cwd, env: deps.env });
    // Every command below sees the env file the units see (the hook needs no secrets).
    let env = deps.env;
    let envFile: EnvFileResult | null = null;
    if (command !== 'hook') {
      const { configPath } = await import('../daemon/config/config.js');
      ({ env, result: envFile } = loadEnvFile(envFilePath(flags['environment-file'], configPath(flags.config, deps.env, deps.cwd), deps.cwd), deps.env, !!flags['environment-file'], command !== 'doctor'));
      redact = makeRedactor(secretValues(env));
    }
    // doctor and alert must work with a broken or missing config: they read it leniently themselves.
    if (command === 'doctor' || command === 'alert') {
      const [{ configPath }, health] = await Promise.all([import('../daemon/config/config.js'), import('./commands/health.js')]);
      const file = configPath(flags.config, deps.env, deps.cwd);
      const hio = { out: io.out, redact, env, envFile, now: () => new Date(), level: logLevel(env.NIGHTSHIFT_LOG_LEVEL).level, journal };
      return command === 'doctor' ? await health.doctorCommand(file, flags, hio) : await health.alertCommand(file, flags.unit, hio);
    }
    // The command hook runs in an operator's own Claude Code: it needs no config, and always exits 0.
    if (command === 'hook') {
      const { configPath, loadConfig } = await import('../daemon/config/config.js');
      return await (await import('../sessions/hook-command.js')).hookCommand(positionals, {
        stdin: process.stdin, stdout: deps.stdout, stderr: deps.stderr, cwd: deps.cwd, redact,
        loadRoots: async () => {
          const c = loadConfig(configPath(flags.config, deps.env, deps.cwd));
          return { vault: c.vault, extraDirs: c.hooks.extra_dirs };
        },
      });
    }
    const [{ configPath, loadConfig }, { createLogger }] = await Promise.all([import('../daemon/config/config.js'), import('../logs/logger.js')]);
    const config = loadConfig(configPath(flags.config, deps.env, deps.cwd));
    const level = logLevel(env.NIGHTSHIFT_LOG_LEVEL);
    // `systemd install` runs as root: it must not make the log folder, or today's file, root's.
    const tty = !!deps.stderrIsTTY && !journal && !flags.json;
    const live = tty && (command === 'run' || command === 'tick') ? new LiveLine(deps.stderr, deps.columns) : null;
    logger = createLogger({
      redact, logDir: command === 'systemd' ? null : config.log_dir, timezone: config.budget.timezone, level: level.level, journal,
      human: tty ? { color: !deps.env.NO_COLOR, live } : undefined,
    });
    io.live = live;
    if (level.warning) logger.warn({ event: 'bad_log_level' }, level.warning);
    if (envFile?.problems.length) logger.warn({ event: 'env_file_lines', file: envFile.file, problems: envFile.problems }, `${envFile.file}: lines skipped: ${envFile.problems.join('; ')}`);
    switch (command) {
      case 'run':
        return await cmdRun(config, positional(positionals, 'run', 'agent'), flags, io, logger, env);
      case 'agents':
        return await cmdAgents(config, flags, io);
      case 'budget':
        return await (await import('./commands/budget.js')).budgetCommand(config, flags, io, logger);
      case 'sessions':
        return await (await import('./commands/sessions.js')).sessionsCommand(config, flags, io, logger);
      case 'show':
        return await (await import('./commands/sessions.js')).showCommand(config, positional(positionals, 'show', 'session-id'), flags, io, logger);
      case 'logs': {
        const { logsCommand } = await import('./commands/logs-view.js');
        const human = !!deps.stdoutIsTTY;
        return await withStopSignal(logger, 'stopping', (signal) => logsCommand(config, positionals, flags, { out: io.out, human, color: human && !deps.env.NO_COLOR, logger: logger!, signal }));
      }
      case 'tick':
        return await cmdTick(config, flags, io, logger, env);
      case 'next':
        return await cmdNext(config, flags, io, logger);
      case 'status':
        return await cmdStatus(config, flags, io, logger);
      case 'lock':
        return await cmdLock(config, positionals, flags, io, logger, env);
      case 'daemon':
        return await cmdDaemon(config, logger, io, env);
      case 'systemd':
        return await (await import('./commands/systemd.js')).systemdCommand(config, positionals, flags, { out: io.out, err: deps.stderr, redact: io.redact, env });
      case 'memory':
        return await (await import('./commands/memory-cli.js')).memoryCommand(config, positionals, flags, {
          out: io.out, err: deps.stderr, stdin: process.stdin, stderrIsTTY: !!process.stderr.isTTY, stdinIsTTY: !!process.stdin.isTTY, env: env, logger,
        });
      case 'state':
        return await (await import('../sessions/state-command.js')).stateCommand(config, flags, io, logger);
      case 'anneal':
        return await (await import('../sessions/anneal-command.js')).annealCommand(config, flags, io);
      case 'mcp': {
        const { mcpCommand } = await import('./commands/memory-cli.js');
        const log = logger;
        return await withStopSignal(log, 'stopping the memory server', (signal) =>
          mcpCommand(config, { stdin: process.stdin, stdout: process.stdout, env: env, logger: log, version: version(), signal }));
      }
    }
    throw new UsageError(`Unknown command \`${command}\``);
  } catch (err) {
    if (err instanceof NightshiftError) {
      deps.stderr(prefixLines(`${redact(err instanceof ConfigError ? err.message : `nightshift: ${err.message}`)}\n`, err.exitCode === EXIT.REFUSED ? 4 : 3, journal));
      if (err.exitCode === EXIT.REFUSED) logger?.warn({ event: 'refused', code: err.code }, err.message);
      if (err.exitCode === EXIT.INTERNAL) logger?.error({ event: 'internal_error', err }, err.message);
      return err.exitCode;
    }
    // state_dir, log_dir or another of our paths the service user cannot use: who owns it and the fix.
    const denied = errnoAccessProblem(err, '');
    if (denied) {
      deps.stderr(prefixLines(`nightshift: ${redact(denied)}\n`, 3, journal));
      logger?.error({ event: 'permission_denied', path: (err as NodeJS.ErrnoException).path }, denied);
      return EXIT.NOPERM;
    }
    deps.stderr(prefixLines(`nightshift: internal error: ${redact(String((err as Error)?.stack ?? err))}\n`, 3, journal));
    logger?.error({ err }, 'internal error');
    return EXIT.INTERNAL;
  }
}

// SIGTERM (systemd stopping us), SIGINT, or SIGHUP (a closed terminal) ends the session the same
// way a watchdog does, and the ledger is still settled before we exit. While a handler is
// installed no signal kills us outright (execa's exit hook re-raises only when it is alone).
const STOP_SIGNALS = ['SIGTERM', 'SIGINT', 'SIGHUP'] as const;
async function withStopSignal<T>(logger: Logger, what: string, fn: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  const onSignal = (sig: NodeJS.Signals) => {
    logger.warn({ event: 'signal', signal: sig }, `received ${sig}: ${what}`);
    controller.abort(sig);
  };
  for (const sig of STOP_SIGNALS) process.on(sig, onSignal);
  try {
    return await fn(controller.signal);
  } finally {
    for (const sig of STOP_SIGNALS) process.off(sig, onSignal);
  }
}

function runDeps(io: Io, logger: Logger, env: NodeJS.ProcessEnv, signal?: AbortSignal): RunDeps {
  return {
    env,
    logger,
    redact: io.redact,
    now: () => new Date(),
    signal,
    live: io.live ?? null,
  };
}

async function cmdRun(config: Config, name: string, flags: Flags, io: Io, logger: Logger, env: NodeJS.ProcessEnv): Promise<number> {
  const [{ loadAgent }, { exitCodeOf, runAgent }] = await Promise.all([import('../daemon/config/agents.js'), import('../daemon/tick/run.js')]);
  const agent = loadAgent(config, name);
  const r = await withStopSignal(logger, 'ending the session', (signal) => runAgent(config, agent, { force: !!flags.force }, runDeps(io, logger, env, signal)));
  printRecord(io, r.session, flags.json);
  if (!flags.json && (r.git.error || r.git.committed)) io.out(`git       ${gitLine(r.git)}`);
  return exitCodeOf(r);
}

// A skip (nothing due, a limit, locked) exits 0; a failed session exits 1 so OnFailure= fires.
async function cmdTick(config: Config, flags: Flags, io: Io, logger: Logger, env: NodeJS.ProcessEnv): Promise<number> {
  const [{ tick }, { exitCodeOf }] = await Promise.all([import('../daemon/tick/tick.js'), import('../daemon/tick/run.js')]);
  const r = await withStopSignal(logger, 'ending the session', (signal) => tick(config, runDeps(io, logger, env, signal)));
  if (flags.json) io.out(JSON.stringify(r));
  else if (r.action === 'skip') io.out(`skip: ${r.reason}`);
  else if (r.action === 'dream') io.out(`dream: ${r.dream?.ok ? 'ok' : 'failed'} (${r.reason})${r.dream?.error ? `: ${r.dream.error}` : ''}`);
  else {
    printRecord(io, r.session!, false);
    io.out(`git       ${gitLine(r.git)}`);
    if (r.late) io.out(`late      ${r.late.replace(/^late: /, '')}`);
  }
  return exitCodeOf(r);
}

function gitLine(g: GitReport): string {
  const parts = [g.pulled ? 'pulled' : 'not pulled', g.committed ? 'committed' : 'nothing committed', g.pushed ? 'pushed' : 'not pushed'];
  if (g.branch) parts.push(`branch ${g.branch}`);
  return `${parts.join(', ')}${g.error ? ` (${g.error})` : ''}`;
}

// `2026-12-01 14:00` in the time zone (the budget's: the one rules are written in).
function localStamp(t: Date, timezone: string): string {
  return new Intl.DateTimeFormat('sv-SE', { timeZone: timezone, year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).format(t);
}

const roughly = (ms: number) => {
  const m = Math.ceil(ms / 60_000);
  return m < 60 ? `${m}m` : m < 48 * 60 ? `${Math.floor(m / 60)}h${m % 60 ? ` ${m % 60}m` : ''}` : `${Math.round(m / 1440)}d`;
};

async function cmdNext(config: Config, flags: Flags, io: Io, logger: Logger): Promise<number> {
  const at = flags.at === undefined ? new Date() : new Date(flags.at);
  if (Number.isNaN(at.getTime())) throw new UsageError(`Expected --at as an ISO time like 2026-12-01T15:00:00Z, got \`${flags.at}\``);
  const [{ loadAgents }, { explain }, { nextDueByAgent }] = await Promise.all([import('../daemon/config/agents.js'), import('../daemon/tick/tick.js'), import('../daemon/schedule/next-due.js')]);
  const agents = loadAgents(config);
  const tz = config.budget.timezone;
  const { d, due } = await withLedger(config, logger, (l) => ({
    d: explain(config, agents, l, at),
    due: nextDueByAgent(config.dispatch, l.history(dayOf(at, tz)), Object.fromEntries(agents.map((a) => [a.name, { maxRunsPerDay: a.maxRunsPerDay }])), at, tz),
  }));
  const iso = (t: Date | null | undefined) => (t ? t.toISOString() : null);
  // Every agent, those no rule names too (they run only by `nightshift run`).
  const nextDue = Object.fromEntries(agents.map((a) => [a.name, iso(due.agents[a.name])]));
  if (flags.json) io.out(JSON.stringify({ ...d, rules: d.rules.map((r) => ({ ...r, next_due: iso(due.rules[r.index]) })), next_due: nextDue }));
  else {
    const lines = [d.agent ? `next: ${d.agent} (${d.reason})` : `next: nothing (${d.reason})`];
    for (const r of d.rules) lines.push(`  [${r.index}] ${r.agent.padEnd(16)} ${r.matched ? 'due' : r.why}`);
    for (const [agent, h] of Object.entries(d.holds)) if (!d.rules.some((r) => r.agent === agent)) lines.push(`  held: ${agent} until ${h.until} (${h.reason})`);
    lines.push(`next due (${tz}):`);
    for (const a of agents) {
      const t = due.agents[a.name];
      const when = t === undefined ? 'no dispatch rule (run it with nightshift run)' : t === null ? 'not within 8 days' : t.getTime() === at.getTime() ? 'now' : `${localStamp(t, tz)} (in ${roughly(t.getTime() - at.getTime())})`;
      lines.push(`  ${a.name.padEnd(16)} ${when}`);
    }
    io.out(lines.join('\n'));
  }
  return EXIT.OK;
}

async function cmdStatus(config: Config, flags: Flags, io: Io, logger: Logger): Promise<number> {
  const { status } = await import('../daemon/tick/tick.js');
  const now = new Date();
  const s = await withLedger(config, logger, (ledger) => status(config, ledger, now));
  if (flags.json) io.out(JSON.stringify(s));
  else {
    const age = s.last_ok_at ? `${Math.round((now.getTime() - Date.parse(s.last_ok_at)) / 3_600_000)}h ago (${s.last_ok_at})` : 'never';
    const lock = (l: LockOwner | null) => (l ? `held by pid ${l.pid} since ${l.since}` : 'free');
    io.out([
      `budget    ${s.budget.sessions} of ${s.budget.max_sessions} sessions, ${money(s.budget.cost_usd)} of ${money(s.budget.max_usd)} (${s.budget.date})`,
      `next      ${s.next.agent ?? 'nothing'} (${s.next.reason})`,
      ...Object.entries(s.holds).map(([agent, h]) => `held      ${agent} until ${h.until}: ${h.reason}`),
      `last ok   ${age}`,
      `run lock  ${lock(s.locks.run)}`,
      `git lock  ${lock(s.locks.git)}`,
      `unpushed  ${s.unpushed ?? 'n/a'}`,
      ...s.last_sessions.map((r) => `  ${r.id}  ${r.outcome.padEnd(12)} ${money(r.cost_usd)}${r.memory === 'unavailable' ? '  (no memory tools)' : ''}`),
    ].join('\n'));
  }
  return EXIT.OK;
}

// `nightshift lock -- CMD...`: CMD runs holding the host-wide git lock (the flock(1) habit).
async function cmdLock(config: Config, positionals: string[], flags: Flags, io: Io, logger: Logger, env: NodeJS.ProcessEnv): Promise<number> {
  if (!positionals.length) throw new UsageError('Expected `nightshift lock [--timeout 120s] -- CMD...`, got no command');
  const timeout = flags.timeout === undefined ? config.git.lock_timeout : parseDuration(flags.timeout);
  if (timeout === null) throw new UsageError(`Expected --timeout as a duration like \`90s\`, got \`${flags.timeout}\``);
  const { acquireLock, lockOwner } = await import('../daemon/lock.js');
  const held = await acquireLock(config.git.lock_file, { timeoutMs: timeout, purpose: io.redact(`lock: ${positionals.join(' ')}`).slice(0, 200), logger });
  if (!held) {
    const owner = lockOwner(config.git.lock_file);
    throw new LockedError(`git lock ${config.git.lock_file} not obtained within ${formatDuration(timeout)}${owner ? ` (held by pid ${owner.pid} since ${owner.since})` : ''}`);
  }
  try {
    const { execa } = await import('execa');
    const child = execa(positionals[0], positionals.slice(1), { stdio: 'inherit', reject: false, env, extendEnv: false });
    // A stop signal goes to the command; the lock is released once it has ended.
    const r = await withStopSignal(logger, 'passing it on to the locked command', async (signal) => {
      signal.addEventListener('abort', () => child.kill(signal.reason as NodeJS.Signals), { once: true });
      return child;
    });
    if (r.exitCode === undefined && !r.signal) throw new UsageError(`cannot run \`${positionals[0]}\`: ${r.shortMessage ?? 'not found'}`);
    return r.exitCode ?? 128 + (r.signal === 'SIGKILL' ? 9 : 15);
  } finally {
    await held.release();
  }
}

async function cmdDaemon(config: Config, logger: Logger, io: Io, env: NodeJS.ProcessEnv): Promise<number> {
  const { runDaemon } = await import('../daemon/tick/daemon.js');
  return withStopSignal(logger, 'stopping the daemon', (stopSignal) => runDaemon(config, { ...runDeps(io, logger, env), stopSignal }));
}

async function cmdAgents(config: Config, flags: Flags, io: Io): Promise<number> {
  const { loadAgents } = await import('../daemon/config/agents.js');
  const agents = loadAgents(config);
  const rows = agents.map((a) => ({
    name: a.name, description: a.description, model: a.model, max_turns: a.maxTurns, timeout_ms: a.timeoutMs,
    idle_timeout_ms: a.idleTimeoutMs, allowed_tools: a.allowedTools, max_runs_per_day: a.maxRunsPerDay, file: a.file,
  }));
  if (flags.json) io.out(JSON.stringify(rows));
  else if (!rows.length) io.out(`no agents in ${config.agents_dir}`);
  else io.out(agents.map((a) => `${a.name.padEnd(16)} ${a.model.padEnd(8)} ${String(a.maxTurns).padStart(3)} turns  ${formatDuration(a.timeoutMs).padEnd(5)} ${a.description}`).join('\n'));
  return EXIT.OK;
}
