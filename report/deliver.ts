// Delivery of reports: queue in the outbox, then send what is queued, oldest first, within one
// time budget per channel (`discord.timeout`, `webhook.timeout`). It never throws and never
// decides an exit code: a report that cannot go now stays queued for the next start.
import type { Logger } from '../logs/logger.js';
import type { Redactor } from '../core/redact.js';
import { isAlive, readProc } from '../core/process-tree.js';
import { parseWebhook, postEmbed, type PostResult, type Settings, type Webhook } from './discord.js';
import { fallbackEmbed, markPossibleRepeat, type Embed, type Report } from './embed.js';
import { Outbox, outboxFile } from './outbox.js';
import { alarmMessage, postWebhook, renderWebhook, type AlarmMessage, type WebhookFormat } from './webhook.js';
import { counted } from '../core/words.js';
import type { TraceSpan } from '../core/trace.js';

export type ReportSettings = { stateDir: string; apiBase: string; timeoutMs: number; username?: string; webhookFormat?: WebhookFormat; webhookTimeoutMs?: number };

export function reportSettings(c: { state_dir: string; discord: { api_base: string; timeout: number; username?: string }; webhook?: { format: WebhookFormat; timeout: number } }): ReportSettings {
  return { stateDir: c.state_dir, apiBase: c.discord.api_base, timeoutMs: c.discord.timeout, username: c.discord.username, webhookFormat: c.webhook?.format, webhookTimeoutMs: c.webhook?.timeout };
}

// NIGHTSHIFT_WEBHOOK_URL when it is an http(s) URL; null otherwise.
export function webhookTarget(raw: string | undefined): string | null {
  if (!raw?.trim()) return null;
  try {
    const u = new URL(raw.trim());
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.href : null;
  } catch {
    return null;
  }
}

// Either channel set: a report has somewhere to go.
export const reportsConfigured = (env: NodeJS.ProcessEnv) => !!parseWebhook(env.DISCORD_WEBHOOK_URL) || !!webhookTarget(env.NIGHTSHIFT_WEBHOOK_URL);

export type DeliverDeps = {
  env: NodeJS.ProcessEnv;
  logger: Logger;
  redact: Redactor;
  now: () => Date;
  signal?: AbortSignal;
  // The fire's trace span: each delivery is a span under it (telemetry on).
  trace?: TraceSpan;
  // Test seam: the poster (production: discord.js).
  post?: (hook: Webhook, embed: Embed, s: Settings, deadline: number, signal?: AbortSignal) => Promise<PostResult>;
};

type WebhookChannel = { url: string; format: WebhookFormat; deadline: number };

// `configured`: a channel is set (Discord's webhook, NIGHTSHIFT_WEBHOOK_URL or both). `queued`: this report entered the outbox (false: a duplicate, or
// no outbox). `sent`: reports delivered by this call (older ones included). `pending`: still queued.
export type Delivery = { configured: boolean; queued: boolean; sent: number; pending: number; error: string | null };

// Queues `report` (if any) and drains the outbox. With no report and no outbox file, nothing is
// opened and discord.js is never loaded.
export async function deliver(report: Report | null, s: ReportSettings, deps: DeliverDeps): Promise<Delivery> {
  if (!deps.trace?.traceId) return deliverUntraced(report, s, deps);
  const span = deps.trace.child('nightshift.report deliver', { 'nightshift.report.key': report?.key, 'nightshift.report.kind': report?.kind });
  const d = await deliverUntraced(report, s, deps);
  span.set({ 'nightshift.report.configured': d.configured, 'nightshift.report.queued': d.queued, 'nightshift.report.sent': d.sent, 'nightshift.report.pending': d.pending, 'nightshift.report.error': d.error ?? undefined });
  if (d.error) span.fail(d.error);
  span.end();
  return d;
}

async function deliverUntraced(report: Report | null, s: ReportSettings, deps: DeliverDeps): Promise<Delivery> {
  const out: Delivery = { configured: false, queued: false, sent: 0, pending: 0, error: null };
  const hook = parseWebhook(deps.env.DISCORD_WEBHOOK_URL);
  const whUrl = webhookTarget(deps.env.NIGHTSHIFT_WEBHOOK_URL);
  // The value is a secret: only that it is wrong is said.
  if (deps.env.NIGHTSHIFT_WEBHOOK_URL?.trim() && !whUrl) deps.logger.warn({ event: 'webhook_invalid' }, 'webhook: NIGHTSHIFT_WEBHOOK_URL is not an http(s) URL: nothing sent there (fix it in the env file)');
  if (!hook && report) deps.logger.debug({ event: 'report_skipped', key: report.key }, 'Discord: DISCORD_WEBHOOK_URL is not set (or not a webhook URL): no report sent');
  if (!hook && !whUrl) return out;
  out.configured = true;
  const deadline = Date.now() + s.timeoutMs;
  const wh: WebhookChannel | null = whUrl ? { url: whUrl, format: s.webhookFormat ?? 'json', deadline: Date.now() + (s.webhookTimeoutMs ?? s.timeoutMs) } : null;
  const file = outboxFile(s.stateDir);
  let box: Outbox | null = null;
  // No outbox to keep it (an unwritable, corrupt or full state dir): the report is tried once,
  // directly, and one that cannot go is logged whole (journald keeps it).
  const direct = async (why: string, err: unknown) => {
    out.error = deps.redact(`outbox ${file} unavailable: ${why}`);
    deps.logger.error({ event: 'outbox_unavailable', file, err }, out.error);
    if (!report) return out;
    if (hook) {
      const r = await (deps.post ?? postEmbed)(hook, report.embed, settingsOf(s), deadline, deps.signal);
      if (r.ok) out.sent += 1;
      else deps.logger.error({ event: 'report_lost', key: report.key, error: deps.redact(r.error), embed: report.embed }, `Discord: report ${report.key} not sent and not queued: ${deps.redact(r.error)}; the report is this log line`);
    }
    if (wh) {
      const r = await postWebhook(wh.url, renderWebhook(alarmMessage(report), wh.format), wh.deadline, { signal: deps.signal });
      if (r.ok) out.sent += 1;
      else deps.logger.error({ event: 'report_lost', channel: 'webhook', key: report.key, error: deps.redact(r.error) }, `webhook: report ${report.key} not sent and not queued: ${deps.redact(r.error)}`);
    }
    return out;
  };
  try {
    box = report ? Outbox.open(file) : Outbox.openIfExists(file);
  } catch (err) {
    return direct((err as Error).message, err);
  }
  if (!box) return out;
  if (report) {
    try {
      const queued = [hook && box.enqueue(report, deps.now()), wh && box.enqueue(report, deps.now(), 'webhook', alarmMessage(report))];
      out.queued = queued.some(Boolean);
    } catch (err) {
      box.close();
      return direct(`cannot queue: ${(err as Error).message}`, err);
    }
  }
  try {
    if (report) {
      if (!out.queued) deps.logger.info({ event: 'report_duplicate', key: report.key }, `report ${report.key} was queued before; not queued again`);
    }
    const recovered = box.recover(isAlive);
    if (recovered) deps.logger.warn({ event: 'outbox_recovered', reports: recovered }, `outbox: ${counted(recovered, 'report')} an interrupted sender left ${recovered === 1 ? 'is' : 'are'} queued again`);
    const open = box;
    // The channels drain side by side, each in its own order and time budget.
    const sent = await Promise.all([
      hook && open.pending('discord') ? drain(open, hook, s, deadline, deps) : 0,
      wh && open.pending('webhook') ? drainWebhook(open, wh, deps) : 0,
    ]);
    out.sent += sent[0] + sent[1];
    box.prune(deps.now());
    out.pending = (hook ? box.pending('discord') : 0) + (wh ? box.pending('webhook') : 0);
  } catch (err) {
    out.error = deps.redact(`outbox: ${(err as Error).message}`);
    deps.logger.error({ event: 'outbox_error', err }, out.error);
  } finally {
    box.close();
  }
  return out;
}

// The webhook's queue, oldest first; the first report that cannot go ends it (order is kept). A
// report the endpoint refuses for its shape (400, 413, 422) is set aside, never retried.
async function drainWebhook(box: Outbox, wh: WebhookChannel, deps: DeliverDeps): Promise<number> {
  const me = readProc(process.pid);
  let sent = 0;
  while (Date.now() < wh.deadline && !deps.signal?.aborted) {
    const row = box.claimNext(process.pid, me?.start ?? null, 'webhook');
    if (!row) break;
    const key = row.key.replace(/^webhook\|/, '');
    let r: Awaited<ReturnType<typeof postWebhook>>;
    try {
      r = await postWebhook(wh.url, renderWebhook(JSON.parse(row.payload) as AlarmMessage, wh.format, row.uncertain === 1), wh.deadline, { signal: deps.signal });
    } catch (err) {
      r = { ok: false, error: (err as Error).message, status: null, maybeDelivered: false, permanent: false };
    }
    if (r.ok) {
      box.markSent(row.seq, null, deps.now());
      sent++;
      deps.logger.info({ event: 'report_sent', channel: 'webhook', key, attempts: row.attempts }, `webhook: sent ${key}`);
      continue;
    }
    const error = deps.redact(r.error);
    if (r.permanent) {
      box.markDead(row.seq, error);
      deps.logger.error({ event: 'report_dead', channel: 'webhook', key, error }, `webhook refused ${key} (${error}); set aside, not retried`);
      continue;
    }
    box.release(row.seq, error, r.maybeDelivered);
    deps.logger.warn({ event: 'report_queued', channel: 'webhook', key, error, attempts: row.attempts, pending: box.pending('webhook') }, `webhook: ${key} not sent (${error}); queued for the next start`);
    break;
  }
  return sent;
}

const settingsOf = (s: ReportSettings): Settings => ({ apiBase: s.apiBase, username: s.username });

// Oldest first; the first report that cannot go ends the drain (the rest would fail the same way,
// and order is kept). A report Discord refuses for its shape (400) goes as a minimal fallback
// (title, outcome, key), the full one kept in the log; never retried as it was.
async function drain(box: Outbox, hook: Webhook, s: ReportSettings, deadline: number, deps: DeliverDeps): Promise<number> {
  const post = deps.post ?? postEmbed;
  const me = readProc(process.pid);
  let sent = 0;
  while (Date.now() < deadline && !deps.signal?.aborted) {
    const row = box.claimNext(process.pid, me?.start ?? null);
    if (!row) break;
    const embed = JSON.parse(row.payload) as Embed;
    const send = async (e: Embed): Promise<PostResult> => {
      try {
        return await post(hook, row.uncertain ? markPossibleRepeat(e) : e, settingsOf(s), deadline, deps.signal);
      } catch (err) {
        return { ok: false, error: (err as Error).message, status: null, maybeDelivered: true, permanent: false };
      }
    };
    let r = await send(embed);
    if (!r.ok && r.permanent) {
      const refused = deps.redact(r.error);
      // The payload was redacted when it was built; the log keeps it whole.
      deps.logger.error({ event: 'report_refused', key: row.key, error: refused, embed }, `Discord refused ${row.key} (${refused}); sending a minimal fallback, the full report is this log line`);
      r = await send(fallbackEmbed(embed, row.key));
      if (r.ok) {
        box.markSentAsFallback(row.seq, r.messageId, deps.now(), `sent as a minimal fallback: Discord refused the full report (${refused})`);
        sent++;
        deps.logger.warn({ event: 'report_sent_fallback', key: row.key, message_id: r.messageId }, `Discord: sent ${row.key} as a minimal fallback`);
        continue;
      }
    }
    if (r.ok) {
      box.markSent(row.seq, r.messageId, deps.now());
      sent++;
      deps.logger.info({ event: 'report_sent', key: row.key, message_id: r.messageId, attempts: row.attempts }, `Discord: sent ${row.key}`);
      continue;
    }
    const error = deps.redact(r.error);
    if (r.permanent) {
      box.markDead(row.seq, error);
      deps.logger.error({ event: 'report_dead', key: row.key, error }, `Discord refused ${row.key} and its fallback (${error}); set aside, not retried (the full report is in the report_refused line)`);
      continue;
    }
    box.release(row.seq, error, r.maybeDelivered);
    deps.logger.warn({ event: 'report_queued', key: row.key, error, attempts: row.attempts, pending: box.pending('discord') }, `Discord: ${row.key} not sent (${error}); queued for the next start`);
    break;
  }
  return sent;
}
