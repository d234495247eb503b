// Optional features with their package absent: each fails as its outage does, with an error that
// names the package and the install command. "Absent" is real: the importer handed in resolves the
// name from an empty temp dir, so node itself raises its not-found error. Negative control tried:
// with loadOptional's MissingPackageError conversion removed, the five tests below the pass-through
// one failed (node's bare "Cannot find package" names no install command).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { test } from 'node:test';
import { isMissing, loadOptional, MissingPackageError, OPTIONAL_PACKAGES, type Importer } from '../../core/optional-package.js';
import { createLogger } from '../../logs/logger.js';
import { makeRedactor } from '../../core/redact.js';
import { createGeminiEmbedder } from '../../memory/embeddings/embeddings-gemini.js';
import { createUseEmbedder } from '../../memory/embeddings/embeddings-use.js';
import { GeminiError, geminiModels } from '../../memory/gemini-client.js';
import { deliver } from '../../report/deliver.js';
import { postEmbed, type Webhook } from '../../report/discord.js';
import { sessionReport } from '../../report/embed.js';
import { Outbox, outboxFile } from '../../report/outbox.js';
import { ROOT, tempDir } from '../helpers.js';

// ESM: `import(name)` from a module in a dir with no node_modules above it.
function absentEsm(t: Parameters<typeof tempDir>[0]): Importer {
  const dir = tempDir(t);
  let n = 0;
  return async (name) => {
    const f = path.join(dir, `probe-${n++}.mjs`);
    fs.writeFileSync(f, `export * from ${JSON.stringify(name)};\n`);
    return import(pathToFileURL(f).href);
  };
}
// CommonJS: `require(name)` from that dir.
function absentCjs(t: Parameters<typeof tempDir>[0]): Importer {
  const req = createRequire(path.join(tempDir(t), 'probe.js'));
  return async (name) => req(name);
}

test('the optional package versions the error names are the ones package.json pins, and none is also a runtime dependency', () => {
  const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { dependencies: Record<string, string>; optionalDependencies: Record<string, string> };
  assert.deepEqual(pkg.optionalDependencies, OPTIONAL_PACKAGES);
  for (const name of Object.keys(OPTIONAL_PACKAGES)) assert.equal(pkg.dependencies[name], undefined, name);
});

test('a missing optional package becomes an error naming it and the npm install command', async (t) => {
  await assert.rejects(loadOptional('discord.js', 'Discord reports', absentEsm(t)), (err: unknown) => {
    assert.ok(err instanceof MissingPackageError);
    assert.match(err.message, /Discord reports needs the optional package discord\.js, which is not installed/);
    assert.match(err.message, /npm install -g discord\.js@14\.28\.1/);
    return true;
  });
  await assert.rejects(loadOptional('@energetic-ai/embeddings', 'USE', absentCjs(t)), /npm install -g @energetic-ai\/embeddings@0\.2\.0/);
});

// Negative control: a package that is found but fails inside (or misses some other module) is not
// reported as "not installed"; the original error goes through.
test('a failure other than the package itself being absent passes through unchanged', async () => {
  const broken: Importer = async () => {
    throw Object.assign(new Error("Cannot find package 'undici' imported from /x/node_modules/discord.js/src/index.js"), { code: 'ERR_MODULE_NOT_FOUND' });
  };
  await assert.rejects(loadOptional('@google/genai', 'Gemini', broken), (err: unknown) => !(err instanceof MissingPackageError) && /undici/.test((err as Error).message));
  assert.equal(isMissing(new Error("Cannot find package 'discord.js'"), 'discord.js'), false, 'no code: not a resolution failure');
});

test('Discord without discord.js: the post fails as an outage would, naming the package, and is not taken as maybe delivered', async (t) => {
  const hook: Webhook = { id: '123', token: 'tok' };
  const r = await postEmbed(hook, { title: 'x' } as never, { apiBase: 'http://127.0.0.1:9/api', load: absentEsm(t) }, Date.now() + 5000);
  assert.equal(r.ok, false);
  if (r.ok) return;
  assert.match(r.error, /discord\.js.*npm install -g discord\.js@14\.28\.1/);
  assert.deepEqual([r.status, r.maybeDelivered, r.permanent], [null, false, false]);
});

test('a session report with discord.js missing stays queued in the outbox and is logged with the package name; delivery does not fail', async (t) => {
  const dir = tempDir(t);
  const load = absentEsm(t);
  const lines: string[] = [];
  const redact = makeRedactor([]);
  const logger = createLogger({ redact, level: 'debug', stderr: { write: (l) => void lines.push(l) } });
  const report = sessionReport(
    { id: '20260301T100000Z-gardener-abcdef', agent: 'gardener', outcome: 'ok', model: 'sonnet', cost_usd: 0.01, cost_estimated: false, turns: 1, duration_ms: 1000, ended_at: null, result: 'done', error: null },
    null,
    { day: '2026-03-01', sessions: 1, max_sessions: 12, cost_usd: 0.01, max_usd: 20 },
    { redact: (s) => s },
  );
  const stateDir = path.join(dir, 'state');
  const d = await deliver(report, { stateDir, apiBase: 'http://127.0.0.1:9/api', timeoutMs: 5000 }, {
    env: { DISCORD_WEBHOOK_URL: 'https://discord.com/api/webhooks/123/tok' },
    logger,
    redact,
    now: () => new Date(),
    post: (h, e, s, deadline, signal) => postEmbed(h, e, { ...s, load }, deadline, signal),
  });
  assert.deepEqual([d.configured, d.queued, d.sent, d.pending], [true, true, 0, 1]);
  const box = Outbox.open(outboxFile(stateDir));
  try {
    assert.equal(box.pending(), 1);
  } finally {
    box.close();
  }
  assert.ok(lines.some((l) => /discord\.js/.test(l) && /npm install -g discord\.js@14\.28\.1/.test(l)), lines.join('\n'));
});

test('Gemini without @google/genai: the call fails as GEMINI_UNAVAILABLE (the fallback path), naming the package', async (t) => {
  const load = absentEsm(t);
  await assert.rejects(geminiModels({ apiKey: 'test-key', load }).generateContent({ model: 'm', contents: 'x' }), /@google\/genai.*npm install -g @google\/genai@2\.32\.0/);
  const embedder = createGeminiEmbedder({ apiKey: 'test-key', models: geminiModels({ apiKey: 'test-key', load }) });
  await assert.rejects(embedder.embed(['x']), (err: unknown) => err instanceof GeminiError && err.code === 'GEMINI_UNAVAILABLE' && /npm install -g @google\/genai@2\.32\.0/.test(err.message));
});

test('USE embeddings without @energetic-ai: embedding fails naming the package, and a later call tries again', async (t) => {
  const load = absentCjs(t);
  const e = createUseEmbedder({ load });
  await assert.rejects(e.embed(['x']), /memory\.embeddings: use .*@energetic-ai\/embeddings.*npm install -g @energetic-ai\/embeddings@0\.2\.0/);
  await assert.rejects(e.embed(['x']), MissingPackageError);
});
