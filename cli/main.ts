// The CLI entry: parses arguments, loads the one command asked for, gives it what its stage needs
// (nothing; the env file; config and logger), and is the one place that maps errors to exit codes.
// Start-up: only light modules load statically, so --help and --version answer fast; config, the
// logger, the ledger and the session machinery load on the path that needs them.
import { version } from '../core/version.js';
import type { Logger } from '../logs/logger.js';
import { makeRedactor, secretValues } from '../core/redact.js';
import { prefixLines, stderrIsJournal } from '../logs/journal.js';
import { LiveLine } from '../logs/live-line.js';
import { terminalText } from '../logs/terminal-text.js';
import { ConfigError, EXIT, NightshiftError } from '../core/errors.js';
import { errnoAccessProblem } from '../core/file-access.js';
import { ENV_FILE_VAR, envFilePath, loadEnvFile } from '../config/env-file.js';
import { parse } from './args.js';
import type { Command, Io, MainDeps } from './context.js';
import { MAIN_HELP } from './help.js';
import { logLevel } from './log-level.js';
import { mark } from '../core/profile.js';

export type { MainDeps } from './context.js';

// One module per command, loaded only when it is the one asked for.
const COMMANDS: Record<string, () => Promise<Command>> = {
  init: () => import('./commands/init.js'),
  run: () => import('./commands/run.js'),
  agents: () => import('./commands/agents.js'),
  budget: () => import('./commands/budget.js'),
  sessions: () => import('./commands/sessions.js'),
  show: () => import('./commands/show.js'),
  logs: () => import('./commands/logs.js'),
  tick: () => import('./commands/tick.js'),
  fires: () => import('./commands/fires.js'),
  next: () => import('./commands/next.js'),
  status: () => import('./commands/status.js'),
  lock: () => import('./commands/lock.js'),
  daemon: () => import('./commands/daemon.js'),
  systemd: () => import('./commands/systemd.js'),
  alert: () => import('./commands/alert.js'),
  doctor: () => import('./commands/doctor.js'),
  memory: () => import('./commands/memory.js'),
  mcp: () => import('./commands/mcp.js'),
  state: () => import('./commands/state.js'),
  anneal: () => import('./commands/anneal.js'),
  hook: () => import('./commands/hook.js'),
  rehearse: () => import('./commands/rehearse.js'),
  hold: () => import('./commands/hold.js'),
  db: () => import('./commands/db.js'),
  web: () => import('./commands/web.js'),
};

// Runs a command; returns the exit code. Never calls process.exit itself. What the command left to
// finish after its output (a fire's trace on its way to the collector, bounded by
// telemetry.flush_timeout) is awaited here, once the output and the exit code are decided.
export async function main(deps: MainDeps): Promise<number> {
  const left = new Set<Promise<void>>();
  const afterward = (work: Promise<void>) => {
    const p = work.catch(() => {}).finally(() => left.delete(p));
    left.add(p);
  };
  const code = await command(deps, afterward);
  while (left.size) await Promise.all([...left]);
  return code;
}

async function command(deps: MainDeps, afterward: (work: Promise<void>) => void): Promise<number> {
  let redact = makeRedactor(secretValues(deps.env));
  // stderr is the journal: log lines and error text carry syslog priorities (logs/journal.ts).
  const journal = stderrIsJournal(deps.env.JOURNAL_STREAM);
  // Whatever a command prints may hold a session's text: escaped at this one door as well as where
  // it is made (a block: lines and tabs kept; JSON stays JSON, see logs/terminal-text.ts).
  const io: Io = {
    out: (t) => deps.stdout(`${terminalText(redact(t), { block: true })}\n`),
    outPainted: (t) => deps.stdout(`${redact(t)}\n`),
    redact: (t) => redact(t),
    stdoutIsTTY: !!deps.stdoutIsTTY,
    afterward,
  };
  let logger: Logger | null = null;
  // The logger writes human lines to this terminal: a refusal is one of them, not a second copy.
  let humanLogger = false;
  try {
    const { command, positionals, flags } = parse(deps.argv);
    if (flags.version) return io.out(version()), EXIT.OK;
    if (!command) {
      io.out(MAIN_HELP);
      return flags.help ? EXIT.OK : EXIT.USAGE;
    }
    const load = Object.hasOwn(COMMANDS, command) ? COMMANDS[command] : null;
    if (flags.help) return io.out(load ? (await load()).help : MAIN_HELP), EXIT.OK;
    mark('main');
    const cmd = await load!();
    mark('command_loaded');
    const bare = { positionals, flags, io, deps };
    if (cmd.stage === 'full') cmd.early?.({ flags, env: deps.env });
    if (cmd.stage === 'bare') return await cmd.run(bare);
    // Every command below sees the env file the units see.
    const { configPath, loadConfigCached } = await import('../config/config-file.js');
    const configFile = configPath(flags.config, deps.env, deps.cwd);
    const { env: read, result: envFile } = loadEnvFile(envFilePath(flags['environment-file'], configFile, deps.cwd), deps.env, !!flags['environment-file'], !(cmd.stage === 'env' && cmd.lenientEnvFile));
    // The file read is hidden from every session, wherever it lies (sessions/wall/guest.ts).
    const env = envFile ? { ...read, [ENV_FILE_VAR]: envFile.file } : read;
    redact = makeRedactor(secretValues(env));
    const withEnv = { ...bare, env, envFile, configFile, journal };
    if (cmd.stage === 'env') return await cmd.run(withEnv);
    const [config, { createLogger }] = await Promise.all([loadConfigCached(configFile), import('../logs/logger.js')]);
    mark('config_loaded');
    const level = logLevel(env.NIGHTSHIFT_LOG_LEVEL);
    const tty = !!deps.stderrIsTTY && !journal && !flags.json;
    const live = tty && cmd.liveLine ? new LiveLine(deps.stderr, deps.columns) : null;
    logger = createLogger({
      redact, logDir: cmd.noLogFile ? null : config.log_dir, timezone: config.budget.timezone, level: level.level, journal,
      human: tty ? { color: !deps.env.NO_COLOR, live } : undefined,
    });
    io.live = live;
    humanLogger = tty;
    if (level.warning) logger.warn({ event: 'bad_log_level' }, level.warning);
    if (envFile?.problems.length) logger.warn({ event: 'env_file_lines', file: envFile.file, problems: envFile.problems }, `${envFile.file}: lines skipped: ${envFile.problems.join('; ')}`);
    if (envFile?.loaded.length) for (const w of await (await import('../config/name-warnings.js')).envFileTypos(envFile, config)) logger.warn({ event: 'env_file_unknown', file: envFile.file }, w);
    mark('logger');
    try {
      return await cmd.run({ ...withEnv, config, logger });
    } finally {
      mark('command_ran');
    }
  } catch (err) {
    if (err instanceof NightshiftError) {
      if (err.exitCode === EXIT.REFUSED && logger && humanLogger) {
        logger.warn({ event: 'refused', code: err.code }, err.message);
        return err.exitCode;
      }
      deps.stderr(prefixLines(`${terminalText(redact(err instanceof ConfigError ? err.message : `nightshift: ${err.message}`), { block: true })}\n`, err.exitCode === EXIT.REFUSED ? 4 : 3, journal));
      if (err.exitCode === EXIT.REFUSED) logger?.warn({ event: 'refused', code: err.code }, err.message);
      if (err.exitCode === EXIT.INTERNAL) logger?.error({ event: 'internal_error', err }, err.message);
      return err.exitCode;
    }
    // state_dir, log_dir or another of our paths the service user cannot use: who owns it and the fix.
    const denied = errnoAccessProblem(err, '');
    if (denied) {
      deps.stderr(prefixLines(`nightshift: ${terminalText(redact(denied), { block: true })}\n`, 3, journal));
      logger?.error({ event: 'permission_denied', path: (err as NodeJS.ErrnoException).path }, denied);
      return EXIT.NOPERM;
    }
    deps.stderr(prefixLines(`nightshift: internal error: ${terminalText(redact(String((err as Error)?.stack ?? err)), { block: true })}\n`, 3, journal));
    logger?.error({ err }, 'internal error');
    return EXIT.INTERNAL;
  }
}
