// The one module that talks to Discord, through discord.js's WebhookClient (loaded only when
// there is something to send: a tick with nothing due never imports it). Every call is held to an
// absolute deadline: discord.js's own request timeout, its 5xx retries and its 429 waits all fit
// inside it, and a rate limit whose wait would pass the deadline is refused at once, not slept out.
import { loadOptional, MissingPackageError, type Importer } from '../core/optional-package.js';
import type { Embed } from './embed.js';

export type Webhook = { id: string; token: string };

// `https://discord.com/api/webhooks/<id>/<token>` (any host, any api version: the host actually
// used is config `discord.api_base`). Null when unset or not a webhook URL.
export function parseWebhook(url: string | undefined): Webhook | null {
  if (!url) return null;
  const m = /\/webhooks\/(\d+)\/([A-Za-z0-9_.-]+)\/?(?:[?#].*)?$/.exec(url.trim());
  return m ? { id: m[1], token: m[2] } : null;
}

// `load`: how discord.js is imported (tests hand in one that fails).
export type Settings = { apiBase: string; username?: string; retries?: number; load?: Importer };
// `maybeDelivered`: the post may have reached Discord (a timeout or a reset after sending), so a
// resend could be a repeat. `permanent`: Discord refused this report itself (400): never retry it.
// `stop`: no later report can go through either (network, 5xx, 429, the webhook refused).
export type PostResult =
  | { ok: true; messageId: string | null }
  | { ok: false; error: string; status: number | null; maybeDelivered: boolean; permanent: boolean };

type Client = {
  send(options: unknown): Promise<{ id?: string }>;
  rest: { get(route: string, options: unknown): Promise<unknown> };
  destroy(): void;
};

// A WebhookClient whose every request ends by `deadline` (ms since epoch).
async function client(hook: Webhook, s: Settings, deadline: number, signal: AbortSignal): Promise<Client> {
  const { WebhookClient, DefaultRestOptions } = await loadOptional<typeof import('discord.js')>('discord.js', 'Discord reports (DISCORD_WEBHOOK_URL)', s.load);
  const remaining = () => Math.max(1, deadline - Date.now());
  const c = new WebhookClient(hook, {
    allowedMentions: { parse: [] },
    rest: {
      api: s.apiBase.replace(/\/+$/, ''),
      timeout: remaining(),
      retries: s.retries ?? 2,
      // No background sweepers: a short-lived CLI must not hold timers.
      hashSweepInterval: 0,
      handlerSweepInterval: 0,
      // discord.js sleeps out a 429 and retries; past our deadline it throws instead, and the
      // report stays queued.
      rejectOnRateLimit: (info: { retryAfter: number; timeToReset: number }) => Math.max(info.retryAfter, info.timeToReset) >= deadline - Date.now(),
      // Each request is aborted at the deadline as well as at discord.js's own timeout.
      makeRequest: (url: string, init: { signal?: AbortSignal }) =>
        DefaultRestOptions.makeRequest(url, { ...init, signal: init.signal ? AbortSignal.any([init.signal, signal]) : signal } as never),
    } as never,
  });
  return c as unknown as Client;
}

function describe(err: unknown): { error: string; status: number | null; maybeDelivered: boolean; permanent: boolean } {
  // Not installed: nothing left, and nothing later can go either, as in an outage; the report stays queued.
  if (err instanceof MissingPackageError) return { error: err.message, status: null, maybeDelivered: false, permanent: false };
  const e = err as { name?: string; status?: number; code?: string | number; message?: string; cause?: { code?: string }; retryAfter?: number; timeToReset?: number };
  if (e?.name === 'RateLimitError' || e?.timeToReset !== undefined) {
    return { error: `rate limited for ${Math.round(Math.max(e.retryAfter ?? 0, e.timeToReset ?? 0))} ms`, status: 429, maybeDelivered: false, permanent: false };
  }
  const status = typeof e?.status === 'number' ? e.status : null;
  if (status !== null) {
    // discord.js puts each refused field on its own line (`embeds[0].fields[0].value[BASE_TYPE_MAX_LENGTH]: ...`).
    return { error: `HTTP ${status}: ${String(e.message ?? '').split('\n').filter(Boolean).join('; ')}`, status, maybeDelivered: false, permanent: status === 400 };
  }
  const code = String(e?.code ?? e?.cause?.code ?? '');
  // Refused or unresolved: it never left. A timeout or reset: it may have arrived.
  const neverSent = /ECONNREFUSED|ENOTFOUND|EAI_AGAIN|ENETUNREACH|EHOSTUNREACH/.test(code) || /ECONNREFUSED|ENOTFOUND/.test(String(e?.message));
  const aborted = e?.name === 'AbortError' || /abort/i.test(String(e?.message));
  return { error: `${aborted ? 'timed out' : 'network'}: ${code || String(e?.message ?? err).split('\n')[0]}`, status: null, maybeDelivered: !neverSent, permanent: false };
}

// Posts one embed (`?wait=true`: the answer is the message itself, our proof of delivery).
export async function postEmbed(hook: Webhook, embed: Embed, s: Settings, deadline: number, signal?: AbortSignal): Promise<PostResult> {
  const stop = new AbortController();
  const timer = setTimeout(() => stop.abort(), Math.max(0, deadline - Date.now()));
  const onAbort = () => stop.abort();
  signal?.addEventListener('abort', onAbort, { once: true });
  if (signal?.aborted) stop.abort();
  let c: Client | null = null;
  try {
    c = await client(hook, s, deadline, stop.signal);
    const msg = await c.send({ embeds: [embed], username: s.username, allowedMentions: { parse: [] } });
    return { ok: true, messageId: msg?.id ?? null };
  } catch (err) {
    return { ok: false, ...describe(err) };
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
    c?.destroy();
  }
}

// GET the webhook itself: reachable, and the id and token are still valid. Nothing is posted.
export async function probeWebhook(hook: Webhook, s: Settings, deadline: number): Promise<{ ok: true; name: string | null } | { ok: false; error: string; status: number | null }> {
  const stop = new AbortController();
  const timer = setTimeout(() => stop.abort(), Math.max(0, deadline - Date.now()));
  let c: Client | null = null;
  try {
    c = await client(hook, s, deadline, stop.signal);
    const w = (await c.rest.get(`/webhooks/${hook.id}/${hook.token}`, { auth: false })) as { name?: string };
    return { ok: true, name: w?.name ?? null };
  } catch (err) {
    const d = describe(err);
    return { ok: false, error: d.error, status: d.status };
  } finally {
    clearTimeout(timer);
    c?.destroy();
  }
}
