// A loopback imitation of the Anthropic Messages API, enough for the real Claude Code CLI to run
// offline: the tests' stand-in for the API, and what `nightshift rehearse` serves. Behaviour is picked per request by `SCENARIO=<name>` in the prompt, so one server serves
// tests running in parallel; tests may also register their own scripts. Like the real API it
// answers 401 to a request without a key it knows (on every path), 400 to one without
// `anthropic-version`, sends `ping` events in its streams, and can
// break a stream with an `error` event; an unknown scenario is a 400 naming it, never a default.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHash, randomBytes } from 'node:crypto';
import zlib from 'node:zlib';

export type Block =
  | { type: 'text'; text: string }
  | { type: 'tool_use'; name: string; input: unknown };

export type Usage = { input_tokens: number; output_tokens: number; cache_creation_input_tokens?: number; cache_read_input_tokens?: number };
// What a script may say of its usage: without input_tokens the imitation counts the request's
// input from its body, as the API bills it (inputTokensOf).
export type ScriptUsage = Omit<Usage, 'input_tokens'> & { input_tokens?: number };

// The key every test environment holds (test/helpers.ts claudeTestEnv). Sessions reach the API
// through the supervisor's proxy (sessions/wall/api-proxy.ts), which puts back this real key in place
// of the session's token: the fake sees what the real API would.
export const TEST_API_KEY = 'sk-test-nightshift-key';

// An `error` event the real API sends mid-stream, after a 200 (e.g. overloaded_error).
export type StreamError = { type: string; message: string };

export type Reply =
  // pingEvery: a `ping` after every that many deltas (the real API pings when it is slow);
  // streamError: sent after the first block's first delta, and the stream ends there.
  // deltaUsage: fields message_delta carries besides output_tokens (a client that believes them
  // over message_start's counts less than was billed).
  // deltaEveryMs: a pause after each delta (a long answer streamed slowly, the CLI silent on
  // stdout meanwhile unless it shows partial messages).
  | { kind: 'message'; blocks: Block[]; usage?: ScriptUsage; stopReason?: string; deltaSize?: number; pingEvery?: number; streamError?: StreamError; deltaUsage?: Record<string, number>; deltaEveryMs?: number }
  | { kind: 'status'; status: number; retryAfter?: number; headers?: Record<string, string> }
  | { kind: 'hang' }            // accept the request, never answer
  | { kind: 'stall'; usage?: ScriptUsage };  // send message_start, then nothing

// What a script sees: the turn (how many assistant messages the conversation holds so far), the
// prompt text, the last tool_result text, if any, and `attempt`: how many times this server was
// already asked this prompt at this turn (a retry; give parallel tests distinct prompts).
export type Turn = { turn: number; prompt: string; lastToolResult: string | null; body: any; attempt: number };
export type Script = (t: Turn) => Reply;

// What the imitation served and would bill, per answered message: the truth a meter is checked
// against. Output is never more than the request's max_tokens (the real API stops there);
// sha256: of the bytes it wrote, compressed or not.
export type ServedRecord = { model: string; stream: boolean; maxTokens: number; usage: Usage; compressed: boolean; sha256: string; prompt: string };

// toolResult: the text of the last tool_result the request carried back, as the session sent it.
// `at`: when it arrived (performance.now(), this process's clock): the benches' time between calls.
export type RequestRecord = { scenario: string; turn: number; stream: boolean; model: string; headers: Record<string, unknown>; toolResult: string | null; at: number };

const DEFAULT_USAGE: ScriptUsage = { output_tokens: 100 };

// The input the API bills a request, counted from its body the way the API counts it, in this
// file's own terms (never the meter's): text about 4 bytes a token; an image by its pixels after
// the API's resize (long edge at most 1568 px, at most 1092x1092's pixels, the largest square of
// the vision guide's table left as it is; ~750 pixels a token), one it
// cannot size at 1,600; a PDF at PAGE_TOKENS a page (each page is its text and an image of it: a
// page of one line, as the tests write them, came to ~970 tokens against the real API in issue 37's
// review, 90 pages billed $0.52 over two sonnet calls).
export const BYTES_PER_TOKEN = 4;
export const PAGE_TOKENS = 1000;
function imageBill(data: Buffer): number {
  if (data.length < 24 || data.readUInt32BE(0) !== 0x89504e47) return 1600;
  let w = data.readUInt32BE(16);
  let h = data.readUInt32BE(20);
  const edge = Math.min(1, 1568 / Math.max(w, h));
  const area = Math.min(1, Math.sqrt((1092 * 1092) / (w * h * edge * edge)));
  w = Math.floor(w * edge * area);
  h = Math.floor(h * edge * area);
  return Math.ceil((w * h) / 750);
}
// Pages as a renderer counts them: pdf.js opens the file (object streams, filters, predictors are
// its to read, never a scan of the file's text), and a page tree's /Count below the pages it holds
// is not believed (pdf.js itself believes it: issue 52's gap): every object that is a page of the
// tree counts, by its place in the tree, object numbers tried in order until 256 in a row are no
// page. A file it cannot open has none. Kept by hash: a file carried on every call is opened once.
const pagesSeen = new Map<string, number>();
async function pdfPages(data: Buffer): Promise<number> {
  const key = createHash('sha256').update(data).digest('hex');
  const known = pagesSeen.get(key);
  if (known !== undefined) return known;
  const lib = await import('pdfjs-dist/legacy/build/pdf.mjs');
  const task = lib.getDocument({ data: new Uint8Array(data), verbosity: 0 });
  let pages = 0;
  try {
    const doc = await task.promise;
    pages = doc.numPages;
    for (let num = 1, misses = 0; num < 100_000 && misses < 256; num++) {
      try {
        pages = Math.max(pages, (await doc.getPageIndex({ num, gen: 0 })) + 1);
        misses = 0;
      } catch {
        misses++;
      }
    }
  } catch {
    pages = 0;
  } finally {
    await task.destroy().catch(() => {});
  }
  pagesSeen.set(key, pages);
  return pages;
}
export async function inputTokensOf(body: any, bodyBytes: number): Promise<number> {
  let media = 0;
  let mediaBytes = 0;
  const pdfs: Buffer[] = [];
  const walk = (v: any): void => {
    if (Array.isArray(v)) return v.forEach(walk);
    if (!v || typeof v !== 'object') return;
    if ((v.type === 'image' || v.type === 'document') && v.source?.type === 'base64' && typeof v.source.data === 'string') {
      const data = Buffer.from(v.source.data, 'base64');
      mediaBytes += v.source.data.length;
      if (v.type === 'image') media += imageBill(data);
      else pdfs.push(data);
      return;
    }
    for (const x of Object.values(v)) walk(x);
  };
  walk(body);
  for (const d of pdfs) media += (await pdfPages(d)) * PAGE_TOKENS;
  return Math.ceil(Math.max(0, bodyBytes - mediaBytes) / BYTES_PER_TOKEN) + media;
}

export const text = (t: string): Reply => ({ kind: 'message', blocks: [{ type: 'text', text: t }] });
export const bash = (command: string, say = 'I will call Bash.'): Reply => ({
  kind: 'message',
  blocks: [{ type: 'text', text: say }, { type: 'tool_use', name: 'Bash', input: { command, description: 'run' } }],
  stopReason: 'tool_use',
});

// A tool call that runs for `seconds`. Not a bare `sleep N`: from 2.1.332 the CLI refuses a Bash
// command whose first part is `sleep` of 25 s or more (it tells the model to use Monitor or
// run_in_background instead), so the call would end at once. A program that runs long is what a
// real session's long call is; its command line still holds `sleep N` for processesMatching.
export const longCall = (seconds: number | string): string => `perl -e 'sleep ${seconds}'`;

function arg(prompt: string, key: string): string | null {
  const m = new RegExp(`${key}=(\\S+)`).exec(prompt);
  return m ? m[1] : null;
}

// Built-in scenarios; `n` is how many tool turns before a scenario stops.
export const SCENARIOS: Record<string, Script> = {
  text: () => text('hi from the fake API'),
  tool: ({ turn, lastToolResult }) => (turn === 0 ? bash('echo hi') : text(`Tool said: ${JSON.stringify(lastToolResult)}. Done.`)),
  // The same call forever: a loop.
  loop: () => bash('echo again'),
  // A B A B ...: a short cycle.
  cycle: ({ turn }) => (turn % 2 === 0 ? bash('echo ping') : bash('echo pong')),
  // The same tool with a different input each time, then done: never a loop.
  varied: ({ turn, prompt }) => (turn < Number(arg(prompt, 'N') ?? 8) ? bash(`echo step-${turn}`) : text('All steps done.')),
  // Different inputs forever: only max_turns or a budget stops it.
  endless: ({ turn }) => bash(`echo turn-${turn}`),
  // Each call costs a lot: 40k output tokens ($0.603 a call on sonnet).
  costly: ({ turn }) => ({ ...bash(`echo costly-${turn}`), usage: { input_tokens: 1000, output_tokens: 40_000 } }),
  hang: () => ({ kind: 'hang' }),
  stall: () => ({ kind: 'stall' }),
  // Starts a detached grandchild (its own session, like a daemon would) and then the API hangs.
  'bg-hang': ({ turn, prompt }) =>
    turn === 0 ? bash(`setsid sleep ${arg(prompt, 'SLEEP') ?? '600'} >/dev/null 2>&1 < /dev/null & echo started`) : { kind: 'hang' },
  // A long answer streamed slowly: PIECES deltas, EVERY ms apart (the API alive all along).
  'slow-answer': ({ prompt }) => ({ kind: 'message', blocks: [{ type: 'text', text: 'slow '.repeat(Number(arg(prompt, 'PIECES') ?? 20)) }], deltaSize: 5, deltaEveryMs: Number(arg(prompt, 'EVERY') ?? 250) }),
  // A tool that itself runs for a long time (the CLI goes silent meanwhile).
  'slow-tool': ({ turn, prompt }) => (turn === 0 ? bash(longCall(arg(prompt, 'SLEEP') ?? '600')) : text('slept')),
  // Runs a tool that prints the session's secrets, then repeats what it saw.
  'echo-secret': ({ turn, lastToolResult }) =>
    turn === 0
      ? bash(
          'echo "key=$ANTHROPIC_API_KEY token=$MY_SERVICE_TOKEN hook=$DISCORD_WEBHOOK_URL db=$DATABASE_URL pw=$SMTP_PASSWORD pat=$GH_PAT"; ' +
            `node -e 'for (const k of ["DATABASE_URL","SMTP_PASSWORD","DISCORD_WEBHOOK_URL"]) console.log(k, encodeURIComponent(process.env[k]))'`,
        )
      : text(`The tool printed: ${lastToolResult}`),
  // Starts a detached grandchild, then answers with SIZE characters of text (a huge transcript line).
  flood: ({ turn, prompt }) =>
    turn === 0
      ? bash(`setsid sleep ${arg(prompt, 'SLEEP') ?? '600'} >/dev/null 2>&1 < /dev/null & echo started`)
      : { kind: 'message', blocks: [{ type: 'text', text: 'flood '.repeat(Math.ceil(Number(arg(prompt, 'SIZE') ?? 600_000) / 6)) }], deltaSize: 16_384 },
  // Writes a file in the vault, then finishes.
  write: ({ turn, prompt }) =>
    turn === 0 ? bash(`echo ${arg(prompt, 'CONTENT') ?? 'written'} > ${arg(prompt, 'FILE') ?? 'out.txt'}`) : text('Wrote the file.'),
  // FAILS times STATUS (529, overloaded), then an answer: what the CLI's own retries are for.
  retry: ({ attempt, prompt }) =>
    attempt < Number(arg(prompt, 'FAILS') ?? 1) ? { kind: 'status', status: Number(arg(prompt, 'STATUS') ?? 529) } : text(`answered after ${attempt} refused`),
  // FAILS times a stream that starts, then breaks with an `error` event of TYPE; then an answer.
  'stream-error': ({ attempt, prompt }) =>
    attempt < Number(arg(prompt, 'FAILS') ?? 1)
      ? { kind: 'message', blocks: [{ type: 'text', text: 'this answer breaks off' }], streamError: { type: arg(prompt, 'TYPE') ?? 'overloaded_error', message: 'Overloaded' } }
      : text(`answered after ${attempt} broken streams`),
  // A ping between every two deltas.
  pings: () => ({ kind: 'message', blocks: [{ type: 'text', text: 'answered between pings' }], pingEvery: 1 }),
};

function lastUser(body: any): any {
  const msgs: any[] = body.messages ?? [];
  for (let i = msgs.length - 1; i >= 0; i--) if (msgs[i].role === 'user') return msgs[i];
  return null;
}

function turnOf(body: any): Omit<Turn, 'attempt'> {
  const msgs: any[] = body.messages ?? [];
  const turn = msgs.filter((m) => m.role === 'assistant').length;
  const first = msgs.find((m) => m.role === 'user');
  const texts = (m: any): string =>
    typeof m?.content === 'string' ? m.content : (m?.content ?? []).map((c: any) => (c.type === 'text' ? c.text : '')).join('\n');
  const prompt = texts(first);
  let lastToolResult: string | null = null;
  for (const c of lastUser(body)?.content ?? []) {
    if (c?.type === 'tool_result') {
      lastToolResult = typeof c.content === 'string' ? c.content : (c.content ?? []).map((x: any) => x.text ?? '').join('');
    }
  }
  return { turn, prompt, lastToolResult, body };
}

const id = (prefix: string) => `${prefix}_${randomBytes(12).toString('hex')}`;

type Sink = { write(text: string): void; end(): void };
function sse(res: Sink, event: string, data: unknown) {
  res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
}

// The body as written: gzip (flushed per write, so a stream still streams) when the prompt says
// COMPRESS=gzip and the client accepts it; `done` gets the sha256 of the bytes on the wire.
function sinkFor(res: http.ServerResponse, gzip: boolean, done: (sha: string) => void): Sink {
  const hash = createHash('sha256');
  if (!gzip) {
    return { write: (t) => (hash.update(t), res.write(t)), end: () => (res.end(), done(hash.digest('hex'))) };
  }
  const gz = zlib.createGzip({ flush: zlib.constants.Z_SYNC_FLUSH });
  gz.on('data', (c) => (hash.update(c), res.write(c)));
  gz.on('end', () => (res.end(), done(hash.digest('hex'))));
  return { write: (t) => gz.write(t), end: () => gz.end() };
}

function messageJson(model: string, blocks: Block[], usage: Usage, stopReason: string) {
  return {
    id: id('msg'), type: 'message', role: 'assistant', model,
    content: blocks.map((b) => (b.type === 'text' ? b : { type: 'tool_use', id: id('toolu'), name: b.name, input: b.input })),
    stop_reason: stopReason, stop_sequence: null,
    usage: { cache_creation_input_tokens: 0, cache_read_input_tokens: 0, ...usage },
  };
}

export function pieces(text: string, size: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out.length ? out : [''];
}

// A subscription's usage windows on every reply, as the prompt asks: WINDOW5H=0.85 RESET5H=<epoch s>
// (and 7D), in the header names the CLI 2.1.197 reads.
function windowHeaders(prompt: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const w of ['5h', '7d']) {
    const u = arg(prompt, `WINDOW${w.toUpperCase()}`);
    if (u === null) continue;
    out[`anthropic-ratelimit-unified-${w}-utilization`] = u;
    const r = arg(prompt, `RESET${w.toUpperCase()}`);
    if (r !== null) out[`anthropic-ratelimit-unified-${w}-reset`] = r;
    out['anthropic-ratelimit-unified-status'] = 'allowed';
  }
  return out;
}

// What a refusal says of when to come back, as the prompt asks: RESET=<epoch s> (a subscription's
// window rejected, in the headers the real API sends) and RETRYAFTER=<seconds>.
function limitHeaders(prompt: string): Record<string, string> {
  const out: Record<string, string> = {};
  const reset = arg(prompt, 'RESET');
  if (reset !== null) Object.assign(out, { 'anthropic-ratelimit-unified-status': 'rejected', 'anthropic-ratelimit-unified-reset': reset });
  const after = arg(prompt, 'RETRYAFTER');
  if (after !== null) out['retry-after'] = after;
  return out;
}

function streamMessage(raw: http.ServerResponse, model: string, reply: Extract<Reply, { kind: 'message' }>, usage: Usage, stopReason: string, gzip: boolean, done: (sha: string) => void, deltaUsage?: Record<string, number>, extra: Record<string, string> = {}) {
  const { blocks, deltaSize = 7, pingEvery, streamError, deltaEveryMs } = reply;
  raw.writeHead(200, { 'content-type': 'text/event-stream', 'request-id': id('req'), 'cache-control': 'no-cache', ...(gzip ? { 'content-encoding': 'gzip' } : {}), ...extra });
  const res = sinkFor(raw, gzip, done);
  // The events in order, written at once or (deltaEveryMs) each delta after a pause.
  const events: Array<[string, unknown]> = [];
  const ev = (event: string, data: unknown) => events.push([event, data]);
  let deltas = 0;
  const delta = (data: unknown) => {
    ev('content_block_delta', data);
    if (pingEvery && ++deltas % pingEvery === 0) ev('ping', { type: 'ping' });
  };
  const msgId = id('msg');
  ev('message_start', {
    type: 'message_start',
    message: {
      id: msgId, type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null,
      usage: { cache_creation_input_tokens: 0, cache_read_input_tokens: 0, ...usage, output_tokens: 1 },
    },
  });
  // The real API pings once near the start of every stream.
  ev('ping', { type: 'ping' });
  // Like the real API, text and tool input arrive in small deltas (a secret spans several).
  build: for (const [index, b] of blocks.entries()) {
    if (b.type === 'text') {
      ev('content_block_start', { type: 'content_block_start', index, content_block: { type: 'text', text: '' } });
      for (const piece of pieces(b.text, deltaSize)) {
        delta({ type: 'content_block_delta', index, delta: { type: 'text_delta', text: piece } });
        if (streamError) {
          ev('error', { type: 'error', error: streamError });
          break build;
        }
      }
    } else {
      ev('content_block_start', { type: 'content_block_start', index, content_block: { type: 'tool_use', id: id('toolu'), name: b.name, input: {} } });
      for (const piece of pieces(JSON.stringify(b.input), 8)) delta({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: piece } });
    }
    ev('content_block_stop', { type: 'content_block_stop', index });
  }
  if (!streamError) {
    ev('message_delta', { type: 'message_delta', delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: usage.output_tokens, ...deltaUsage } });
    ev('message_stop', { type: 'message_stop' });
  }
  const emit = (from: number) => {
    for (let i = from; i < events.length; i++) {
      sse(res, events[i][0], events[i][1]);
      if (deltaEveryMs && events[i][0] === 'content_block_delta') {
        setTimeout(() => !raw.destroyed && emit(i + 1), deltaEveryMs);
        return;
      }
    }
    res.end();
  };
  emit(0);
}

export type FakeApi = {
  url: string;
  port: number;
  // The requests answered past the key check (unknown scenarios included).
  requests: RequestRecord[];
  // How many requests were refused with 401 (no key, or one the server does not know).
  unauthorized: number;
  // Every request that reached the server, as `METHOD raw-path`, before any check: what a proxy let through.
  seen: string[];
  // The count_tokens calls answered (they are not turns, so not in `requests`).
  countTokens: number;
  // Every message answered with a 200, with the usage it reported.
  served: ServedRecord[];
  script(name: string, fn: Script): void;
  // Another key to accept from now on (a test whose environment holds its own).
  accept(key: string): void;
  // A subscription (OAuth) token, as the real API takes one: as a bearer with the OAuth beta
  // header, else 401; `expired`: refused with the real API's words for an expired token.
  oauth(token: string, o?: { expired?: boolean }): void;
  close(): Promise<void>;
};

function json(res: http.ServerResponse, status: number, type: string, message: string) {
  res.writeHead(status, { 'content-type': 'application/json', 'request-id': id('req') });
  res.end(JSON.stringify({ type: 'error', error: { type, message } }));
}

// The key a request carries, in x-api-key or as a bearer (an OAuth token or gateway credential).
function keyOf(headers: http.IncomingHttpHeaders): string | null {
  const x = headers['x-api-key'];
  if (typeof x === 'string' && x) return x;
  const m = /^Bearer (.+)$/.exec(String(headers.authorization ?? ''));
  return m ? m[1] : null;
}

// Starts the imitation on 127.0.0.1 with an OS-chosen port; `keys` are the credentials it accepts.
// `countTokens: false`: an upstream without count_tokens (a gateway, a plan without it): 404 there.
export async function startFakeApi(o: { keys?: string[]; port?: number; countTokens?: boolean } = {}): Promise<FakeApi> {
  const scripts: Record<string, Script> = { ...SCENARIOS };
  const keys = new Set(o.keys ?? [TEST_API_KEY]);
  const oauthTokens = new Map<string, { expired: boolean }>();
  const requests: RequestRecord[] = [];
  const served: ServedRecord[] = [];
  const asked = new Map<string, number>();
  let unauthorized = 0;
  let countTokens = 0;
  const seen: string[] = [];
  const open = new Set<http.ServerResponse>();
  const server = http.createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    const route = req.url?.split('?')[0];
    // The key first, on every path, as the real API: batches, files and models are served to a
    // key it knows, so an unknown key is a 401 there too, never a 404 a bug could hide behind.
    const key = keyOf(req.headers);
    const token = key === null ? undefined : oauthTokens.get(key);
    if (token) {
      // Worded like the real API's answers; the beta header is what marks a bearer as OAuth.
      const beta = String(req.headers['anthropic-beta'] ?? '').split(',').map((b) => b.trim()).includes('oauth-2025-04-20');
      const refusal = !beta || !String(req.headers.authorization ?? '').startsWith('Bearer ')
        ? 'OAuth authentication is currently not supported.'
        : token.expired ? 'OAuth token has expired. Please obtain a new token or refresh your existing token.' : null;
      if (refusal) {
        unauthorized++;
        json(res, 401, 'authentication_error', refusal);
        req.resume();
        return;
      }
    } else if (key === null || !keys.has(key)) {
      unauthorized++;
      // The real API's words; the key itself is never echoed.
      json(res, 401, 'authentication_error', key === null ? 'x-api-key header is required' : 'invalid x-api-key');
      req.resume();
      return;
    }
    // The two paths the CLI uses; anything else (batches, files, a ../ climb) is not imitated: 404.
    if (req.method !== 'POST' || (route !== '/v1/messages' && (route !== '/v1/messages/count_tokens' || o.countTokens === false))) {
      json(res, 404, 'not_found_error', 'Not Found');
      req.resume();
      return;
    }
    // The real API refuses a call without its version header (the CLI and the SDK always send one).
    if (!req.headers['anthropic-version']) {
      json(res, 400, 'invalid_request_error', 'anthropic-version: header is required');
      req.resume();
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', async () => {
      let body: any;
      const raw = Buffer.concat(chunks);
      try {
        body = JSON.parse(raw.toString('utf8'));
      } catch {
        res.writeHead(400).end();
        return;
      }
      // The CLI counts a large MCP result before it keeps it: about 4 characters a token.
      if (route === '/v1/messages/count_tokens') {
        countTokens++;
        res.writeHead(200, { 'content-type': 'application/json', 'request-id': id('req') });
        res.end(JSON.stringify({ input_tokens: await inputTokensOf(body, raw.length) }));
        return;
      }
      const input = await inputTokensOf(body, raw.length);
      const got = turnOf(body);
      const scenario = arg(got.prompt, 'SCENARIO') ?? 'text';
      requests.push({ scenario, turn: got.turn, stream: body.stream === true, model: body.model, headers: req.headers, toolResult: got.lastToolResult, at: performance.now() });
      const askedKey = `${got.turn}\u0000${got.prompt}`;
      const t: Turn = { ...got, attempt: asked.get(askedKey) ?? 0 };
      asked.set(askedKey, t.attempt + 1);
      const m = /^err(\d{3})$/.exec(scenario);
      const script = scripts[scenario];
      if (!m && !script) {
        // A misspelled scenario must fail the test that wrote it, not quietly answer text. A 400
        // is not retried: the CLI ends the turn with this message in its result.
        json(res, 400, 'invalid_request_error', `fake API: unknown scenario ${JSON.stringify(scenario)} (known: ${Object.keys(scripts).sort().join(', ')}, errNNN)`);
        return;
      }
      const reply: Reply = m ? { kind: 'status', status: Number(m[1]), headers: limitHeaders(got.prompt) } : script(t);
      const model = String(body.model ?? 'claude-sonnet-5');
      open.add(res);
      res.on('close', () => open.delete(res));
      switch (reply.kind) {
        case 'status': {
          const headers: Record<string, string> = { 'content-type': 'application/json', ...reply.headers };
          if (reply.retryAfter !== undefined) headers['retry-after'] = String(reply.retryAfter);
          res.writeHead(reply.status, headers);
          res.end(JSON.stringify({ type: 'error', error: { type: reply.status === 529 ? 'overloaded_error' : 'api_error', message: `fake ${reply.status}` } }));
          return;
        }
        case 'hang':
          return; // the socket stays open until the client or close() ends it
        case 'stall':
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          sse(res, 'message_start', {
            type: 'message_start',
            message: { id: id('msg'), type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: input, ...(reply.usage ?? DEFAULT_USAGE), output_tokens: 1 } },
          });
          return;
        case 'message': {
          // Like the real API: never more output than max_tokens, and it says so.
          const asked: Usage = { input_tokens: input, ...(reply.usage ?? DEFAULT_USAGE) };
          const maxTokens = Number.isSafeInteger(body.max_tokens) ? body.max_tokens : Infinity;
          const usage = { ...asked, output_tokens: Math.min(asked.output_tokens, maxTokens) };
          const clipped = usage.output_tokens < asked.output_tokens;
          const stop = clipped ? 'max_tokens' : reply.stopReason ?? (reply.blocks.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn');
          const gzip = arg(got.prompt, 'COMPRESS') === 'gzip' && /\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''));
          const record = (sha256: string) => served.push({ model, stream: body.stream === true, maxTokens, usage: { cache_creation_input_tokens: 0, cache_read_input_tokens: 0, ...usage }, compressed: gzip, sha256, prompt: got.prompt });
          if (body.stream === true) {
            if (reply.streamError) streamMessage(res, model, reply, usage, stop, gzip, () => {}, reply.deltaUsage, windowHeaders(got.prompt));
            else streamMessage(res, model, reply, usage, stop, gzip, record, reply.deltaUsage, windowHeaders(got.prompt));
          }
          // Without a stream the same failure is the error's status (overloaded: 529).
          else if (reply.streamError) json(res, reply.streamError.type === 'overloaded_error' ? 529 : 500, reply.streamError.type, reply.streamError.message);
          else {
            res.writeHead(200, { 'content-type': 'application/json', 'request-id': id('req'), ...windowHeaders(got.prompt) });
            const text = JSON.stringify(messageJson(model, reply.blocks, usage, stop));
            res.end(text);
            record(createHash('sha256').update(text).digest('hex'));
          }
        }
      }
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port ?? 0, '127.0.0.1', resolve);
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    served,
    seen,
    get unauthorized() {
      return unauthorized;
    },
    get countTokens() {
      return countTokens;
    },
    script: (name, fn) => void (scripts[name] = fn),
    accept: (key) => void keys.add(key),
    oauth: (token, o = {}) => void oauthTokens.set(token, { expired: o.expired ?? false }),
    close: () =>
      new Promise<void>((resolve) => {
        for (const r of open) r.destroy();
        server.closeAllConnections?.();
        server.close(() => resolve());
      }),
  };
}
