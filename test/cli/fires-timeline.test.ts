// `nightshift fires --timeline` (issue 41): one line per hour, a glyph per fire coloured by what
// it did, `_` where the installed timer's expected tick left no fire; plain ASCII off a terminal.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { Fires, type FireAction } from '../../budget/fires.js';
import type { FireRow } from '../../budget/fires.js';
import { firesTimeline } from '../../cli/fires-timeline.js';
import { nightshift, ROOT, tempDir } from '../helpers.js';

const HOUR = 3_600_000;
const fire = (at: string, action: string, o: Partial<FireRow> = {}): FireRow => ({
  id: 1, at, kind: 'tick', trigger: 'timer', slot: null, late: null, status: 'settled', action, agent: null, rule: null, session: null, outcome: null,
  reason: 'r', passed_over: [], exit_code: 0, ended_at: at, supervisor_pid: 1, supervisor_start: null, ...o,
} as FireRow);

test('one line per hour, glyphs in time order, a missed tick as _, the sessions named; a legend', () => {
  const rows = [fire('2026-12-02T09:05:00Z', 'session', { agent: 'gardener', outcome: 'ok' }), fire('2026-12-02T07:00:30Z', 'skip'), fire('2026-12-02T09:40:00Z', 'refused'), fire('2026-12-02T07:30:00Z', 'dream')];
  const text = firesTimeline(rows, { from: new Date('2026-12-02T06:10:00Z'), to: new Date('2026-12-02T10:20:00Z'), timezone: 'UTC', missed: [new Date('2026-12-02T08:00:00Z')], colour: false });
  assert.equal(text, [
    '2026-12-02 06:00',
    '2026-12-02 07:00  .D',
    '2026-12-02 08:00  _',
    '2026-12-02 09:00  SR  gardener ok',
    '2026-12-02 10:00',
    '',
    '(UTC) S session  . skip  D dream  R refused  _ an expected tick that left no fire',
  ].join('\n'));
  assert.ok(/^[\x20-\x7e\n]*$/.test(text), 'plain ASCII');
});

test('sessions side by side in one hour: each named, one running now, and the agents that waited for a slot', () => {
  const rows = [
    fire('2026-12-02T09:00:01Z', 'session', { agent: 'a1', outcome: 'ok' }),
    fire('2026-12-02T09:00:03Z', 'session', { agent: 'a2', outcome: 'error' }),
    fire('2026-12-02T09:00:05Z', 'running', { agent: 'a3', status: 'open', action: null } as Partial<FireRow>),
    fire('2026-12-02T09:30:00Z', 'locked'),
    fire('2026-12-02T09:30:01Z', 'locked', { agent: 'a4' }),
  ];
  const text = firesTimeline(rows, { from: new Date('2026-12-02T09:00:00Z'), to: new Date('2026-12-02T09:59:00Z'), timezone: 'UTC', missed: null, colour: false });
  assert.equal(text.split('\n')[0], '2026-12-02 09:00  SS>LL  a1 ok, a2 error, a3 running, a4 waited');
});

test('at a colour terminal each glyph is painted by what it did; the same text without the paint', () => {
  const rows = [fire('2026-12-02T07:00:00Z', 'session', { agent: 'g' }), fire('2026-12-02T07:10:00Z', 'failed to start')];
  const o = { from: new Date('2026-12-02T07:00:00Z'), to: new Date('2026-12-02T07:30:00Z'), timezone: 'Europe/Berlin', missed: [], colour: true };
  const painted = firesTimeline(rows, o);
  assert.match(painted, /^2026-12-02 08:00 {2}\x1b\[32mS\x1b\[0m\x1b\[31mF\x1b\[0m {2}g$/m);
  assert.equal(painted.replace(/\x1b\[[0-9;]*m/g, ''), firesTimeline(rows, { ...o, colour: false }));
  // A session that ended in error is red, not green (control: painted by its action alone, green).
  assert.match(firesTimeline([fire('2026-12-02T07:00:00Z', 'session', { agent: 'g', outcome: 'error' })], o), /^2026-12-02 08:00 {2}\x1b\[31mS\x1b\[0m {2}g error$/m);
  assert.ok(!firesTimeline(rows, { ...o, colour: false }).includes('\x1b'));
  assert.match(firesTimeline([], { ...o, missed: null, colour: false }), /no fires\nthe timer's expected ticks are not checked/);
});

test('the built CLI: a day of hours, the fires the site recorded, the hour the timer fired nothing as _', async (t) => {
  const dir = tempDir(t);
  fs.cpSync(path.join(ROOT, 'prompts'), path.join(dir, 'prompts'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'nightshift.yaml'), 'sandbox: none\nbudget:\n  timezone: UTC\ngit:\n  enabled: false\ndispatch:\n  - agent: gardener\n');
  const units = path.join(dir, 'units');
  fs.mkdirSync(units);
  const timer = path.join(units, 'nightshift.timer');
  fs.writeFileSync(timer, '[Timer]\nOnCalendar=hourly\n');
  const H = Math.floor(Date.now() / HOUR) * HOUR;
  // Installed three and a half hours before this hour: its ticks at H-3h, H-2h, H-1h and H count.
  fs.utimesSync(timer, new Date(H - 3.5 * HOUR), new Date(H - 3.5 * HOUR));
  fs.mkdirSync(path.join(dir, 'state'));
  const fires = Fires.open(path.join(dir, 'state', 'fires.db'));
  const write = (t0: number, action: FireAction, agent: string | null = null) => {
    const at = new Date(t0).toISOString();
    const id = fires.begin({ at, kind: 'tick', trigger: 'timer', slot: null, late: null, supervisor_pid: process.pid, supervisor_start: null });
    fires.settle(id, { action, agent, rule: null, session: null, outcome: agent ? 'ok' : null, reason: 'r', passed_over: [], exit_code: 0, ended_at: at });
  };
  write(H - 3 * HOUR + 30_000, 'skip');
  // H-2h: no fire.
  write(H - HOUR + 30_000, 'session', 'gardener');
  write(H, 'dream');
  fires.close();
  const env = { PATH: process.env.PATH, NIGHTSHIFT_CONFIG: path.join(dir, 'nightshift.yaml') };
  const ran = await nightshift(['fires', '--timeline', '--prefix', units], env, dir);
  assert.equal(ran.code, 0, ran.stderr);
  const stamp = (t0: number) => new Date(t0).toISOString().slice(0, 16).replace('T', ' ');
  const lines = ran.stdout.trimEnd().split('\n');
  const hours = lines.slice(0, lines.indexOf(''));
  assert.equal(hours.length, 25, 'the hours of the last 24, both ends');
  assert.equal(hours[0], stamp(H - 24 * HOUR));
  assert.ok(hours.includes(`${stamp(H - 3 * HOUR)}  .`));
  assert.ok(hours.includes(`${stamp(H - 2 * HOUR)}  _`), ran.stdout);
  assert.ok(hours.includes(`${stamp(H - HOUR)}  S  gardener ok`));
  assert.equal(hours.at(-1), `${stamp(H)}  D`);
  assert.ok(!ran.stdout.includes('\x1b'), 'not a terminal: no colour');
  // Control: without the timer nothing is expected, so no hour shows a gap, and it says so.
  const bare = await nightshift(['fires', '--timeline', '--prefix', path.join(dir, 'none')], env, dir);
  assert.ok(!bare.stdout.includes('_'), bare.stdout);
  assert.match(bare.stdout, /expected ticks are not checked/);
});
