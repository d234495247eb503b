import assert from 'node:assert/strict';
import path from 'node:path';
import { test, type TestContext } from 'node:test';
import { PHASES, dream } from '../../../memory/dream/dream.js';
import { geminiModels } from '../../../memory/gemini-client.js';
import { MemoryStore } from '../../../memory/store.js';
import type { Actor } from '../../../memory/types.js';
import { startFakeGemini } from '../../fake-gemini.js';
import { tempDir } from '../../helpers.js';

const IMPORT: Actor = { surface: 'import' };
const T0 = Date.parse('2026-01-01T00:00:00Z');

async function seeded(t: TestContext, now = new Date(T0 + 400 * 86_400_000)): Promise<MemoryStore> {
  const s = MemoryStore.open(path.join(tempDir(t), 'memory.db'), { now: () => now });
  t.after(() => s.close());
  const lines = [
    // A cluster of four about the kiln.
    'The pottery kiln fires stoneware at 1240 degrees',
    'The pottery kiln fires stoneware glaze on Saturdays',
    'Stoneware from the pottery kiln cools for a day',
    'The pottery kiln needs new stoneware shelves',
    // A contradiction pair.
    'The garden sensor reports soil moisture every hour',
    'The garden sensor does not report soil moisture every hour',
    // Unrelated, low salience: these fade.
    'A passing remark about the weather',
    'Someone mentioned a podcast once',
  ];
  await s.observeMany(lines.map((text, i) => ({ text, created_at: new Date(T0 + i * 1000).toISOString(), salience: i >= 6 ? 0.1 : 0.6 })), IMPORT);
  return s;
}

test('a dream on a seeded store: every phase ok, with the expected counts, and one metrics row', async (t) => {
  const s = await seeded(t);
  const seen: string[] = [];
  // A clock that moves 10 ms per reading: each phase takes a multiple of 10, the dream more than all.
  let clock = 0;
  const r = await dream(s, { onPhase: (p) => seen.push(p), now: () => (clock += 10) });
  assert.deepEqual(seen, [...PHASES]);
  assert.deepEqual(Object.keys(r.phases), [...PHASES]);
  for (const p of PHASES) assert.equal(r.phases[p].ok, true, `${p}: ${r.phases[p].error}`);
  assert.equal(r.phases.cluster.observations, 8);
  assert.equal(r.phases.cluster.clusters, 1);
  assert.equal(r.phases.cluster.clustered, 4);
  assert.equal(r.phases.abstract.abstractions, 1);
  assert.ok((r.phases.contradictions.pairs as number) >= 1);
  assert.equal(s.contradictionCandidates().length, 1, 'the garden pair, recorded once (on ingest) as a candidate');
  assert.equal(r.phases.schedule.overdue, 8);
  assert.equal(r.phases.fade.faded, 2);
  assert.equal(typeof r.phases.metrics.dream_id, 'number');
  // Timed by the given clock, the whole dream spanning its phases (run one after another).
  for (const p of PHASES) assert.ok(r.phases[p].ms >= 10 && r.phases[p].ms % 10 === 0, `${p}: ${r.phases[p].ms}`);
  const phasesMs = PHASES.reduce((n, p) => n + r.phases[p].ms, 0);
  assert.ok(r.duration_ms > phasesMs && r.duration_ms % 10 === 0, `duration_ms ${r.duration_ms}, phases ${phasesMs}`);
  const insight = s.recall(s.stats().memories);
  assert.equal(insight.category, 'insight');
  assert.match(insight.text, /^Recurring across 4 memories \(.*kiln.*\): /);
  assert.equal(insight.edges.filter((e) => e.type === 'abstracts').length, 4);
  // A second dream has nothing new to look at.
  const again = await dream(s);
  assert.equal(again.phases.cluster.observations, 0);
  assert.equal(again.phases.abstract.abstractions, 0);
  assert.equal(s.dreamPressure().observations_since, 0);
});

test('a faded memory is still searchable, labelled, and never returned unlabelled or by default', async (t) => {
  const s = await seeded(t);
  await dream(s);
  assert.deepEqual(await s.query('podcast'), [], 'not by default');
  const [r] = await s.query('podcast', { include_faded: true });
  assert.equal(r.faded, true);
  assert.match(r.text, /podcast/);
  assert.equal(s.recall(r.id).faded, true);
  assert.ok(s.overdue(new Date(T0 + 400 * 86_400_000), 100).every((o) => o.id !== r.id), 'never offered as overdue');
});

test('an injected failure in one phase leaves the others done, and is reported', async (t) => {
  for (const phase of PHASES) {
    const s = await seeded(t);
    const warnings: object[] = [];
    const r = await dream(s, { failPhase: phase, logger: { warn: (o) => warnings.push(o), info: () => {} } });
    for (const p of PHASES) assert.equal(r.phases[p].ok, p !== phase, `${phase} failing: ${p}`);
    assert.match(String(r.phases[phase].error), /injected failure/);
    assert.equal(warnings.length, 1);
  }
});

test('with Gemini: abstraction and contradiction verdicts come from it; a malformed or failing answer falls back offline', async (t) => {
  const fake = await startFakeGemini('ok');
  t.after(() => fake.close());
  fake.generate = (body) => {
    const prompt: string = body?.contents?.[0]?.parts?.[0]?.text ?? '';
    if (prompt.includes('numbered pair')) {
      const n = (prompt.match(/^\d+\. A:/gm) ?? []).length;
      return JSON.stringify(Array.from({ length: n }, (_, i) => ({ pair: i + 1, contradicts: false, confidence: 0.9, reason: 'compatible' })));
    }
    return 'The kiln is the heart of the pottery work.';
  };
  const gemini = { models: geminiModels({ apiKey: 'test-key', baseUrl: fake.url }), model: 'gemini-test', apiKey: 'test-key' };
  const s = await seeded(t);
  const r = await dream(s, { gemini });
  assert.equal(r.phases.abstract.gemini, 1);
  assert.match(s.recall(s.stats().memories).text, /heart of the pottery/);
  assert.ok((r.phases.contradictions.gemini as number) >= 1);
  assert.equal(r.phases.contradictions.dismissed, 1, 'Gemini judged the ingest candidate compatible: dismissed, not deleted');
  assert.equal(s.contradictionCandidates('dismissed').length, 1);

  for (const mode of ['malformed', '500'] as const) {
    fake.mode = mode;
    fake.generate = mode === 'malformed' ? () => '{"not": "an array"' : undefined;
    const s2 = await seeded(t);
    const warnings: object[] = [];
    const r2 = await dream(s2, { gemini, logger: { warn: (o) => warnings.push(o), info: () => {} } });
    for (const p of PHASES) assert.equal(r2.phases[p].ok, true, `${mode}: ${p}`);
    assert.equal(r2.phases.abstract.fallbacks, 1);
    assert.ok((r2.phases.contradictions.fallbacks as number) >= 1);
    assert.match(s2.recall(s2.stats().memories).text, /^Recurring across 4 memories/);
    assert.equal(s2.contradictionCandidates().length, 1, `${mode}: the heuristic's candidate stands`);
    assert.ok(warnings.length >= 2);
    assert.ok(!JSON.stringify(warnings).includes('test-key'));
  }
});

test('forgetting the members of an abstraction takes the abstraction, which quotes them, along', async (t) => {
  const s = await seeded(t);
  await dream(s);
  const insight = s.recall(s.stats().memories);
  assert.equal(insight.category, 'insight');
  const members = insight.edges.filter((e) => e.type === 'abstracts').map((e) => e.to);
  assert.deepEqual(s.derivedFrom(members), [insight.id]);
  const r = s.deleteForever(members, 'operator', { surface: 'cli' });
  assert.ok(r.deleted.includes(insight.id), JSON.stringify(r));
  assert.throws(() => s.recall(insight.id));
  // Its text cannot come back either, and no walk finds it.
  assert.ok(!s.wander({ steps: 20, seed: 1 }).path.some((p) => /kiln/.test(p.text)));
});

test('a stop request skips the phases not yet run, so a dream under the tick never holds the run lock', async (t) => {
  const s = await seeded(t);
  const stop = new AbortController();
  const r = await dream(s, { signal: stop.signal, onPhase: (p) => p === 'contradictions' && stop.abort('SIGTERM') });
  assert.equal(r.phases.cluster.ok, true);
  assert.equal(r.phases.abstract.ok, true);
  for (const p of ['contradictions', 'links', 'schedule', 'fade', 'reindex', 'metrics'] as const) {
    assert.equal(r.phases[p].ok, false);
    assert.match(String(r.phases[p].error), /skipped: stop requested \(SIGTERM\)/);
  }
});
