import assert from 'node:assert/strict';
import { test } from 'node:test';
import { geminiVerdicts, heuristicVerdict } from '../../../memory/learning/contradiction.js';
import { geminiModels } from '../../../memory/gemini-client.js';
import { startFakeGemini } from '../../fake-gemini.js';

type Kind = 'contradicting' | 'compatible' | 'unrelated';
// 30 pairs: 12 contradicting, 10 compatible (same topic, both can hold), 8 unrelated.
export const PAIRS: Array<[string, string, Kind]> = [
  ['The staging database runs on port 5433', 'The staging database runs on port 5432', 'contradicting'],
  ['The backup job succeeded last night', 'The backup job failed last night', 'contradicting'],
  ['Caroline likes hiking in the mountains', 'Caroline does not like hiking in the mountains', 'contradicting'],
  ['The release is blocked by the flaky test', 'The release is no longer blocked by the flaky test', 'contradicting'],
  ['The mail relay is online', 'The mail relay is offline', 'contradicting'],
  ['Melanie is married', 'Melanie is single', 'contradicting'],
  ['The API key rotation is enabled', 'The API key rotation is disabled', 'contradicting'],
  ['Deploys happen before the standup', 'Deploys happen after the standup', 'contradicting'],
  ['The operator always reviews pull requests', 'The operator never reviews pull requests', 'contradicting'],
  ['The invoice exporter writes CSV files', "The invoice exporter doesn't write CSV files", 'contradicting'],
  ['Jon moved to Berlin in 2021', 'Jon moved to Lisbon in 2021', 'contradicting'],
  ['The search index rebuild takes 20 minutes', 'The search index rebuild takes 3 hours', 'contradicting'],
  ['The staging database runs on port 5433', 'The staging database is backed up nightly', 'compatible'],
  ['Caroline likes hiking in the mountains', 'Caroline went hiking in the Alps last summer', 'compatible'],
  ['The backup job runs every night', 'The backup job writes to the NAS', 'compatible'],
  ['The mail relay is online', 'The mail relay was upgraded on Monday', 'compatible'],
  ['Melanie paints landscapes', 'Melanie paints landscapes and portraits', 'compatible'],
  ['The release train leaves every Tuesday', 'The release train leaves every Tuesday at noon', 'compatible'],
  ['The garden sensor measures soil moisture', 'The garden sensor measures soil moisture and temperature', 'compatible'],
  ['The operator prefers short commit messages', 'The operator prefers short commit messages in English', 'compatible'],
  ['Jon runs the billing queue', 'Jon also maintains the billing queue dashboards', 'compatible'],
  ['The build server has 32 GB of memory', 'The build server has 32 GB of memory and 8 cores', 'compatible'],
  ['The staging database runs on port 5433', 'Caroline likes hiking in the mountains', 'unrelated'],
  ['The backup job failed last night', 'Melanie paints landscapes', 'unrelated'],
  ['The mail relay is offline', 'The release train leaves every Tuesday', 'unrelated'],
  ['Jon moved to Berlin in 2021', 'The garden sensor measures soil moisture', 'unrelated'],
  ['The API key rotation is disabled', 'The operator prefers short commit messages', 'unrelated'],
  ['Deploys happen before the standup', 'Melanie is single', 'unrelated'],
  ['The search index rebuild takes 3 hours', 'The invoice exporter writes CSV files', 'unrelated'],
  ['The build server has 32 GB of memory', 'Caroline does not like the beach', 'unrelated'],
];

function precisionRecall(predicted: boolean[]): { precision: number; recall: number; tp: number; fp: number; fn: number } {
  let tp = 0;
  let fp = 0;
  let fn = 0;
  PAIRS.forEach(([, , kind], i) => {
    const truth = kind === 'contradicting';
    if (predicted[i] && truth) tp++;
    else if (predicted[i]) fp++;
    else if (truth) fn++;
  });
  return { precision: tp / Math.max(1, tp + fp), recall: tp / Math.max(1, tp + fn), tp, fp, fn };
}

test('the offline heuristic on 30 pairs: precision at least 0.9, recall at least 0.75 (figures in the diagnostics)', (t) => {
  assert.equal(PAIRS.length, 30);
  const predicted = PAIRS.map(([a, b]) => heuristicVerdict(a, b).contradicts);
  const r = precisionRecall(predicted);
  const misses = PAIRS.filter((p, i) => predicted[i] !== (p[2] === 'contradicting')).map(([a, b, k]) => `${k}: ${a} / ${b}`);
  t.diagnostic(`offline heuristic: precision ${r.precision.toFixed(3)}, recall ${r.recall.toFixed(3)} (tp ${r.tp}, fp ${r.fp}, fn ${r.fn}); wrong: ${misses.join(' | ') || 'none'}`);
  assert.ok(r.precision >= 0.9, `precision ${r.precision}`);
  assert.ok(r.recall >= 0.75, `recall ${r.recall}`);
  // Unrelated pairs are never candidates.
  PAIRS.forEach(([a, b, k], i) => k === 'unrelated' && assert.equal(predicted[i], false, `${a} / ${b}`));
});

test('Gemini against the loopback generateContent: JSON-schema request, verdicts parsed; malformed and failing answers throw for the fallback', async (t) => {
  const fake = await startFakeGemini('ok');
  t.after(() => fake.close());
  // The loopback answers as a judge that knows the table (it checks our plumbing, not Gemini's judgement).
  const truth = new Map(PAIRS.map(([a, b, k]) => [`${a}|${b}`, k === 'contradicting']));
  fake.generate = (body) => {
    const prompt: string = body.contents[0].parts[0].text;
    const out = [...prompt.matchAll(/^(\d+)\. A: (".*")\n {3}B: (".*")$/gm)].map((m) => ({ pair: Number(m[1]), contradicts: truth.get(`${JSON.parse(m[2])}|${JSON.parse(m[3])}`) ?? false, confidence: 0.9, reason: 'judged' }));
    return JSON.stringify(out);
  };
  const g = { models: geminiModels({ apiKey: 'test-key', baseUrl: fake.url }), model: 'gemini-test', apiKey: 'test-key' };
  const verdicts = await geminiVerdicts(PAIRS.map(([a, b]) => [a, b]), g);
  const r = precisionRecall(verdicts.map((v) => v.contradicts));
  t.diagnostic(`gemini (loopback judge): precision ${r.precision.toFixed(3)}, recall ${r.recall.toFixed(3)}`);
  assert.deepEqual([r.precision, r.recall], [1, 1]);
  const req = fake.requests.find((x) => x.action === 'generateContent')!;
  assert.equal(req.body.generationConfig.responseMimeType, 'application/json');
  assert.equal(req.body.generationConfig.responseSchema.type, 'ARRAY');

  fake.generate = () => '[{"pair": 1, "contradicts": "maybe"}]';
  await assert.rejects(geminiVerdicts([['a', 'b']], g), (e: any) => e.code === 'GEMINI_MALFORMED');
  fake.generate = () => 'not json';
  await assert.rejects(geminiVerdicts([['a', 'b']], g), (e: any) => e.code === 'GEMINI_MALFORMED');
  fake.mode = '500';
  await assert.rejects(geminiVerdicts([['a', 'b']], g), (e: any) => e.code === 'GEMINI_UNAVAILABLE' && !e.message.includes('test-key'));
});
