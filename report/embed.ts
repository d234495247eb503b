// Pure formatting of what nightshift tells Discord: one embed per session, per failing doctor and
// per failed unit, in the webhook API's own JSON shape. Every string is redacted before it is cut
// (a cut can split a secret past any redactor), and the finished embed is redacted once more.
import { money } from '../core/money.js';
import type { Redactor } from '../core/redact.js';
import { terminalText } from '../logs/terminal-text.js';
import { markdownText } from './markdown-text.js';
import { counted } from '../core/words.js';

export type EmbedField = { name: string; value: string; inline?: boolean };
export type Embed = { title: string; description?: string; color: number; fields: EmbedField[]; footer?: { text: string }; timestamp?: string };
// What the outbox keeps and the sender posts: `key` dedupes (a session id, a doctor run, a unit failure).
// `agent`: the agent it is about, when one (the webhook's JSON names it).
export type Report = { key: string; kind: 'session' | 'doctor' | 'alert' | 'dream' | 'backoff'; embed: Embed; agent?: string };

// Discord's limits (https://discord.com/developers/docs/resources/message#embed-object-embed-limits).
export const LIMITS = { title: 256, description: 4096, fieldName: 256, fieldValue: 1024, fields: 25, footer: 2048, total: 6000 } as const;
// The result shown in a session's embed: a glance, not the transcript.
export const RESULT_MAX = 700;

export const COLORS: Record<string, number> = {
  ok: 0x2ecc71,
  error: 0xe74c3c,
  spawn_failed: 0x992d22,
  max_turns: 0xe67e22,
  timeout: 0xe67e22,
  stalled: 0xe67e22,
  loop: 0x9b59b6,
  budget: 0xf1c40f,
  abandoned: 0x95a5a6,
  rate_limited: 0xf39c12,
  interrupted: 0x95a5a6,
  disk_full: 0xe74c3c,
  warn: 0xe67e22,
  fail: 0xe74c3c,
};
const colorOf = (key: string) => COLORS[key] ?? 0x95a5a6;

// Cuts to `max` characters with an ellipsis; never returns an empty string (Discord refuses those).
export function shorten(text: string, max: number): string {
  const t = text.trim();
  if (!t) return '-';
  return t.length > max ? `${t.slice(0, max - 1)}…` : t;
}

export { money };

export function formatMs(ms: number | null): string {
  if (ms === null || !Number.isFinite(ms)) return '-';
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${s % 60}s`;
  return `${Math.floor(m / 60)}h ${m % 60}m`;
}

export type SessionFacts = {
  id: string;
  agent: string;
  outcome: string;
  model: string | null;
  cost_usd: number;
  cost_estimated: boolean;
  turns: number;
  duration_ms: number | null;
  ended_at: string | null;
  result: string | null;
  error: string | null;
  memory?: 'served' | 'unavailable' | null;
  // The same failure again (daemon/health/anneal-check.ts): what the report says of it.
  recurring?: string | null;
  retry_at?: string | null;
  // Connections the egress proxy refused (null or absent: the agent has no network).
  egress_refused?: number | null;
  // Connections to the API the wall refused (not the CLI's; null or absent: unwalled).
  api_refused?: number | null;
  // The fire's OpenTelemetry trace (telemetry on), to look the session up in the collector.
  trace_id?: string | null;
};
// null: git sync is off for this vault.
export type GitFacts = { committed: boolean; pushed: boolean; branch: string | null; branch_pushed?: boolean; error: string | null; left_out?: Array<{ path: string }> } | null;
export type DayFacts = { day: string; sessions: number; max_sessions: number; cost_usd: number; max_usd: number };

export function gitSummary(g: GitFacts): string {
  if (!g) return 'git sync off';
  if (g.branch) return `the work is on branch \`${g.branch}\` (${g.branch_pushed ? 'pushed' : 'local only'}), not on main until merged${g.error ? ` (${g.error})` : ''}`;
  const state = `${g.committed ? 'committed' : 'nothing committed'}, ${g.pushed ? 'pushed' : 'not pushed'}`;
  return g.error ? `${state} (${g.error})` : state;
}

// One session's report.
export function sessionReport(s: SessionFacts, git: GitFacts, today: DayFacts, o: { redact: Redactor; host?: string; late?: string | null; projectFiles?: { files: string[]; loaded: boolean } | null }): Report {
  // What the session said or caused: redacted, then shown as text, never as markdown.
  const r = (t: string) => markdownText(o.redact(t));
  const fields: EmbedField[] = [
    { name: 'Outcome', value: s.outcome, inline: true },
    { name: 'Model', value: s.model ? r(s.model) : '-', inline: true },
    { name: 'Cost', value: s.cost_estimated ? `~${money(s.cost_usd)} (estimated)` : money(s.cost_usd), inline: true },
    { name: 'Turns', value: String(s.turns), inline: true },
    { name: 'Duration', value: formatMs(s.duration_ms), inline: true },
    { name: 'Budget today', value: `${today.sessions}/${today.max_sessions} sessions, ${money(today.cost_usd)} of ${money(today.max_usd)} (${today.day})`, inline: true },
    { name: 'Git', value: gitSummary(git && { ...git, error: git.error && r(git.error) }) },
    { name: 'Session', value: `\`${s.id}\`` },
  ];
  if (s.trace_id) fields.push({ name: 'Trace', value: `\`${s.trace_id}\`` });
  if (s.error) fields.push({ name: 'Error', value: shorten(r(s.error), 300) });
  if (s.recurring) fields.push({ name: 'Recurring', value: shorten(r(s.recurring), 300) });
  if (s.memory === 'unavailable') fields.push({ name: 'Memory', value: 'unavailable: the session ran without its memory tools (see the log)' });
  if (s.retry_at) fields.push({ name: 'Held until', value: `${s.retry_at} (the API's reset time)` });
  if (s.egress_refused) fields.push({ name: 'Egress refused', value: `${counted(s.egress_refused, 'connection')} the agent's \`network:\` does not allow (see the log: egress_refused)`, inline: true });
  if (s.api_refused) fields.push({ name: 'API refused', value: `${counted(s.api_refused, 'connection')} to the API from a process other than the CLI (see the log: api_peer_refused)`, inline: true });
  if (o.late) fields.push({ name: 'Late', value: o.late });
  // Names a session chose, shown as code: data, never markdown.
  if (o.projectFiles) {
    const names = o.projectFiles.files.slice(0, 8).map((f) => `\`${o.redact(f).replace(/`/g, "'")}\``).join(', ') + (o.projectFiles.files.length > 8 ? ` and ${o.projectFiles.files.length - 8} more` : '');
    fields.push({ name: 'Project files changed', value: shorten(`${names}: ${o.projectFiles.loaded ? 'the next session loads them (claude.project_settings)' : 'never loaded (claude.project_settings is off)'}`, 300) });
  }
  const embed: Embed = {
    title: `${s.agent}: ${s.outcome}${o.late ? ' (late)' : ''}`,
    description: s.result ? shorten(r(s.result), RESULT_MAX) : undefined,
    color: colorOf(s.outcome),
    fields,
    footer: { text: o.host ? `nightshift on ${o.host}` : 'nightshift' },
    timestamp: s.ended_at ?? undefined,
  };
  return { key: `session:${s.id}`, kind: 'session', embed: finish(embed, o.redact), agent: terminalText(o.redact(s.agent)) };
}

// An agent's backoff began (failures in a row) or ended (an ok session after it).
export type BackoffFacts = { agent: string; change: 'started' | 'recovered'; failures: number; until: string | null; session: string };

export function backoffReport(b: BackoffFacts, o: { redact: Redactor; host?: string; at: Date }): Report {
  const started = b.change === 'started';
  const embed: Embed = {
    title: started ? `${b.agent}: backed off` : `${b.agent}: recovered`,
    description: started
      ? `${counted(b.failures, 'failure')} in a row: ${b.agent} waits${b.until ? ` until ${b.until}` : ''} before it runs again, longer after each further failure. \`nightshift run ${b.agent}\` still runs it by hand.`
      : `${b.agent} ended ok after ${counted(b.failures, 'failure')} in a row: back on its schedule.`,
    color: started ? COLORS.warn : COLORS.ok,
    fields: [{ name: 'Session', value: `\`${b.session}\`` }],
    footer: { text: o.host ? `nightshift on ${o.host}` : 'nightshift' },
    timestamp: o.at.toISOString(),
  };
  return { key: `backoff:${b.agent}:${b.change}:${b.session}`, kind: 'backoff', embed: finish(embed, o.redact), agent: terminalText(o.redact(b.agent)) };
}

// A dream the tick ran: each phase with its time and counts; red when a phase failed.
export type DreamFacts = { id: string; reason: string; duration_ms: number; phases: Record<string, { ok: boolean; ms: number; error?: string; [k: string]: unknown }> };

export function dreamReport(d: DreamFacts, o: { redact: Redactor; host?: string; at: Date }): Report {
  const failed = Object.entries(d.phases).filter(([, p]) => !p.ok);
  const fields: EmbedField[] = Object.entries(d.phases).map(([name, p]) => {
    const { ok, ms, error, ...counts } = p;
    const detail = error ? shorten(o.redact(String(error)), 200) : Object.entries(counts).map(([k, v]) => `${k} ${v}`).join(', ') || '-';
    return { name: `${ok ? '' : 'FAILED '}${name}`, value: `${ms} ms: ${detail}`, inline: true };
  });
  const embed: Embed = {
    title: `dream: ${failed.length ? `${counted(failed.length, 'phase')} failed` : 'ok'}`,
    description: shorten(o.redact(`${d.reason}; ${formatMs(d.duration_ms)}`), RESULT_MAX),
    color: failed.length ? COLORS.error : COLORS.ok,
    fields: fields.slice(0, LIMITS.fields),
    footer: { text: o.host ? `nightshift on ${o.host}` : 'nightshift' },
    timestamp: o.at.toISOString(),
  };
  return { key: `dream:${d.id}`, kind: 'dream', embed: finish(embed, o.redact) };
}

// skip: not checked, because what it needs (the config) could not be read.
export type CheckStatus = 'ok' | 'warn' | 'fail' | 'skip';
export type CheckFacts = { name: string; status: CheckStatus; detail: string; fix: string | null };
const MARK: Record<CheckStatus, string> = { ok: '✓', warn: '!', fail: '✗', skip: '–' };

// A doctor run: failing checks first, then warnings; passing ones are only counted.
// `key`: a report the outbox sends once (the same standing fact), instead of one per run.
export function doctorReport(checks: CheckFacts[], o: { redact: Redactor; at: Date; host?: string; notes?: string[]; key?: string }): Report {
  const failing = checks.filter((c) => c.status === 'fail');
  const warning = checks.filter((c) => c.status === 'warn');
  const passing = checks.length - failing.length - warning.length;
  const fields = [...failing, ...warning].map((c) => ({
    name: `${MARK[c.status]} ${c.name}`,
    value: shorten(o.redact(c.fix ? `${c.detail}\nfix: ${c.fix}` : c.detail), LIMITS.fieldValue),
  }));
  const notes = (o.notes ?? []).map((n) => o.redact(n));
  const embed: Embed = {
    title: failing.length ? `doctor: ${counted(failing.length, 'check')} failing` : warning.length ? `doctor: ${counted(warning.length, 'warning')}` : 'doctor: healthy',
    description: shorten([`${passing} of ${checks.length} checks pass.`, ...notes].join('\n'), 1500),
    color: failing.length ? COLORS.fail : warning.length ? COLORS.warn : COLORS.ok,
    fields,
    footer: { text: o.host ? `nightshift doctor on ${o.host}` : 'nightshift doctor' },
    timestamp: o.at.toISOString(),
  };
  return { key: o.key ?? `doctor:${o.at.toISOString()}`, kind: 'doctor', embed: finish(embed, o.redact) };
}

export type UnitFailure = {
  unit: string;
  at: Date;
  // From systemd's OnFailure= environment (MONITOR_*), when present.
  result?: string | null;
  exitCode?: string | null;
  exitStatus?: string | null;
  invocationId?: string | null;
  // What could not be read (a broken config), and the unit's last log lines when readable.
  problems: string[];
  logTail?: string | null;
  host?: string;
};

// `nightshift alert --unit NAME`: a failed unit, reported even when nothing else can be read.
export function unitReport(u: UnitFailure, redact: Redactor): Report {
  const fields: EmbedField[] = [{ name: 'Unit', value: `\`${u.unit}\``, inline: true }];
  if (u.result) fields.push({ name: 'Result', value: u.result, inline: true });
  if (u.exitCode || u.exitStatus) fields.push({ name: 'Exit', value: [u.exitCode, u.exitStatus].filter(Boolean).join(' '), inline: true });
  if (u.problems.length) fields.push({ name: 'Could not read', value: shorten(redact(u.problems.join('\n')), LIMITS.fieldValue) });
  if (u.logTail) fields.push({ name: 'Last log lines', value: shorten(`\`\`\`\n${redact(u.logTail).slice(-900)}\n\`\`\``, LIMITS.fieldValue) });
  const embed: Embed = {
    title: `unit failed: ${u.unit}`,
    color: COLORS.fail,
    fields,
    footer: { text: u.host ? `nightshift alert on ${u.host}` : 'nightshift alert' },
    timestamp: u.at.toISOString(),
  };
  const key = `alert:${u.unit}:${u.invocationId || u.at.toISOString()}`;
  return { key, kind: 'alert', embed: finish(embed, redact) };
}

// The last pass: every string redacted, escaped and held to Discord's limits, whatever built it.
export function finish(e: Embed, redact: Redactor): Embed {
  // Discord draws bidi overrides and invisible characters as they are (a result could read
  // backwards or hide a word), so a session's text is escaped here as at a terminal; titles and
  // names are one line, values and the description keep their lines.
  const line = (t: string) => terminalText(redact(t));
  const block = (t: string) => terminalText(redact(t), { block: true });
  const out: Embed = {
    title: shorten(line(e.title), LIMITS.title),
    color: e.color,
    fields: e.fields.slice(0, LIMITS.fields).map((f) => ({
      name: shorten(line(f.name), LIMITS.fieldName),
      value: shorten(block(f.value), LIMITS.fieldValue),
      ...(f.inline ? { inline: true } : {}),
    })),
  };
  if (e.description !== undefined) out.description = shorten(block(e.description), LIMITS.description);
  if (e.footer) out.footer = { text: shorten(line(e.footer.text), LIMITS.footer) };
  if (e.timestamp) out.timestamp = e.timestamp;
  // The total limit: drop fields from the end until it fits (the title and first fields matter most).
  while (embedLength(out) > LIMITS.total && out.fields.length) out.fields.pop();
  return out;
}

export function embedLength(e: Embed): number {
  return e.title.length + (e.description?.length ?? 0) + (e.footer?.text.length ?? 0) + e.fields.reduce((n, f) => n + f.name.length + f.value.length, 0);
}

// What is sent when Discord refuses a report for its shape (a 400): only the title (agent and
// outcome), the outcome field and the report's key (a session id), each held well inside the
// limits, so that the report itself is never lost. The full one stays in the log.
export function fallbackEmbed(e: Embed, key: string): Embed {
  const outcome = e.fields.find((f) => f.name === 'Outcome')?.value;
  const fields: EmbedField[] = [];
  if (outcome) fields.push({ name: 'Outcome', value: shorten(outcome, 100), inline: true });
  fields.push({ name: 'Report', value: shorten(`\`${key}\``, 200), inline: true });
  return {
    title: shorten(e.title, 200),
    description: 'Discord refused the full report for its shape; it is in the log (event `report_refused`).',
    color: e.color,
    fields,
    ...(e.timestamp ? { timestamp: e.timestamp } : {}),
  };
}

// A repeat that may already have reached the channel (an earlier attempt's fate is unknown) says so.
export function markPossibleRepeat(e: Embed): Embed {
  const note = 'possibly a repeat: an earlier delivery attempt ended without an answer';
  return { ...e, footer: { text: shorten(e.footer ? `${e.footer.text} · ${note}` : note, LIMITS.footer) } };
}
