// memory stats' last_dream (issue 41): the last dream's metrics, read only, through the built binary;
// and the pure reading of a metrics row (a failed phase's counts are not claimed).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { dreamSummary } from '../../memory/store/dream-summary.js';
import { lastDreamLine } from '../../cli/commands/memory-cli.js';
import { configYaml, nightshift, tempDir } from '../helpers.js';

test('dreamSummary: the counts of the phases that ran ok; a failed phase named, its counts null', () => {
  const metrics = { phases: {
    updates: { ok: true, ms: 1, superseded: 2, candidates: 1 }, cluster: { ok: true, ms: 1, observations: 9, clusters: 3 }, abstract: { ok: false, ms: 1, error: 'boom' },
    contradictions: { ok: true, ms: 1, candidates: 4 }, links: { ok: true, ms: 1, linked: 7 }, fade: { ok: true, ms: 1, faded: 5 },
  } };
  assert.deepEqual(dreamSummary({ started_at: '2026-12-01T03:00:00.000Z', duration_ms: 1234, metrics: JSON.stringify(metrics) }), {
    at: '2026-12-01T03:00:00.000Z', duration_ms: 1234, observations: 9, clusters: 3, abstractions: null, superseded: 2, contradictions: 5, linked: 7, faded: 5, failed_phases: ['abstract'],
  });
  const garbled = dreamSummary({ started_at: 'x', duration_ms: 1, metrics: 'not json' });
  assert.equal(garbled.observations, null);
  assert.deepEqual(garbled.failed_phases, []);
  assert.equal(lastDreamLine(null), 'never');
  assert.match(lastDreamLine(dreamSummary({ started_at: 'T', duration_ms: 5, metrics: JSON.stringify(metrics) })), /^T \(5 ms\): 9 observations, - abstractions, .*; failed: abstract$/);
});

test('memory stats --json: last_dream null before a dream; after one, what it did; the next counts only what came since', async (t) => {
  const dir = tempDir(t, 'nightshift-lastdream-');
  for (const d of ['vault', 'prompts', 'state']) fs.mkdirSync(path.join(dir, d));
  fs.writeFileSync(path.join(dir, 'nightshift.yaml'), configYaml());
  const env = { PATH: process.env.PATH, HOME: dir, NIGHTSHIFT_CONFIG: path.join(dir, 'nightshift.yaml') };
  const mem = async (...args: string[]) => {
    const r = await nightshift(['memory', ...args], env, dir);
    assert.equal(r.code, 0, r.stderr);
    return r.stdout;
  };
  const texts = ['the backup job for postgres runs nightly at 03:00', 'the backup job for postgres runs nightly and writes to s3', 'the backup job for postgres runs nightly with pg_dump', 'grafana lives in ops-dashboards'];
  for (const x of texts) await mem('observe', x);
  assert.equal(JSON.parse(await mem('stats', '--json')).last_dream, null);
  assert.match(await mem('stats'), /^last dream {4}never$/m);

  const report = JSON.parse(await mem('dream', '--json'));
  const last = JSON.parse(await mem('stats', '--json')).last_dream;
  assert.equal(last.observations, texts.length, 'every observation was new to this dream');
  assert.equal(last.abstractions, report.phases.abstract.abstractions);
  assert.equal(last.clusters, report.phases.cluster.clusters);
  assert.equal(last.faded, report.phases.fade.faded);
  assert.deepEqual(last.failed_phases, []);
  assert.ok(Date.parse(last.at) > Date.now() - 60_000);
  assert.match(await mem('stats'), new RegExp(`^last dream {4}${last.at} \\(\\d+ ms\\): ${texts.length} observations, `, 'm'));

  await mem('observe', 'the release train leaves on tuesdays');
  await mem('dream', '--json');
  const again = JSON.parse(await mem('stats', '--json')).last_dream;
  assert.equal(again.observations, 1, 'only what came since the dream before');
  assert.ok(again.at >= last.at);
});
