// A day of ticks, each leaving its fire (budget/fires.ts): driven through tick() with a passed-in
// clock, listed through the real `nightshift fires --json` and `status --json`. A broken agent's
// due rule makes its tick exit 78 with its reason; a held agent, a budget skip and a late tick each
// say theirs; the timer's hours the fires do not cover are reported as a gap.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { dayOf } from '../../../config/day.js';
import { loadConfig } from '../../../config/config.js';
import { Ledger, ledgerFile } from '../../../budget/ledger.js';
import { createLogger } from '../../../logs/logger.js';
import { makeRedactor } from '../../../core/redact.js';
import { tick } from '../../../daemon/tick/tick.js';
import { configYaml, nightshift, workspace, writeAgent } from '../../helpers.js';

const HOUR = 3_600_000;

test('a day of ticks: the broken agent\'s exits 78 and each fire says what it did and why', async (t) => {
  // Twenty hours ago, on the hour: the fires fall within `fires --days 1` of the real clock.
  const base = Math.floor((Date.now() - 20 * HOUR) / HOUR) * HOUR;
  const h = (k: number) => new Date(base + k * HOUR).getUTCHours();
  const at = (k: number) => new Date(base + k * HOUR);
  const top = `git:\n  enabled: false\nbackoff:\n  after_failures: 1\n  base: 12h\n  max: 24h\ndispatch:\n  - agent: broken\n    hours: [${h(1)}]\n  - agent: held\n    hours: [${h(2)}]\n  - agent: capped\n    hours: [${h(3)}]\n`;
  const ws = workspace(t, 'http://127.0.0.1:9', configYaml({ top, budget: { max_sessions_per_day: 1, timezone: 'UTC' } }));
  fs.writeFileSync(path.join(ws.prompts, 'broken.md'), '---\nmodel: [unclosed\n---\nhi\n');
  for (const a of ['held', 'capped']) writeAgent(ws, a, 'SCENARIO=text');
  const config = loadConfig(ws.config);
  // `held` failed once, just before the day began (backoff: 12h); that session is the day's one.
  const ledger = Ledger.open(ledgerFile(config));
  const seed = { id: 'seed-held', agent: 'held', day: dayOf(at(3), 'UTC'), started_at: at(-0.5).toISOString(), transcript: null, model: 'sonnet', supervisor_pid: 1, supervisor_start: null };
  ledger.open(seed);
  ledger.settle(seed, { outcome: 'error', ended_at: at(-0.4).toISOString(), duration_ms: 1, cost_usd: 0.01, cost_estimated: false, turns: 1, exit_code: 1, result: null, error: 'x', input_tokens: 0, output_tokens: 0 });
  ledger.close();
  const lines: string[] = [];
  const redact = makeRedactor([]);
  const logger = createLogger({ redact, level: 'debug', stderr: { write: (l: string) => void lines.push(l) } });
  const run = (k: number, o: { slot?: Date } = {}) => tick(config, { env: {}, logger, redact, now: () => at(k), slot: o.slot ?? null }, o.slot ? 'daemon' : 'timer');

  const r0 = await run(0.02);
  const r1 = await run(1.01);
  const r2 = await run(2.01);
  const r3 = await run(3.01);
  // The daemon's slot of hour 4, fired half an hour late.
  const r4 = await run(4.5, { slot: at(4) });
  assert.deepEqual([r0, r1, r2, r3, r4].map((r) => [r.action, r.exit_code]), [['skip', 0], ['skip', 78], ['skip', 0], ['skip', 0], ['skip', 0]]);
  // The broken agent's tick said which agent and which file, in the log OnFailure= shows.
  assert.ok(lines.some((l) => /"event":"due_rule_invalid"/.test(l) && /"agent":"broken"/.test(l) && /broken\.md/.test(l)), lines.join(''));

  const listed = await nightshift(['fires', '--json'], ws.env, ws.dir);
  assert.equal(listed.code, 0, listed.stderr);
  const fires = (JSON.parse(listed.stdout) as any[]).reverse();
  assert.equal(fires.length, 5, listed.stdout);
  assert.deepEqual(fires.map((f) => [f.kind, f.trigger, f.status, f.action, f.exit_code]), [
    ['tick', 'timer', 'settled', 'skip', 0], ['tick', 'timer', 'settled', 'skip', 78], ['tick', 'timer', 'settled', 'skip', 0],
    ['tick', 'timer', 'settled', 'skip', 0], ['tick', 'daemon', 'settled', 'skip', 0],
  ]);
  assert.equal(fires[0].reason, 'no rule is due');
  assert.deepEqual(fires[0].passed_over, []);
  // Broken: passed over, named with its file, and the exit explained.
  assert.deepEqual(fires[1].passed_over.map((p: any) => [p.rule, p.agent, p.cause]), [[0, 'broken', 'invalid']]);
  assert.match(fires[1].passed_over[0].why, /the agent file is invalid: .*broken\.md/);
  assert.match(fires[1].reason, /^no rule is due: rule 0 \(broken\) is passed over: the agent file is invalid: .*broken\.md.*exits 78/s);
  // Held: passed over with its hold's end.
  assert.deepEqual(fires[2].passed_over.map((p: any) => [p.rule, p.agent, p.cause]), [[1, 'held', 'held']]);
  assert.match(fires[2].reason, /rule 1 \(held\) is held until .*backed off after 1 failure in a row/);
  // Budget: the agent chosen, refused by the day's cap.
  assert.deepEqual([fires[3].agent, fires[3].rule], ['capped', 2]);
  assert.deepEqual(fires[3].passed_over.map((p: any) => [p.rule, p.agent, p.cause]), [[2, 'capped', 'budget']]);
  assert.match(fires[3].reason, /max_sessions_per_day/);
  // Late: the daemon's slot and how late.
  assert.equal(fires[4].slot, at(4).toISOString());
  assert.match(fires[4].late, /^late: started 30 min after its .* slot/);
  // Control for lateness: the ticks on time say nothing of it.
  assert.deepEqual(fires.slice(0, 4).map((f) => f.late), [null, null, null, null]);

  // --agent keeps the fires that chose or passed over it.
  const capped = JSON.parse((await nightshift(['fires', '--json', '--agent', 'capped'], ws.env, ws.dir)).stdout);
  assert.deepEqual(capped.map((f: any) => f.id), [fires[3].id]);
  const text = await nightshift(['fires'], ws.env, ws.dir);
  assert.match(text.stdout, /exit 78 +no rule is due: rule 0 \(broken\) is passed over: the agent file is invalid: .*broken\.md: front matter: .* \^ \(due now: the tick passes it over and exits 78\)\n +passed over: rule 0 \(broken\), invalid\n/);

  // The installed timer fires hourly since just before the first tick: every hour from the 5th on
  // left no fire, and status says so; the hours that fired are not counted.
  const prefix = path.join(ws.dir, 'units');
  fs.mkdirSync(prefix);
  const timer = path.join(prefix, 'nightshift.timer');
  fs.writeFileSync(timer, '[Timer]\nOnCalendar=hourly\n');
  fs.utimesSync(timer, at(-0.2), at(-0.2));
  const status = await nightshift(['status', '--json', '--prefix', prefix], ws.env, ws.dir);
  assert.equal(status.code, 0, status.stderr);
  const s = JSON.parse(status.stdout);
  assert.equal(s.fires_error, null);
  assert.deepEqual(s.last_fires.map((f: any) => f.id), fires.slice().reverse().map((f) => f.id));
  const g = s.tick_gaps;
  assert.ok(g, status.stdout);
  const missed = g.missed.map((iso: string) => (Date.parse(iso) - base) / HOUR);
  // Hours 0-4 fired (hour 4 late, within its hour); hours 5 onward to now did not.
  assert.equal(missed[0], 5, JSON.stringify(g));
  assert.ok(!missed.some((k: number) => k < 5), JSON.stringify(g));
  assert.equal(g.last_fire, at(4.5).toISOString());
  assert.equal(g.since_last, missed.length);
  const shown = await nightshift(['status', '--prefix', prefix], ws.env, ws.dir);
  assert.match(shown.stdout, new RegExp(`ticks\\s+no tick recorded since .*; ${missed.length} expected`));
  // Control: without the timer, no gap is claimed.
  const none = JSON.parse((await nightshift(['status', '--json', '--prefix', path.join(ws.dir, 'none')], ws.env, ws.dir)).stdout);
  assert.equal(none.tick_gaps, null);
});
