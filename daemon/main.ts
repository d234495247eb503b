// The CLI entry: parses arguments, wires production dependencies, runs a command, and is the one
// place that maps errors to exit codes and calls process.exit.
import { parseArgs } from 'node:util';
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dayOf } from '../budget/day.js';
import { Ledger } from '../budget/ledger.js';
import { createLogger, type Logger } from '../logs/logger.js';
import { makeRedactor, secretValues, type Redactor } from '../logs/redact.js';
import { loadAgent, loadAgents } from './agents.js';
import { configPath, loadConfig, type Config } from './config.js';
import { formatDuration } from './duration.js';
import { ConfigError, EXIT, NightshiftError, UsageError } from './errors.js';
import { COMMAND_HELP, MAIN_HELP } from './help.js';
import { reconcile } from './reconcile.js';
import { ledgerFile, runAgent } from './run.js';
import { toRecord, type SessionRecord } from './session-record.js';

type Io = { out: (text: string) => void; redact: Redactor };
type Flags = { config?: string; json?: boolean; force?: boolean; date?: string; limit?: string; help?: boolean; version?: boolean };

const OPTIONS = {
  config: { type: 'string' },
  json: { type: 'boolean' },
  force: { type: 'boolean' },
  date: { type: 'string' },
  limit: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean', short: 'v' },
} as const;

const ALLOWED: Record<string, Array<keyof Flags>> = {
  run: ['config', 'json', 'force'],
  agents: ['config', 'json'],
  budget: ['config', 'json', 'date'],
  sessions: ['config', 'json', 'limit'],
  show: ['config', 'json'],
};

function version(): string {
  const pkg = JSON.parse(fs.readFileSync(fileURLToPath(new URL('../../package.json', import.meta.url)), 'utf8'));
  return pkg.version;
}

function parse(argv: string[]): { command: string | null; positionals: string[]; flags: Flags } {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
  } catch (err) {
    throw new UsageError(`${(err as Error).message}. See \`nightshift --help\`.`);
  }
  const [command = null, ...positionals] = parsed.positionals;
  const flags = parsed.values as Flags;
  if (command && !flags.help) {
    const allowed = ALLOWED[command];
    if (!allowed) throw new UsageError(`Unknown command \`${command}\`. Commands: ${Object.keys(ALLOWED).join(', ')}. See \`nightshift --help\`.`);
    for (const k of Object.keys(flags) as Array<keyof Flags>) {
      if (flags[k] !== undefined && !allowed.includes(k)) throw new UsageError(`\`${command}\` does not take --${k}. See \`nightshift ${command} --help\`.`);
    }
  }
  return { command, positionals, flags };
}

function positional(positionals: string[], command: string, what: string): string {
  if (positionals.length !== 1) throw new UsageError(`Expected \`nightshift ${command} <${what}>\`, got ${positionals.length} argument(s). See \`nightshift ${command} --help\`.`);
  return positionals[0];
}

const money = (usd: number) => `$${usd.toFixed(4)}`;

function printRecord(io: Io, r: SessionRecord, json: boolean | undefined): void {
  if (json) return io.out(JSON.stringify(r));
  const lines = [
    `session   ${r.id}`,
    `agent     ${r.agent}`,
    `outcome   ${r.outcome}`,
    `cost      ${money(r.cost_usd)}${r.cost_estimated ? ' (estimated)' : ''}`,
    `turns     ${r.turns}`,
    `duration  ${r.duration_ms === null ? '-' : `${(r.duration_ms / 1000).toFixed(1)}s`}`,
    `started   ${r.started_at}`,
  ];
  if (r.error) lines.push(`error     ${r.error}`);
  if (r.result) lines.push(`result    ${r.result.length > 400 ? `${r.result.slice(0, 400)}…` : r.result}`);
  if (r.transcript) lines.push(`transcript ${r.transcript}`);
  io.out(lines.join('\n'));
}

export type MainDeps = { argv: string[]; env: NodeJS.ProcessEnv; cwd: string; stdout: (t: string) => void; stderr: (t: string) => void };

// Runs a command; returns the exit code. Never calls process.exit itself.
export async function main(deps: MainDeps): Promise<number> {
  const redact = makeRedactor(secretValues(deps.env));
  const io: Io = { out: (t) => deps.stdout(`${redact(t)}\n`), redact };
  let logger: Logger | null = null;
  try {
    const { command, positionals, flags } = parse(deps.argv);
    if (flags.version) return io.out(version()), EXIT.OK;
    if (!command) {
      io.out(MAIN_HELP);
      return flags.help ? EXIT.OK : EXIT.USAGE;
    }
    if (flags.help) return io.out(COMMAND_HELP[command] ?? MAIN_HELP), EXIT.OK;
    const config = loadConfig(configPath(flags.config, deps.env, deps.cwd));
    logger = createLogger({ redact, logDir: config.log_dir, timezone: config.budget.timezone, level: deps.env.NIGHTSHIFT_LOG_LEVEL });
    switch (command) {
      case 'run':
        return await cmdRun(config, positional(positionals, 'run', 'agent'), flags, io, logger, deps.env);
      case 'agents':
        return cmdAgents(config, flags, io);
      case 'budget':
        return await cmdBudget(config, flags, io, logger);
      case 'sessions':
        return await cmdSessions(config, flags, io, logger);
      case 'show':
        return await cmdShow(config, positional(positionals, 'show', 'session-id'), flags, io, logger);
    }
    throw new UsageError(`Unknown command \`${command}\``);
  } catch (err) {
    if (err instanceof NightshiftError) {
      deps.stderr(`${redact(err instanceof ConfigError ? err.message : `nightshift: ${err.message}`)}\n`);
      if (!(err instanceof UsageError) && !(err instanceof ConfigError)) logger?.warn({ event: 'refused', code: err.code }, err.message);
      if (err.exitCode === EXIT.INTERNAL) logger?.error({ err }, 'internal error');
      return err.exitCode;
    }
    deps.stderr(`nightshift: internal error: ${redact(String((err as Error)?.stack ?? err))}\n`);
    logger?.error({ err }, 'internal error');
    return EXIT.INTERNAL;
  }
}

async function cmdRun(config: Config, name: string, flags: Flags, io: Io, logger: Logger, env: NodeJS.ProcessEnv): Promise<number> {
  const agent = loadAgent(config, name);
  // SIGTERM (systemd stopping us) or SIGINT ends the session the same way a watchdog does, and
  // the ledger is still settled before we exit.
  const controller = new AbortController();
  const onSignal = (sig: NodeJS.Signals) => {
    logger.warn({ event: 'signal', signal: sig }, `received ${sig}: ending the session`);
    controller.abort(sig);
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  try {
    const record = await runAgent(config, agent, { force: !!flags.force }, {
      env,
      logger,
      redact: io.redact,
      now: () => new Date(),
      signal: controller.signal,
      // Test-only negative control: a ledger that charges at the end (see budget/ledger.ts).
      chargeOn: env.NIGHTSHIFT_TEST_CHARGE_ON === 'settle' ? 'settle' : 'open',
    });
    printRecord(io, record, flags.json);
    return record.exit_code;
  } finally {
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
  }
}

function cmdAgents(config: Config, flags: Flags, io: Io): number {
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

// Every start settles what a dead supervisor left open before it reads the ledger.
async function withLedger<T>(config: Config, logger: Logger, fn: (l: Ledger) => T): Promise<T> {
  const ledger = Ledger.open(ledgerFile(config));
  try {
    await reconcile(ledger, { logger, now: () => new Date() });
    return fn(ledger);
  } finally {
    ledger.close();
  }
}

// `budget --json`: the shape other tools read.
export function budgetReport(config: Config, ledger: Ledger, date: string) {
  const t = ledger.dayTotals(date);
  const by_agent: Record<string, { sessions: number; cost_usd: number }> = {};
  for (const [name, v] of Object.entries(t.byAgent)) by_agent[name] = { sessions: v.sessions, cost_usd: v.costUsd };
  return { date, sessions: t.sessions, max_sessions: config.budget.max_sessions_per_day, cost_usd: t.costUsd, max_usd: config.budget.max_usd_per_day, by_agent };
}

async function cmdBudget(config: Config, flags: Flags, io: Io, logger: Logger): Promise<number> {
  if (flags.date !== undefined && !/^\d{4}-\d{2}-\d{2}$/.test(flags.date)) throw new UsageError(`Expected --date as YYYY-MM-DD, got \`${flags.date}\``);
  const date = flags.date ?? dayOf(new Date(), config.budget.timezone);
  const b = await withLedger(config, logger, (l) => budgetReport(config, l, date));
  if (flags.json) io.out(JSON.stringify(b));
  else {
    const lines = [`${b.date} (${config.budget.timezone})`, `sessions  ${b.sessions} of ${b.max_sessions}`, `spent     ${money(b.cost_usd)} of $${b.max_usd}`];
    for (const [name, v] of Object.entries(b.by_agent)) lines.push(`  ${name.padEnd(16)} ${v.sessions} session(s)  ${money(v.cost_usd)}`);
    io.out(lines.join('\n'));
  }
  return EXIT.OK;
}

async function cmdSessions(config: Config, flags: Flags, io: Io, logger: Logger): Promise<number> {
  const limit = flags.limit === undefined ? 20 : Number(flags.limit);
  if (!Number.isInteger(limit) || limit < 1) throw new UsageError(`Expected --limit to be a whole number above 0, got \`${flags.limit}\``);
  const rows = (await withLedger(config, logger, (l) => l.recent(limit))).map(toRecord);
  if (flags.json) io.out(JSON.stringify(rows));
  else if (!rows.length) io.out('no sessions yet');
  else io.out(rows.map((r) => `${r.id}  ${r.outcome.padEnd(12)} ${money(r.cost_usd)}${r.cost_estimated ? '~' : ' '} ${String(r.turns).padStart(3)} turns`).join('\n'));
  return EXIT.OK;
}

async function cmdShow(config: Config, id: string, flags: Flags, io: Io, logger: Logger): Promise<number> {
  const row = await withLedger(config, logger, (l) => l.get(id));
  if (!row) throw new UsageError(`No session \`${id}\` in ${ledgerFile(config)}`);
  printRecord(io, toRecord(row), flags.json);
  return EXIT.OK;
}
