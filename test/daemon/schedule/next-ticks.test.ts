// The timer's next ticks (issue 41): listed from the installed timer's OnCalendar= in next --json,
// status --json and the terminal, and nothing before the instant asked about.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { nextTicks, timerTicks } from '../../../daemon/schedule/timer-ticks.js';
import { nightshift, ROOT, tempDir } from '../../helpers.js';

const FROM = new Date('2026-12-01T07:00:00Z');
// Written out by hand: 06:00 and 18:00 UTC, from 07:00 on the 1st.
const EXPECTED = ['2026-12-01T18:00:00.000Z', '2026-12-02T06:00:00.000Z', '2026-12-02T18:00:00.000Z', '2026-12-03T06:00:00.000Z', '2026-12-03T18:00:00.000Z', '2026-12-04T06:00:00.000Z'];

function site(t: any) {
  const dir = tempDir(t);
  fs.cpSync(path.join(ROOT, 'prompts'), path.join(dir, 'prompts'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'nightshift.yaml'), 'sandbox: none\ngit:\n  enabled: false\ndispatch:\n  - agent: gardener\n');
  const units = path.join(dir, 'units');
  fs.mkdirSync(units);
  fs.writeFileSync(path.join(units, 'nightshift.timer'), '[Timer]\nOnCalendar=*-*-* 06,18:00:00 UTC\nPersistent=true\n');
  return { dir, units, env: { PATH: process.env.PATH, NIGHTSHIFT_CONFIG: path.join(dir, 'nightshift.yaml') } };
}

test('nextTicks: the first n at or after the instant, in order', () => {
  const ticks = ['2026-12-01T05:00:00Z', '2026-12-01T07:00:00Z', '2026-12-01T08:00:00Z', '2026-12-01T09:00:00Z'].map((t) => new Date(t));
  assert.deepEqual(nextTicks(ticks, FROM, 2), ['2026-12-01T07:00:00.000Z', '2026-12-01T08:00:00.000Z']);
  assert.deepEqual(nextTicks(ticks, new Date('2026-12-02T00:00:00Z')), []);
});

test("the installed timer's OnCalendar= gives the next six ticks (systemd-analyze expands it)", (t) => {
  const { units } = site(t);
  const { ticks, calendar } = timerTicks(units, FROM, process.env.PATH);
  assert.equal(calendar.source, 'timer');
  assert.equal(calendar.assumed, null, 'systemd-analyze is installed (.ci/run)');
  assert.deepEqual(nextTicks(ticks, FROM), EXPECTED);
});

test('next --json and status --json list them; next says them in words', async (t) => {
  const { dir, units, env } = site(t);
  const next = await nightshift(['next', '--json', '--at', FROM.toISOString(), '--prefix', units], env, dir);
  assert.equal(next.code, 0, next.stderr);
  assert.deepEqual(JSON.parse(next.stdout).next_ticks, EXPECTED);
  const words = await nightshift(['next', '--at', FROM.toISOString(), '--prefix', units], env, dir);
  assert.match(words.stdout, /next ticks 2026-12-01 18:00 UTC, 2026-12-02 06:00 UTC, 2026-12-02 18:00 UTC/);
  // status looks from now: the same calendar, each tick at 06:00 or 18:00, increasing, after now.
  const before = Date.now();
  const status = await nightshift(['status', '--json', '--prefix', units], env, dir);
  assert.equal(status.code, 0, status.stderr);
  const got: string[] = JSON.parse(status.stdout).next.next_ticks;
  // In words: the first on the next at line, the rest under it in the same column.
  const text = (await nightshift(['status', '--prefix', units], env, dir)).stdout;
  assert.match(text, /^next at +\d{4}-\d\d-\d\d (06|18):00 UTC \(/m);
  assert.equal(/^then +/m.exec(text)?.[0].length, /^next at +/m.exec(text)?.[0].length, 'the same column');
  assert.match(text, /^then +(\d{4}-\d\d-\d\d (06|18):00 UTC(, |$)){5}/m);
  assert.equal(got.length, 6);
  got.forEach((iso, i) => {
    assert.match(iso, /T(06|18):00:00\.000Z$/);
    assert.ok(Date.parse(iso) >= before - 1000);
    if (i) assert.equal(Date.parse(iso) - Date.parse(got[i - 1]), 12 * 3_600_000);
  });
});
