import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test, type TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import { validateConfig } from '../../../config/config.js';
import { makeEmbedder, offlineEmbedder, OFFLINE_DEFAULT, type EmbedderConfig } from '../../../memory/embeddings/embedders.js';
import { embedWithLabel, withFallback, type FallbackEmbedder } from '../../../memory/embeddings/embeddings-fallback.js';
import { createGeminiEmbedder, GEMINI_EMBEDDING_DIM } from '../../../memory/embeddings/embeddings-gemini.js';
import { createUseEmbedder, USE_MODEL } from '../../../memory/embeddings/embeddings-use.js';
import { GeminiError, geminiModels } from '../../../memory/gemini-client.js';
import { expandQuery, makeQueryExpander } from '../../../memory/recall/hyde.js';
import type { Embedder } from '../../../memory/types.js';
import { startFakeGemini, type FakeGemini, type FakeGeminiMode } from '../../fake-gemini.js';

const KEY = 'test-gemini-key-not-a-real-one';
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..');

// Log lines as pino would write them (errors with message and stack), kept for assertions.
function capture() {
  const lines: string[] = [];
  const errs = (_k: string, v: unknown) => (v instanceof Error ? { type: v.name, message: v.message, stack: v.stack, code: (v as { code?: unknown }).code } : v);
  const at = (level: string) => (obj: object, msg?: string) => void lines.push(JSON.stringify({ level, ...obj, msg }, errs));
  return { lines, logger: { warn: at('warn'), info: at('info'), debug: at('debug'), error: at('error') }, parsed: () => lines.map((l) => JSON.parse(l)) };
}

const norm = (v: Float32Array) => Math.hypot(...v);

// A tiny deterministic embedder standing in for the offline arm.
const offlineStub: Embedder = {
  model: 'stub-offline-4',
  dim: 4,
  async embed(texts) {
    return texts.map((t) => {
      const v = Float32Array.from([t.length + 1, 1, 2, 3]);
      const n = Math.hypot(...v);
      return v.map((x) => x / n);
    });
  },
};

function tempDir(t: TestContext): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nightshift-emb-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

describe('Gemini embeddings against the loopback API', () => {
  let fake: FakeGemini;
  before(async () => {
    fake = await startFakeGemini();
  });
  after(() => fake.close());
  const reset = (mode: FakeGeminiMode = 'ok') => {
    fake.mode = mode;
    fake.requests.length = 0;
  };

  test('returns unit vectors of the configured size, labelled gemini:<model>, sending the key as x-goog-api-key', async () => {
    reset();
    const e = createGeminiEmbedder({ apiKey: KEY, baseUrl: fake.url });
    assert.equal(e.model, 'gemini:gemini-embedding-001');
    assert.equal(e.dim, GEMINI_EMBEDDING_DIM);
    const [a, b, a2] = await e.embed(['the cat sat', 'on the mat', 'the cat sat']);
    for (const v of [a, b]) {
      assert.equal(v.length, GEMINI_EMBEDDING_DIM);
      assert.ok(Math.abs(norm(v) - 1) < 1e-5, `norm ${norm(v)}`);
    }
    assert.deepEqual(a, a2);
    assert.notDeepEqual(a, b);
    assert.equal(fake.requests.length, 1);
    const r = fake.requests[0];
    assert.equal(r.path, '/v1beta/models/gemini-embedding-001:batchEmbedContents');
    assert.equal(r.headers['x-goog-api-key'], KEY);
    assert.ok(!r.path.includes(KEY));
    assert.equal(r.body.requests.length, 3);
    assert.deepEqual(r.body.requests[0].content.parts, [{ text: 'the cat sat' }]);
    assert.equal(r.body.requests[0].model, 'models/gemini-embedding-001');
    assert.equal(r.body.requests[0].taskType, 'RETRIEVAL_DOCUMENT');
    assert.equal(r.body.requests[0].outputDimensionality, GEMINI_EMBEDDING_DIM);
  });

  test('embeds queries with the query task type', async () => {
    reset();
    const e = createGeminiEmbedder({ apiKey: KEY, baseUrl: fake.url, model: 'gemini-embedding-exp' });
    await e.embed(['where did she go?'], 'query');
    assert.equal(fake.requests[0].path, '/v1beta/models/gemini-embedding-exp:batchEmbedContents');
    assert.equal(fake.requests[0].body.requests[0].taskType, 'RETRIEVAL_QUERY');
  });

  test('splits more than 100 texts into batches of at most 100, keeping their order', async () => {
    reset();
    const e = createGeminiEmbedder({ apiKey: KEY, baseUrl: fake.url, dim: 16 });
    const texts = Array.from({ length: 250 }, (_, i) => `memory number ${i}`);
    const all = await e.embed(texts);
    assert.deepEqual(fake.requests.map((r) => r.body.requests.length), [100, 100, 50]);
    assert.equal(all.length, 250);
    const [one] = await e.embed([texts[173]]);
    assert.deepEqual(all[173], one);
  });

  const failures: Array<[FakeGeminiMode, string]> = [
    ['500', 'GEMINI_UNAVAILABLE'],
    ['malformed', 'GEMINI_MALFORMED'],
    ['wrong-dim', 'GEMINI_MALFORMED'],
    ['empty', 'GEMINI_MALFORMED'],
    ['slow', 'GEMINI_UNAVAILABLE'],
  ];
  for (const [mode, code] of failures) {
    test(`an answer that is ${mode} throws a GeminiError ${code} that does not contain the key`, async () => {
      reset(mode);
      fake.slowMs = 5000;
      const e = createGeminiEmbedder({ apiKey: KEY, baseUrl: fake.url, timeoutMs: 300 });
      await assert.rejects(e.embed(['anything']), (err: unknown) => {
        assert.ok(err instanceof GeminiError, String(err));
        assert.equal(err.code, code);
        assert.ok(!err.message.includes(KEY));
        return true;
      });
    });
  }

  for (const mode of ['500', 'malformed'] as const) {
    test(`on a ${mode} answer the fallback's vectors come back under the fallback's model, and it is logged without the key`, async () => {
      reset(mode);
      const log = capture();
      const e = withFallback(createGeminiEmbedder({ apiKey: KEY, baseUrl: fake.url }), offlineStub, log.logger);
      const got = await e.embedLabelled(['a memory', 'another']);
      assert.ok(got);
      assert.equal(got.model, 'stub-offline-4');
      assert.equal(got.dim, 4);
      assert.equal(got.vectors.length, 2);
      assert.deepEqual(got.vectors, await offlineStub.embed(['a memory', 'another']));
      // The plain Embedder contract labels by `model`: it must fail, never hand back the fallback's space.
      await assert.rejects(e.embed(['a memory']), GeminiError);
      const warn = log.parsed().find((l) => l.level === 'warn');
      assert.equal(warn?.model, 'gemini:gemini-embedding-001');
      assert.equal(warn?.fallback, 'stub-offline-4');
      assert.match(warn?.msg, /failed, using stub-offline-4/);
      assert.ok(!log.lines.join('\n').includes(KEY));
    });
  }

  test('after a failure the primary rests for the cooldown, then is tried again', async () => {
    reset('500');
    let now = 0;
    const log = capture();
    const e = withFallback(createGeminiEmbedder({ apiKey: KEY, baseUrl: fake.url }), offlineStub, log.logger, { cooldownMs: 1000, now: () => now });
    assert.equal((await e.embedLabelled(['x']))?.model, 'stub-offline-4');
    assert.equal((await e.embedLabelled(['x']))?.model, 'stub-offline-4');
    assert.equal(fake.requests.length, 1);
    fake.mode = 'ok';
    now = 1001;
    assert.equal((await e.embedLabelled(['x']))?.model, 'gemini:gemini-embedding-001');
    assert.equal(fake.requests.length, 2);
  });

  test('the store\'s plain embed: during the cooldown after a failure it fails at once, without calling Gemini again', async () => {
    reset('500');
    let now = 0;
    const e = withFallback(createGeminiEmbedder({ apiKey: KEY, baseUrl: fake.url }), offlineStub, capture().logger, { cooldownMs: 1000, now: () => now });
    await assert.rejects(e.embed(['x']));
    await assert.rejects(e.embed(['x']), /cooling down/);
    assert.equal(fake.requests.length, 1, 'the second call never reached Gemini');
    fake.mode = 'ok';
    now = 1001;
    assert.equal((await e.embed(['x'])).length, 1);
    assert.equal(fake.requests.length, 2);
  });

  test('with no fallback a failure gives null, and embedWithLabel does the same for a plain embedder', async () => {
    reset('500');
    const log = capture();
    const gemini = createGeminiEmbedder({ apiKey: KEY, baseUrl: fake.url });
    assert.equal(await withFallback(gemini, null, log.logger).embedLabelled(['x']), null);
    assert.equal(await embedWithLabel(gemini, ['x'], log.logger), null);
    fake.mode = 'ok';
    assert.equal((await embedWithLabel(gemini, ['x'], log.logger))?.model, 'gemini:gemini-embedding-001');
    assert.equal(log.parsed().filter((l) => l.level === 'warn').length, 2);
    assert.ok(!log.lines.join('\n').includes(KEY));
  });

  test('makeEmbedder picks Gemini when GEMINI_API_KEY is set, with the chosen offline arm as fallback', async () => {
    reset();
    const log = capture();
    const config = { gemini: { base_url: fake.url, embedding_model: 'gemini-embedding-001' }, memory: { embeddings: 'auto' } };
    const e = makeEmbedder(config, { GEMINI_API_KEY: KEY }, log.logger) as FallbackEmbedder;
    assert.equal(e.model, 'gemini:gemini-embedding-001');
    assert.equal(e.fallback, null); // the measured offline default is none
    const withUse = makeEmbedder({ ...config, memory: { embeddings: 'use' } }, { GEMINI_API_KEY: KEY }, log.logger) as FallbackEmbedder;
    assert.equal(withUse.fallback?.model, USE_MODEL);
    assert.equal((await e.embed(['x'])).length, 1);
    assert.equal(makeEmbedder(config, {}, log.logger), null);
    assert.equal(makeEmbedder({}, { GEMINI_API_KEY: '  ' }, log.logger), null);
    assert.equal(makeEmbedder({ memory: { embeddings: 'use' } }, {}, log.logger)?.model, USE_MODEL);
    assert.equal(OFFLINE_DEFAULT, 'none');
    // The daemon's validated config is accepted as it is (the type is checked at build; the value here).
    const validated = validateConfig({ vault: '/tmp/vault', memory: { embeddings: 'use' }, gemini: { base_url: fake.url } }, '/tmp/nightshift.yaml');
    assert.deepEqual(validated.problems, undefined);
    const fromDaemon: EmbedderConfig = validated.config!;
    assert.equal(makeEmbedder(fromDaemon, {}, log.logger)?.model, USE_MODEL);
    assert.equal((makeEmbedder(fromDaemon, { GEMINI_API_KEY: KEY }, log.logger) as FallbackEmbedder).fallback?.model, USE_MODEL);
    assert.throws(() => offlineEmbedder('glove'), /Expected `memory.embeddings` to be one of auto, none, use, got `glove`/);
  });

  test('when Gemini fails the store logs it and the query still answers from the lexical arm', async (t) => {
    reset();
    const { MemoryStore } = await import('../../../memory/store.js');
    const log = capture();
    const embedder = makeEmbedder({ gemini: { base_url: fake.url } }, { GEMINI_API_KEY: KEY }, log.logger);
    const store = MemoryStore.open(path.join(tempDir(t), 'memory.db'), { embedder, logger: log.logger });
    t.after(() => store.close());
    await store.observe({ text: 'Caroline went to a pottery class on Saturday', source: 'D1:1' }, { surface: 'cli' });
    assert.equal(store.stats().embedding_model, 'gemini:gemini-embedding-001');
    assert.equal(store.stats().embedded, 1);
    fake.mode = '500';
    await store.observe({ text: 'Melanie painted a sunrise over the lake', source: 'D1:2' }, { surface: 'cli' });
    const results = await store.query('pottery class');
    assert.equal(results[0]?.text, 'Caroline went to a pottery class on Saturday');
    assert.ok(log.parsed().some((l) => l.level === 'warn'), 'the failure is logged');
    assert.ok(!log.lines.join('\n').includes(KEY));
  });
});

describe('HyDE query expansion', () => {
  let fake: FakeGemini;
  before(async () => {
    fake = await startFakeGemini();
  });
  after(() => fake.close());

  test('appends the passage Gemini writes to the query, calling generateContent on gemini.model', async () => {
    fake.mode = 'ok';
    fake.requests.length = 0;
    const expand = makeQueryExpander({ gemini: { base_url: fake.url } }, { GEMINI_API_KEY: KEY }, capture().logger);
    assert.ok(expand);
    assert.equal(await expand('When did Caroline go to the support group?'), `When did Caroline go to the support group?\n${fake.hydeText}`);
    const r = fake.requests[0];
    assert.equal(r.path, '/v1beta/models/gemini-2.5-flash:generateContent');
    assert.equal(r.headers['x-goog-api-key'], KEY);
    assert.match(r.body.contents[0].parts[0].text, /When did Caroline go to the support group\?/);
    assert.equal(makeQueryExpander({}, {}, null), null);
  });

  for (const mode of ['500', 'malformed', 'empty', 'slow'] as const) {
    test(`returns the query unchanged when the answer is ${mode}, logging without the key`, async () => {
      fake.mode = mode;
      fake.slowMs = 5000;
      const log = capture();
      const models = geminiModels({ apiKey: KEY, baseUrl: fake.url, timeoutMs: 300 });
      assert.equal(await expandQuery('what did Melanie paint?', { models, model: 'gemini-2.5-flash', logger: log.logger, apiKey: KEY }), 'what did Melanie paint?');
      assert.equal(log.parsed()[0]?.level, 'warn');
      assert.ok(!log.lines.join('\n').includes(KEY));
    });
  }
});

describe('the offline sentence encoder (opt-in)', () => {
  test('gives unit vectors of 512 dimensions, the same for the same text', async () => {
    const e = createUseEmbedder();
    assert.equal(e.model, USE_MODEL);
    const [a, b, a2, empty] = await e.embed(['I went to a support group yesterday', 'We painted a sunrise', 'I went to a support group yesterday', '']);
    for (const v of [a, b, empty]) {
      assert.equal(v.length, 512);
      assert.ok(Math.abs(norm(v) - 1) < 1e-5);
    }
    assert.deepEqual(a, a2);
    assert.notDeepEqual(a, b);
  });

  test('loads from the bundled files with no network at all', (t) => {
    if (spawnSync('unshare', ['-n', 'true']).status !== 0) return t.skip('unshare -n is not available here');
    const mod = path.join(ROOT, 'dist', 'memory', 'embeddings', 'embeddings-use.js');
    const script = `const { createUseEmbedder } = await import(${JSON.stringify(mod)}); const [v] = await createUseEmbedder().embed(['hello']); process.stdout.write(String(v.length));`;
    const r = spawnSync('unshare', ['-n', process.execPath, '--input-type=module', '-e', script], { encoding: 'utf8', timeout: 60_000 });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout, '512');
  });
});
