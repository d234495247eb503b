// `nightshift doctor` and `nightshift alert`: the two commands that must work when everything else
// is broken. They read the config leniently (config/config-fallback.ts), log to stderr even when the
// log folder cannot be made, take the webhook from the environment, and say what they could not read.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import { createLogger, type Logger } from '../../logs/logger.js';
import type { Redactor } from '../../core/redact.js';
import { deliver, reportSettings, type Delivery } from '../../report/deliver.js';
import { doctorReport, unitReport } from '../../report/embed.js';
import { loadConfigLenient, type LenientConfig } from '../../config/config-fallback.js';
import { runDoctor, type Check } from '../../daemon/health/doctor.js';
import { EXIT, UsageError } from '../../core/errors.js';
import { applyFixes } from '../../daemon/health/doctor-setup.js';
import { readableByOthers, type EnvFileResult } from '../../config/env-file.js';

// tableAtTerminal: doctor's table goes to a terminal, which then needs no log line per check.
export type HealthIo = { out: (t: string) => void; redact: Redactor; env: NodeJS.ProcessEnv; envFile?: EnvFileResult | null; now: () => Date; level: string; journal: boolean; human?: { color: boolean }; tableAtTerminal?: boolean; timerFile?: string };

// `fileOnly`: a logger for the daily file alone (stderr gets nothing), or the logger itself when
// the table is not at a terminal.
function open(file: string, io: HealthIo): { l: LenientConfig; logger: Logger; fileOnly: Logger; problems: string[] } {
  const l = loadConfigLenient(file);
  const problems = [...l.problems];
  const base = { redact: io.redact, timezone: l.config.budget.timezone, level: io.level, journal: io.journal, human: io.human };
  // No config file at all: no log folder is made beside where it should have been.
  let logDir = fs.existsSync(file) ? l.config.log_dir : null;
  let logger: Logger;
  try {
    logger = createLogger({ ...base, logDir });
  } catch (err) {
    logger = createLogger(base);
    logDir = null;
    problems.push(`log_dir ${l.config.log_dir}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message} (logging to stderr only)`);
  }
  const fileOnly = io.tableAtTerminal ? createLogger({ ...base, journal: false, human: undefined, stderr: { write: () => {} }, logDir }) : logger;
  if (l.unreadable) logger.warn({ event: 'config_fallback', problems }, `${l.unreadable}: the checks that need it are skipped: ${problems.join('; ')}`);
  else if (problems.length) logger.warn({ event: 'config_fallback', problems }, `could not read all of the config; using defaults for the rest: ${problems.join('; ')}`);
  return { l, logger, fileOnly, problems };
}

const deliveryLine = (d: Delivery) =>
  !d.configured ? 'not sent: neither DISCORD_WEBHOOK_URL nor NIGHTSHIFT_WEBHOOK_URL is set' : d.sent && !d.pending ? 'sent' : d.queued || d.pending ? `queued (${d.pending} waiting in the outbox)` : `not sent: ${d.error ?? 'already queued before'}`;

// nightshift-alert.sh (deploy/systemd) names a file in NIGHTSHIFT_REPORTED: marked once this
// command has reported (or had nothing to report), it does not post its own plain alarm.
function markReported(env: NodeJS.ProcessEnv): void {
  if (!env.NIGHTSHIFT_REPORTED) return;
  try {
    fs.writeFileSync(env.NIGHTSHIFT_REPORTED, 'reported\n', { mode: 0o600 });
  } catch {
    // the script then sends its plain alarm too: a repeat, never a silence
  }
}

const MARK = { ok: 'ok  ', warn: 'WARN', fail: 'FAIL', skip: 'skip' } as const;

// Pure: a timer that reaches no rule is a standing fact of the config, not an event: while it is
// all that fails, the watch reports it once (the outbox dedupes on the key), not every hour.
export function standingKey(failing: Check[]): string | undefined {
  if (!failing.length || !failing.every((c) => c.name === 'schedule')) return undefined;
  return `doctor:schedule:${createHash('sha256').update(failing.map((c) => c.detail).join('\n')).digest('hex').slice(0, 16)}`;
}

export async function doctorCommand(file: string, flags: { json?: boolean; alert?: boolean; fix?: boolean }, io: HealthIo): Promise<number> {
  const { l, logger, fileOnly } = open(file, io);
  // --fix first, so the checks show what is left.
  const fixed = flags.fix ? applyFixes(l.config, io.envFile ?? null) : [];
  let envFile = io.envFile ?? null;
  if (envFile?.insecure && !readableByOthers(fs.statSync(envFile.file).mode)) envFile = { ...envFile, insecure: null };
  for (const f of fixed) logger.info({ event: 'doctor_fix', fix: f }, `doctor --fix: ${f}`);
  const deps = { env: io.env, logger, redact: io.redact, now: io.now, envFile, timerFile: io.timerFile };
  // Like every start: what earlier runs could not deliver goes first.
  await deliver(null, reportSettings(l.config), deps);
  const checks = await runDoctor(l, deps);
  const failing = checks.filter((c) => c.status === 'fail');
  // At a terminal the table shows each check: its line goes to the daily file only, not twice on the screen.
  for (const c of checks) if (c.status === 'fail' || c.status === 'warn') fileOnly[c.status === 'fail' ? 'error' : 'warn']({ event: 'doctor_check', check: c.name, status: c.status, detail: c.detail, fix: c.fix }, `doctor: ${c.name}: ${c.detail}`);
  logger.info({ event: 'doctor', failing: failing.length, warnings: checks.filter((c) => c.status === 'warn').length }, `doctor: ${failing.length} failing`);
  let alert: string | null = null;
  let alarmed = true;
  if (flags.alert && failing.length) {
    const d = await deliver(doctorReport(checks, { redact: io.redact, at: io.now(), host: os.hostname(), key: standingKey(failing) }), reportSettings(l.config), deps);
    alert = deliveryLine(d);
    alarmed = !(d.configured && d.error && !d.sent);
  }
  if (alarmed) markReported(io.env);
  if (flags.json) io.out(JSON.stringify({ ok: !failing.length, config: l.config.file, checks, alert, ...(flags.fix ? { fixed } : {}) }));
  else {
    if (flags.fix) io.out(fixed.length ? fixed.map((f) => `fixed: ${f}`).join('\n') : 'fixed: nothing to fix safely');
    io.out(checks.map((c: Check) => `${MARK[c.status]}  ${c.name.padEnd(10)} ${c.detail}${c.fix && c.status !== 'ok' ? `\n            fix: ${c.fix}` : ''}`).join('\n'));
    if (alert) io.out(`alert: ${alert}`);
  }
  return failing.length ? EXIT.FAILED : EXIT.OK;
}

// The unit's last log messages, when this user may read the journal (best effort, bounded).
async function journalTail(unit: string, env: NodeJS.ProcessEnv): Promise<string | null> {
  try {
    const { execa } = await import('execa');
    const r = await execa('journalctl', ['-u', unit, '-n', '12', '-o', 'cat', '--no-pager', '-q'], { reject: false, timeout: 5000, env, extendEnv: false, stdin: 'ignore' });
    if (r.exitCode !== 0 || !String(r.stdout).trim()) return null;
    return String(r.stdout)
      .trim()
      .split('\n')
      .map((line) => {
        try {
          const j = JSON.parse(line.replace(/^<\d>/, '')) as { msg?: string };
          return j.msg ?? line;
        } catch {
          return line;
        }
      })
      .join('\n');
  } catch {
    return null;
  }
}

// Run by nightshift-alert@.service (OnFailure=): journald and the daily log, and Discord.
export async function alertCommand(file: string, unit: string | undefined, io: HealthIo): Promise<number> {
  if (!unit) throw new UsageError('Expected `nightshift alert --unit NAME`');
  const { l, logger, problems } = open(file, io);
  const env = io.env;
  if (io.envFile?.insecure) logger.warn({ event: 'env_file_insecure', file: io.envFile.file }, `${io.envFile.file}: ${io.envFile.insecure} (alert sends anyway; every other command refuses it)`);
  logger.error({ event: 'unit_failed', unit, result: env.MONITOR_SERVICE_RESULT ?? null, exit_status: env.MONITOR_EXIT_STATUS ?? null }, `systemd unit ${unit} failed`);
  const report = unitReport(
    {
      unit, at: io.now(), result: env.MONITOR_SERVICE_RESULT, exitCode: env.MONITOR_EXIT_CODE, exitStatus: env.MONITOR_EXIT_STATUS,
      invocationId: env.MONITOR_INVOCATION_ID, problems, logTail: await journalTail(unit, env), host: os.hostname(),
    },
    io.redact,
  );
  const d = await deliver(report, reportSettings(l.config), { env, logger, redact: io.redact, now: io.now });
  io.out(`alert for ${unit}: ${deliveryLine(d)}`);
  if (!d.configured) logger.warn({ event: 'alert_not_sent', unit }, 'alert: neither DISCORD_WEBHOOK_URL nor NIGHTSHIFT_WEBHOOK_URL is set; the failure is in journald and the daily log only');
  // Neither sent nor kept for later: the alarm itself failed.
  if (d.configured && d.error && !d.sent) return EXIT.FAILED;
  markReported(env);
  return EXIT.OK;
}
