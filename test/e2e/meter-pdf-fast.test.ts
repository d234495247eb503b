// Issue 37's PDF and fast-mode tests, end to end. A PDF is billed by its pages, not its bytes: the
// real CLI Reads a 90-page PDF of a few KB (it first asks count_tokens for the file, then attaches
// it to its next calls). Against a $0.30 session the proxy refuses the first call carrying it before
// it goes, having counted at least 90 pages at the API's own figure (written out here), and what
// the API served stays within the reservation. The controls: the same session with room, where the
// imitation (billing each page as the API did in issue 37's review) serves more than $0.30 for the
// calls carrying it, the harm the count keeps out; and the estimate from the body's bytes alone
// (the meter before), which admits such a call at $0.30.
// Fast mode (`speed: "fast"`), which the pinned CLI does not send: a call through the session's
// API proxy to the imitation is metered at the fast rate, written out here ($30/$150 a million on
// Opus 4.6); the control, the same call at standard speed, at $5/$25.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { describe, test } from 'node:test';
import { SessionMeter } from '../../budget/meter.js';
import { lookupPrice } from '../../budget/pricing.js';
import { fitCall } from '../../budget/reservation.js';
import { startApiProxy, type ApiProxy } from '../../sessions/wall/api-proxy.js';
import { TEST_API_KEY, type Reply, type ServedRecord, type Turn } from '../fake-api.js';
import { pdf, pdfHidden } from '../fixtures/media-files.js';
import { textScanPdfPages } from '../fixtures/text-scan-meter.js';
import { configYaml, fakeApiPerFile, nightshift, waitFor, workspace, writeAgent, type Workspace } from '../helpers.js';

const api = fakeApiPerFile();
const PAGES = 90;
// What the API billed a page of one line in issue 37's review (90 pages, ~87k tokens a call); the
// API's PDF guide puts a page of text at 1,500-3,000.
const PAGE_TOKENS = 970;
const SONNET = { input: 3, output: 15 };
const usd = (s: ServedRecord[]) => s.reduce((sum, r) => sum + (r.usage.input_tokens * SONNET.input + r.usage.output_tokens * SONNET.output) / 1e6, 0);
const documentsIn = (body: unknown) => (JSON.stringify(body).match(/"type":"document"/g) ?? []).length;
const logLines = (ws: Workspace) => fs.readdirSync(ws.logs, { recursive: true, withFileTypes: true }).filter((e) => e.isFile() && e.name.endsWith('.log'))
  .flatMap((e) => fs.readFileSync(path.join(e.parentPath, e.name), 'utf8').split('\n')).filter((l) => l.startsWith('{')).map((l) => JSON.parse(l));

// Read the PDF, then a note (a second call carries the PDF again), then done.
const script = (t: Turn): Reply => {
  const read = (file: string): Reply => ({ kind: 'message', blocks: [{ type: 'tool_use', name: 'Read', input: { file_path: file } }], usage: { output_tokens: 50 } });
  const pdfFile = /PDF=(\S+)/.exec(t.prompt)![1];
  if (t.turn === 0) return read(pdfFile);
  if (t.turn === 1) return read(path.join(path.dirname(pdfFile), 'note.txt'));
  return { kind: 'message', blocks: [{ type: 'text', text: `read it (${documentsIn(t.body)} document)` }], usage: { output_tokens: 50 } };
};

// The PDF as a plain file, and written each of the three ways that hid its pages from the text
// scan the meter used (issue 52: an object stream's header with a key holding "obj", a comment
// inside it, a PNG predictor), each of which that scan counted as 1 page.
const FILES = [
  ['plain', () => pdf(PAGES)],
  ['obj-key', () => pdfHidden(PAGES, 'obj-key')],
  ['comment', () => pdfHidden(PAGES, 'comment')],
  ['predictor', () => pdfHidden(PAGES, 'predictor')],
] as const;

describe('a PDF through the meter with the real CLI', () => {
  for (const [shape, make] of FILES)
  for (const [name, reservation, refused] of [
    [`a ${PAGES}-page PDF (${shape}) against a $0.30 session: the call carrying it is refused before it goes, counted at its pages, and the API serves less than the reservation`, 0.3, true],
    [`control: the same PDF (${shape}) in a session with $10 to spend: the calls carrying it go, and the API bills them more than $0.30`, 10, false],
  ] as const) {
    test(name, { timeout: 180_000 }, async (t) => {
      const ws = workspace(t, api.url, configYaml({ top: 'sandbox: none\n', budget: { max_usd_per_day: 20, max_usd_per_session: reservation, min_session_usd: 0.1 } }));
      const file = path.join(ws.vault, 'report.pdf');
      fs.writeFileSync(file, make());
      fs.writeFileSync(path.join(ws.vault, 'note.txt'), 'a note\n');
      const scenario = `pdf-${shape}-${refused ? 'small' : 'room'}`;
      api.script(scenario, script);
      writeAgent(ws, 'reader', `SCENARIO=${scenario} PDF=${file}`, { allowed_tools: ['Read'] });
      const n = api.served.length;
      const counted = api.countTokens;
      const run = await nightshift(['run', 'reader', '--json'], ws.env, ws.dir);
      const served = api.served.slice(n);
      const carrying = served.filter((s) => s.usage.input_tokens >= PAGES * PAGE_TOKENS);
      const refusals = logLines(ws).filter((l) => l.event === 'api_proxy_budget_refused');
      t.diagnostic(`exit ${run.code}; ${fs.statSync(file).size} bytes of PDF; served ${JSON.stringify(served.map((s) => [s.usage.input_tokens, s.maxTokens]))} ($${usd(served).toFixed(4)}); count_tokens ${api.countTokens - counted}; refused: ${JSON.stringify(refusals.map((l) => l.reason))}`);
      const record = JSON.parse(run.stdout);
      if (refused) {
        assert.ok(refusals.length >= 1, 'the proxy refused a call');
        const m = /(\d+) tokens of it images and PDF pages/.exec(refusals[0].reason);
        assert.ok(m, refusals[0].reason);
        assert.ok(Number(m[1]) >= PAGES * PAGE_TOKENS, `counted ${m[1]} tokens for ${PAGES} pages`);
        assert.deepEqual(carrying, [], 'no call carrying the PDF reached the API');
        assert.ok(usd(served) < reservation, `what was served stayed within the session: $${usd(served)}`);
      } else {
        assert.equal(record.outcome, 'ok', run.stdout + run.stderr);
        assert.deepEqual(refusals, []);
        assert.equal(carrying.length, 2, 'both calls after the Read carried the PDF to the API');
        assert.ok(usd(carrying) > 0.3, `billed by its pages: $${usd(carrying)} for a ${fs.statSync(file).size}-byte file`);
      }
    });
  }

  test('the control for the hidden shapes: at the text scan\'s count (1 page each) such a call is admitted at $0.30', () => {
    for (const [shape, make] of FILES.slice(1)) {
      const file = make();
      assert.equal(textScanPdfPages(file), 1, shape);
      const b64 = file.toString('base64');
      const f = fitCall({ bodyBytes: 60_000 + b64.length, maxTokens: 32_000, thinkingBudget: null, cache: '5m', price: lookupPrice('claude-sonnet-4-6').price, media: { tokens: 10_000, bytes: b64.length } }, 0.3 - 0.01);
      assert.equal(f.action, 'forward', shape);
    }
  });

  test('the control for the count: the estimate from the body\'s bytes (the meter before) admits such a call at $0.30', () => {
    const b64 = pdf(PAGES).toString('base64');
    const f = fitCall({ bodyBytes: 60_000 + b64.length, maxTokens: 32_000, thinkingBudget: null, cache: '5m', price: lookupPrice('claude-sonnet-4-6').price }, 0.3 - 0.01);
    assert.equal(f.action, 'forward');
  });
});

function post(p: ApiProxy, body: unknown): Promise<number> {
  const data = Buffer.from(JSON.stringify(body));
  return new Promise((resolve, reject) => {
    const u = new URL(p.url);
    const req = http.request({ host: u.hostname, port: u.port, path: '/v1/messages', method: 'POST', agent: false, headers: { 'x-api-key': p.token, 'anthropic-version': '2023-06-01', 'content-type': 'application/json', 'content-length': data.length } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode!));
    });
    req.on('error', reject);
    req.end(data);
  });
}

describe('fast mode through the session\'s API proxy', () => {
  for (const [name, speed, rates] of [
    ['a call with speed "fast" on Opus 4.6 is metered at $30/$150 a million', 'fast', { input: 30, output: 150 }],
    ['control: the same call at standard speed is metered at $5/$25', null, { input: 5, output: 25 }],
  ] as const) {
    test(name, async (t) => {
      const scenario = `fast-${speed ?? 'standard'}`;
      api.script(scenario, () => ({ kind: 'message', blocks: [{ type: 'text', text: 'quickly' }], usage: { input_tokens: 10_000, output_tokens: 2_000 } }));
      const meter = new SessionMeter({ reservationUsd: 5 });
      const p = await startApiProxy({ upstream: api.url, credential: { kind: 'api_key', value: TEST_API_KEY }, logger: { warn() {}, info() {}, debug() {} } as never, redact: (x) => x, meter });
      t.after(() => p.close());
      const n = api.served.length;
      const status = await post(p, { model: 'claude-opus-4-6', max_tokens: 4000, stream: true, ...(speed ? { speed } : {}), messages: [{ role: 'user', content: `SCENARIO=${scenario}` }] });
      assert.equal(status, 200);
      await waitFor(() => meter.state().pendingUsd === 0 && meter.state().calls === 1, 5000, 'the meter to price the call');
      const s = api.served.slice(n);
      assert.equal(s.length, 1);
      assert.deepEqual([s[0].usage.input_tokens, s[0].usage.output_tokens], [10_000, 2_000]);
      const want = (10_000 * rates.input + 2_000 * rates.output) / 1e6;
      assert.ok(Math.abs(meter.state().spentUsd - want) < 1e-9, `metered $${meter.state().spentUsd}, the published rate says $${want}`);
    });
  }
});
