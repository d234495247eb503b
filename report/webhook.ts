// The second report channel beside Discord: a generic JSON webhook, or an ntfy topic. The URL is
// NIGHTSHIFT_WEBHOOK_URL in the env file (it may carry a token, or be the topic itself: a secret,
// redacted by value, never logged); the format is config `webhook.format`. Reports go through the
// same outbox as Discord's, in a queue of their own, so one channel down never holds the other.
// What a session wrote is data: a JSON string value, or in ntfy's plain-text body, quoted lines
// after nightshift's own and a label (no Markdown header).
import { terminalText } from '../logs/terminal-text.js';
import type { Report } from './embed.js';

export type WebhookFormat = 'json' | 'ntfy';

// The channel-neutral report the outbox keeps for the webhook, built from the Discord report.
export type AlarmMessage = {
  event: Report['kind'];
  key: string;
  title: string;
  agent: string | null;
  outcome: string | null;
  summary: string | null;
  cost: string | null;
  fields: Record<string, string>;
  at: string | null;
  host: string | null;
};

// The embed's text was escaped for Discord's markdown; the webhook gets it as written (redacted).
const unescape = (t: string) => t.replace(/\\([\\`*_~|>#[\]<@])/g, '$1');

// Pure: the neutral message of a report (already redacted and held to limits when it was built).
export function alarmMessage(r: Report): AlarmMessage {
  const e = r.embed;
  const fields: Record<string, string> = {};
  for (const f of e.fields) fields[unescape(f.name)] = unescape(f.value);
  // A session says its outcome; a doctor, a dream and a unit's alert are ok or fail by their title.
  const outcome = fields.Outcome ?? (r.kind === 'doctor' || r.kind === 'alert' || r.kind === 'dream' ? (/(healthy|: ok)$/.test(e.title) ? 'ok' : / warnings?$/.test(e.title) ? 'warn' : 'fail') : null);
  return {
    event: r.kind,
    key: r.key,
    title: unescape(e.title),
    agent: r.agent ?? null,
    outcome,
    summary: e.description === undefined ? null : unescape(e.description),
    cost: fields.Cost ?? null,
    fields,
    at: e.timestamp ?? null,
    host: e.footer ? (/ on (\S+)/.exec(e.footer.text)?.[1] ?? null) : null,
  };
}

export type Rendered = { contentType: string; headers: Record<string, string>; body: string };

// An ntfy priority (1..5) and tags (emoji short codes) for what happened.
function ntfyLevel(m: AlarmMessage): { priority: string; tags: string[] } {
  const o = m.outcome ?? '';
  if (o === 'ok') return { priority: '3', tags: ['white_check_mark', m.event] };
  if (m.event === 'alert' || o === 'fail' || o === 'error' || o === 'spawn_failed' || o === 'disk_full') return { priority: '5', tags: ['rotating_light', m.event] };
  return { priority: '4', tags: ['warning', m.event] };
}

// A header value that is one line of printable ASCII; other text goes RFC 2047-encoded (ntfy
// decodes it), so no session text can end a header or add one.
export function headerValue(t: string): string {
  const one = terminalText(t).replace(/[\r\n\t]+/g, ' ').trim().slice(0, 200);
  return /^[\x20-\x7e]*$/.test(one) ? one : `=?UTF-8?B?${Buffer.from(one, 'utf8').toString('base64')}?=`;
}

// ntfy turns a longer message into an attachment.
const NTFY_MAX = 4000;
const toBytes = (t: string, max: number) => {
  let out = t.slice(0, max);
  while (Buffer.byteLength(out, 'utf8') > max) out = out.slice(0, -64);
  return out;
};

// A session's text is below nightshift's own lines, after this label, every line of it quoted, so
// nothing it prints ("Outcome: ok") can stand where nightshift's own lines do.
export const SESSION_LABEL = 'The session wrote (quoted as it wrote it):';
const quoted = (t: string) => terminalText(t, { block: true }).split('\n').map((l) => `> ${l}`);

// nightshift's fields, one `Name: value` line each, Outcome first; a value's further lines (an
// error may carry the session's words) are indented, so none of them starts a line of its own.
function ntfyFields(fields: Record<string, string>): string[] {
  const entries = Object.entries(fields).sort(([a], [b]) => Number(b === 'Outcome') - Number(a === 'Outcome'));
  return entries.map(([k, v]) => `${terminalText(k)}: ${terminalText(v, { block: true }).split('\n').join('\n  ')}`);
}

// Pure: the request body and headers for a format. `repeat`: an earlier attempt's fate is unknown.
export function renderWebhook(m: AlarmMessage, format: WebhookFormat, repeat = false): Rendered {
  if (format === 'ntfy') {
    const lines = m.event === 'session' ? [] : [m.summary ?? ''];
    lines.push(...ntfyFields(m.fields));
    if (repeat) lines.push('(possibly a repeat: an earlier delivery attempt ended without an answer)');
    if (m.event === 'session' && m.summary) lines.push(SESSION_LABEL, ...quoted(m.summary));
    const { priority, tags } = ntfyLevel(m);
    return {
      contentType: 'text/plain; charset=utf-8',
      headers: { Title: headerValue(`nightshift: ${m.title}`), Priority: priority, Tags: tags.join(',') },
      body: toBytes(lines.join('\n'), NTFY_MAX) || m.title,
    };
  }
  return {
    contentType: 'application/json',
    headers: {},
    body: JSON.stringify({ source: 'nightshift', ...m, possibly_repeat: repeat }),
  };
}

// Like Discord's PostResult: `permanent` (this report's shape refused: 400, 413, 422) is never
// retried; anything else (network, 5xx, 429, 401/403/404 of a wrong URL) stays queued.
export type WebhookResult = { ok: true } | { ok: false; error: string; status: number | null; maybeDelivered: boolean; permanent: boolean };

export type WebhookDeps = { fetch?: typeof fetch; signal?: AbortSignal; sleep?: (ms: number) => Promise<void> };

const PERMANENT = new Set([400, 413, 422]);
const RETRIES = 2;

// A Retry-After header (seconds or an HTTP date) in ms; null when absent or unreadable.
export function retryAfterMs(v: string | null, now = Date.now()): number | null {
  if (!v) return null;
  if (/^\d+(\.\d+)?$/.test(v.trim())) return Math.round(Number(v) * 1000);
  const t = Date.parse(v);
  return Number.isFinite(t) ? Math.max(0, t - now) : null;
}

// POSTs once, retrying a 5xx or a 429 (after its Retry-After) up to twice, all by `deadline`; a
// wait that would pass the deadline is not slept out: the report stays queued for the next start.
export async function postWebhook(url: string, r: Rendered, deadline: number, deps: WebhookDeps = {}): Promise<WebhookResult> {
  const doFetch = deps.fetch ?? fetch;
  const sleep = deps.sleep ?? ((ms: number) => new Promise<void>((res) => setTimeout(res, ms)));
  let last: WebhookResult = { ok: false, error: 'not sent', status: null, maybeDelivered: false, permanent: false };
  for (let attempt = 0; attempt <= RETRIES; attempt++) {
    const left = deadline - Date.now();
    if (left <= 0 || deps.signal?.aborted) return last;
    try {
      const res = await doFetch(url, {
        method: 'POST',
        headers: { 'content-type': r.contentType, ...r.headers },
        body: r.body,
        redirect: 'error',
        signal: deps.signal ? AbortSignal.any([deps.signal, AbortSignal.timeout(left)]) : AbortSignal.timeout(left),
      });
      await res.arrayBuffer().catch(() => null);
      if (res.ok) return { ok: true };
      last = { ok: false, error: `HTTP ${res.status}`, status: res.status, maybeDelivered: false, permanent: PERMANENT.has(res.status) };
      if (res.status !== 429 && res.status < 500) return last;
      const wait = res.status === 429 ? (retryAfterMs(res.headers.get('retry-after')) ?? 1000) : 250 * 2 ** attempt;
      if (res.status === 429) last = { ...last, error: `HTTP 429: rate limited for ${wait} ms` };
      if (attempt === RETRIES || Date.now() + wait >= deadline) return last;
      await sleep(wait);
    } catch (err) {
      const e = err as Error & { cause?: { code?: string } };
      const code = e.cause?.code ?? '';
      const timedOut = e.name === 'TimeoutError' || e.name === 'AbortError';
      // Refused or unresolved: it never left. A timeout or reset: it may have arrived.
      const neverSent = /ECONNREFUSED|ENOTFOUND|EAI_AGAIN|ENETUNREACH|EHOSTUNREACH/.test(code);
      return { ok: false, error: timedOut ? 'timed out' : `network: ${code || e.message.split('\n')[0]}`, status: null, maybeDelivered: !neverSent, permanent: false };
    }
  }
  return last;
}
