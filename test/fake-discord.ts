// A loopback imitation of Discord's webhook REST API, enough for discord.js's WebhookClient:
// `POST /api/v10/webhooks/{id}/{token}?wait=true` answers the created message, `GET` the same path
// answers the webhook. Answers can be scripted per request (429 with retry_after and the
// rate-limit headers discord.js reads, 500), and the server can go down (connection refused) and
// come back on the same port. Like Discord, it refuses an embed past the documented limits, or
// with an empty title, name or value, with 400 and the `Invalid Form Body` errors tree.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export const HOOK_ID = '112233445566778899';
// 68 characters, like a real webhook token, so discord.js's own URL parser accepts it too.
export const HOOK_TOKEN = 'tok-' + 'A1b2C3d4E5'.repeat(6) + 'f6G7';
export const webhookUrl = (id = HOOK_ID, token = HOOK_TOKEN) => `https://discord.com/api/webhooks/${id}/${token}`;

export type Answer = { status: 200 } | { status: 500 } | { status: 429; retryAfter: number; global?: boolean } | { status: 400 } | { status: 'hang' };
export type Posted = { body: any; query: string; at: number; messageId: string };
export type Seen = { method: string; url: string; status: number | 'hang' };

export type FakeDiscord = {
  apiBase: string;
  webhookUrl: string;
  // Delivered messages (answered 200), in the order they arrived.
  messages: Posted[];
  // Posts refused for their content or embeds (answered 400), with what was wrong.
  refused: Array<{ body: any; problems: Problem[] }>;
  requests: Seen[];
  // Answers for the next POSTs, in order; after them, `fallback`.
  script: Answer[];
  fallback: Answer;
  down(): Promise<void>;
  up(): Promise<void>;
  close(): Promise<void>;
};

let snowflake = 1_300_000_000_000_000_000n;

// https://discord.com/developers/docs/resources/message#embed-object-embed-limits
const LIMITS = { title: 256, description: 4096, fieldName: 256, fieldValue: 1024, fields: 25, footer: 2048, author: 256, total: 6000 };

type Problem = { path: Array<string | number>; code: string; message: string };

// Discord's checks on a webhook message (its content, then its embeds); empty when it would take it.
export function messageProblems(body: { content?: unknown; embeds?: unknown }): Problem[] {
  const out: Problem[] = [];
  if (typeof body.content === 'string' && [...body.content].length > 2000) out.push({ path: ['content'], code: 'BASE_TYPE_MAX_LENGTH', message: 'Must be 2000 or fewer in length.' });
  return [...out, ...embedProblems(body.embeds)];
}

// Discord's checks on a webhook message's embeds; empty when it would take them.
export function embedProblems(embeds: unknown): Problem[] {
  const out: Problem[] = [];
  if (embeds === undefined) return out;
  if (!Array.isArray(embeds)) return [{ path: ['embeds'], code: 'BASE_TYPE_ARRAY', message: 'Must be an array.' }];
  if (embeds.length > 10) out.push({ path: ['embeds'], code: 'BASE_TYPE_MAX_LENGTH', message: 'Must be 10 or fewer in length.' });
  let total = 0;
  embeds.forEach((e: any, i) => {
    const str = (v: unknown, max: number, p: Array<string | number>, required: boolean) => {
      if (v === undefined || v === null) {
        if (required) out.push({ path: ['embeds', i, ...p], code: 'BASE_TYPE_REQUIRED', message: 'This field is required' });
        return;
      }
      const s = String(v);
      if (required && !s.trim()) out.push({ path: ['embeds', i, ...p], code: 'BASE_TYPE_REQUIRED', message: 'This field is required' });
      if ([...s].length > max) out.push({ path: ['embeds', i, ...p], code: 'BASE_TYPE_MAX_LENGTH', message: `Must be ${max} or fewer in length.` });
      total += [...s].length;
    };
    str(e.title, LIMITS.title, ['title'], false);
    str(e.description, LIMITS.description, ['description'], false);
    if (e.footer) str(e.footer.text, LIMITS.footer, ['footer', 'text'], true);
    if (e.author) str(e.author.name, LIMITS.author, ['author', 'name'], true);
    const fields = e.fields ?? [];
    if (fields.length > LIMITS.fields) out.push({ path: ['embeds', i, 'fields'], code: 'BASE_TYPE_MAX_LENGTH', message: `Must be ${LIMITS.fields} or fewer in length.` });
    fields.forEach((f: any, j: number) => {
      str(f.name, LIMITS.fieldName, ['fields', j, 'name'], true);
      str(f.value, LIMITS.fieldValue, ['fields', j, 'value'], true);
    });
  });
  if (total > LIMITS.total) out.push({ path: ['embeds'], code: 'MAX_EMBED_SIZE_EXCEEDED', message: `Embed size exceeds maximum size of ${LIMITS.total}` });
  return out;
}

// Discord's shape: `{ errors: { embeds: { 0: { fields: { 1: { value: { _errors: [...] } } } } } } }`.
function errorTree(problems: Problem[]): Record<string, unknown> {
  const root: Record<string, any> = {};
  for (const p of problems) {
    let node = root;
    for (const k of p.path) node = node[k] ??= {};
    (node._errors ??= []).push({ code: p.code, message: p.message });
  }
  return root;
}

export async function startFakeDiscord(): Promise<FakeDiscord> {
  const messages: Posted[] = [];
  const refused: Array<{ body: any; problems: Problem[] }> = [];
  const requests: Seen[] = [];
  const hanging = new Set<http.ServerResponse>();
  let port = 0;
  const state = { script: [] as Answer[], fallback: { status: 200 } as Answer };

  const handler = (req: http.IncomingMessage, res: http.ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const bytes = Buffer.concat(chunks);
      const u = new URL(req.url ?? '/', 'http://x');
      const m = /^\/api\/v10\/webhooks\/(\d+)\/([^/]+)$/.exec(u.pathname);
      const json = (status: number, body: unknown, headers: Record<string, string> = {}) => {
        requests.push({ method: req.method ?? '', url: u.pathname, status });
        res.writeHead(status, { 'content-type': 'application/json', ...headers });
        res.end(JSON.stringify(body));
      };
      if (!m) return json(404, { message: '404: Not Found', code: 0 });
      if (m[1] !== HOOK_ID || m[2] !== HOOK_TOKEN) return json(401, { message: 'Invalid Webhook Token', code: 50027 });
      if (req.method === 'GET') {
        return json(200, { id: HOOK_ID, type: 1, name: 'nightshift-test', channel_id: '223344556677889900', guild_id: '334455667788990011', application_id: null, avatar: null, token: HOOK_TOKEN });
      }
      if (req.method !== 'POST') return json(405, { message: '405: Method Not Allowed', code: 0 });
      const answer = state.script.shift() ?? state.fallback;
      if (answer.status === 'hang') {
        requests.push({ method: 'POST', url: u.pathname, status: 'hang' });
        hanging.add(res);
        return;
      }
      if (answer.status === 500) return json(500, { message: '500: Internal Server Error', code: 0 });
      if (answer.status === 400) {
        return json(400, { message: 'Invalid Form Body', code: 50035, errors: { embeds: { 0: { _errors: [{ code: 'MAX_EMBED_SIZE_EXCEEDED', message: 'Embed size exceeds maximum size of 6000' }] } } } });
      }
      if (answer.status === 429) {
        return json(
          429,
          { message: 'You are being rate limited.', retry_after: answer.retryAfter, global: !!answer.global },
          {
            'retry-after': String(Math.ceil(answer.retryAfter)),
            'x-ratelimit-limit': '5',
            'x-ratelimit-remaining': '0',
            'x-ratelimit-reset-after': String(answer.retryAfter),
            'x-ratelimit-bucket': 'fake-bucket',
            'x-ratelimit-scope': answer.global ? 'global' : 'user',
            ...(answer.global ? { 'x-ratelimit-global': 'true' } : {}),
          },
        );
      }
      // Like Discord: a body that is not UTF-8 or not JSON is refused whole.
      let body: any = null;
      try {
        body = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
      } catch {
        refused.push({ body: bytes.toString('latin1'), problems: [{ path: [], code: 'INVALID_JSON', message: 'The request body contains invalid JSON.' }] });
        return json(400, { message: 'The request body contains invalid JSON.', code: 50109 });
      }
      const problems = messageProblems(body);
      if (problems.length) {
        refused.push({ body, problems });
        return json(400, { message: 'Invalid Form Body', code: 50035, errors: errorTree(problems) });
      }
      const messageId = String(++snowflake);
      messages.push({ body, query: u.search, at: Date.now(), messageId });
      return json(
        200,
        {
          id: messageId, type: 0, content: body.content ?? '', channel_id: '223344556677889900', webhook_id: HOOK_ID,
          author: { id: HOOK_ID, username: body.username ?? 'nightshift-test', discriminator: '0000', avatar: null, bot: true },
          embeds: body.embeds ?? [], attachments: [], mentions: [], mention_roles: [], pinned: false, mention_everyone: false, tts: false,
          timestamp: new Date().toISOString(), edited_timestamp: null, flags: 0, components: [],
        },
        { 'x-ratelimit-limit': '5', 'x-ratelimit-remaining': '4', 'x-ratelimit-reset-after': '1', 'x-ratelimit-bucket': 'fake-bucket' },
      );
    });
  };

  let server: http.Server | null = null;
  const listen = async () => {
    server = http.createServer(handler);
    await new Promise<void>((resolve, reject) => {
      server!.once('error', reject);
      server!.listen(port, '127.0.0.1', () => resolve());
    });
    port = (server!.address() as AddressInfo).port;
  };
  const stop = async () => {
    if (!server) return;
    for (const r of hanging) r.destroy();
    hanging.clear();
    const s = server;
    server = null;
    s.closeAllConnections();
    await new Promise<void>((resolve) => s.close(() => resolve()));
    // Let clients see their kept-alive sockets close, as they would long before a real next run.
    await new Promise((r) => setTimeout(r, 50));
  };
  await listen();
  return {
    apiBase: `http://127.0.0.1:${port}/api`,
    webhookUrl: webhookUrl(),
    messages,
    refused,
    requests,
    get script() {
      return state.script;
    },
    set script(v: Answer[]) {
      state.script = v;
    },
    get fallback() {
      return state.fallback;
    },
    set fallback(v: Answer) {
      state.fallback = v;
    },
    down: stop,
    up: listen,
    close: stop,
  };
}
