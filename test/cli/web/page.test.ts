// The status page's HTML as pure functions over plain data: the escape, each section's numbers,
// and a session's `<script>` kept inert by the escape alone (control: an identity escape leaves it
// live in the same page).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { html } from '../../../cli/web/escape.js';
import { fleetSection, gitWords, OUTCOME_COLOURS, renderPage, renderSession, type Day, type PageData, type StatusLook } from '../../../cli/web/page.js';
import { OUTCOMES } from '../../../sessions/run/outcome.js';
import type { SessionRecord } from '../../../budget/session-record.js';
import type { FireRow } from '../../../budget/fires.js';

const EVIL = '<script>alert("x")</script> & \'q\'';

const record = (o: Partial<SessionRecord>): SessionRecord => ({
  id: 's1', agent: 'gardener', outcome: 'ok', exit_code: 0, cost_usd: 0.5, cost_estimated: false, cli_cost_usd: null, reserved_usd: null, turns: 3, duration_ms: 61_000,
  started_at: '2026-12-02T07:00:00.000Z', ended_at: '2026-12-02T07:01:01.000Z', result: null, error: null, transcript: null, memory: 'served', retry_at: null, egress_refused: null, api_refused: null, api_calls: 3, git: null, ...o,
});
const day = (date: string, by: Record<string, number>): Day => ({
  date, sessions: Object.keys(by).length, max_sessions: 10, cost_usd: Object.values(by).reduce((a, b) => a + b, 0), reserved_usd: 0, left_usd: 0, max_usd: 5,
  max_usd_per_session: 1, min_session_usd: 0.1, by_agent: Object.fromEntries(Object.entries(by).map(([a, c]) => [a, { sessions: 1, cost_usd: c }])),
} as unknown as Day);
const fire = (at: string, action: string, o: Partial<FireRow> = {}): FireRow => ({
  id: 1, at, kind: 'tick', trigger: 'timer', slot: null, late: null, status: 'settled', action, agent: null, rule: null, session: null, outcome: null,
  reason: 'nothing due', passed_over: [], exit_code: 0, ended_at: at, supervisor_pid: 1, supervisor_start: null, ...o,
} as FireRow);

function data(): PageData {
  const status = {
    invalid_agents: [{ name: 'broken', file: '/p/broken.md', problems: ['max_turns: expected a number'] }],
    budget: day('2026-12-02', { gardener: 1.25 }),
    next: { starts: true, agent: 'gardener', reason: 'rule 0 is due', tick_at: '2026-12-02T09:00:00.000Z', next_ticks: ['2026-12-02T09:00:00.000Z', '2026-12-02T10:00:00.000Z'], next_due: { gardener: '2026-12-02T09:00:00.000Z', scout: null }, why: { scout: 'held until 2026-12-02T10:00:00Z' }, waits: { gardener: 'ran 1 of max_runs_per_day 1 today (every session started counts, a failed one too)' } },
    holds: { scout: { until: '2026-12-02T10:00:00.000Z', reason: 'rate limited' } },
    windows: [{ name: 'five_hour', utilization: 0.42, resets_at: '2026-12-02T11:00:00.000Z', seen_at: '2026-12-02T07:00:00.000Z' }],
    tick_gaps: { from: '2026-12-01T08:00:00.000Z', missed: ['2026-12-02T03:00:00.000Z', '2026-12-02T04:00:00.000Z'] }, fires_error: null,
  } as unknown as StatusLook;
  return {
    at: '2026-12-02T08:00:00.000Z', timezone: 'UTC', status,
    days: [day('2026-11-30', { gardener: 1 }), day('2026-12-01', { gardener: 2, scout: 0.5 }), day('2026-12-02', { gardener: 1.25 })],
    month: [day('2026-12-01', { gardener: 2, scout: 0.5 }), day('2026-12-02', { gardener: 1.25 })],
    fires: [fire('2026-12-02T07:00:00.000Z', 'session'), fire('2026-12-02T06:00:00.000Z', 'skip'), fire('2026-12-02T05:00:00.000Z', 'skip'), fire('2026-11-29T05:00:00.000Z', 'skip')],
    sessions: [record({ id: 'evil1', result: EVIL, agent: 'gardener' }), record({ id: 's2', outcome: 'timeout' })],
    memory: { memories: 12, faded: 1, superseded: 2, observations: 30, edges: 4, threads_open: 3, predictions_open: 1, contradiction_candidates: 2, overdue: 5, retrievability: { mean: 0.8, below_half: 1 },
      last_dream: { at: '2026-12-02T03:00:00.000Z', duration_ms: 2500, observations: 17, clusters: 2, abstractions: 2, superseded: 1, contradictions: 3, linked: 6, faded: null, failed_phases: ['fade'] } } as unknown as PageData['memory'],
  };
}

describe('web page', () => {
  test('html escapes <, >, &, and both quotes, and nothing else', () => {
    assert.equal(html(EVIL), '&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;q&#39;');
    assert.equal(html('plain text 1.5'), 'plain text 1.5');
    assert.equal(html(null), '');
    assert.equal(html(3), '3');
  });

  test('the sessions running now, side by side: each with its agent, since when and its spend of the reservation, and the slots in use', () => {
    const d = data();
    (d.status as any).running = [
      { id: 'r1', agent: 'gardener', started_at: '2026-12-02T07:50:00.000Z', elapsed_ms: 600_000, cost_usd: 0.12, reserved_usd: 1, supervisor_pid: 10 },
      { id: 'r2', agent: EVIL, started_at: '2026-12-02T07:55:00.000Z', elapsed_ms: 300_000, cost_usd: 0.03, reserved_usd: null, supervisor_pid: 11 },
    ];
    (d.status as any).max_concurrent = 3;
    const page = renderPage(d);
    assert.match(page, /<caption>running now: 2 of 3 slots in use \(sessions\.max_concurrent\)<\/caption>/);
    assert.match(page, /<tr data-session="r1"><td>gardener<\/td><td>2026-12-02 07:50[^<]*<\/td><td class="n">10 min<\/td><td class="n">\$0\.12 of \$1\.00<\/td>/);
    assert.ok(!page.includes(EVIL), 'the agent name is escaped');
    (d.status as any).running = [];
    assert.match(renderPage(d), /<p id="running" class="muted">no session running; 0 of 3 slots in use/);
  });

  test("the fleet's hosts: each with its last heartbeat, running sessions, spend, reservations and clock; a host's name from the database is escaped (control: an identity escape leaves it live); none without a fleet", () => {
    const d = data();
    assert.equal(fleetSection(d), '', 'no fleet, no section');
    (d.status as any).fleet = {
      database: 'db.internal:5432/fleet', this_host: 'host-a', error: null, day: { date: '2026-12-02', sessions: 3, cost_usd: 1.5, reserved_usd: 0.5 },
      hosts: [
        { host: 'host-a', seen_at: '2026-12-02T07:59:00.000Z', age_ms: 60_000, skew_ms: 120, version: '0.1.0', running: 0, spent_today_usd: 1, reserved_today_usd: 0 },
        { host: EVIL, seen_at: '2026-12-02T07:59:30.000Z', age_ms: 30_000, skew_ms: -3500, version: '0.1.0', running: 1, spent_today_usd: 0.5, reserved_today_usd: 0.5 },
      ],
      running: [{ agent: 'scout', slot: '2026-12-02T07:00:00.000Z', host: EVIL, session: 's9', claimed_at: '2026-12-02T07:10:00.000Z', lease_until: '2026-12-02T08:10:00.000Z', ended_at: null, outcome: null, live: true }],
    };
    const f = fleetSection(d);
    assert.match(f, /<h2>Fleet, db\.internal:5432\/fleet<\/h2><p id="fleet-day">the fleet's day 2026-12-02: 3 sessions, <b>\$1\.50<\/b> spent, \$0\.50 reserved<\/p>/);
    assert.match(f, /<tr class="host" data-host="host-a"><td>host-a <span class="muted">\(this one\)<\/span><\/td><td class="n" data-age="60000">1m 00s ago<\/td><td class="n" data-running="0">0<\/td><td class="n">\$1\.00<\/td><td class="n"><\/td><td class="n">\+0\.1 s<\/td>/);
    // A clock off by more than doctor's 2 s is marked.
    assert.match(f, /data-running="1">1<\/td><td class="n">\$0\.50<\/td><td class="n">\$0\.50<\/td><td class="n bad">-3\.5 s<\/td>/);
    assert.match(f, /<table id="fleet-running">.*<td>scout<\/td>/);
    assert.ok(!f.includes(EVIL) && f.includes(html(EVIL)));
    assert.ok(renderPage(d).includes('<section id="fleet">'));
    assert.ok(fleetSection(d, (t) => String(t ?? '')).includes(EVIL), 'control: unescaped, the name is live');
    (d.status as any).fleet = { database: 'db.internal:5432/fleet', this_host: 'host-a', error: 'the fleet\'s database at db.internal:5432/fleet cannot be reached: <refused>', hosts: [], running: [], day: null };
    assert.match(fleetSection(d), /<p id="fleet-error" class="bad">the fleet's database cannot be seen: the fleet&#39;s database at db\.internal:5432\/fleet cannot be reached: &lt;refused&gt;\. The page shows this host's own state\.<\/p>/);
  });

  test("a session's <script> result is text in the page; with an identity escape the same page holds it live (control)", () => {
    const page = renderPage(data());
    assert.ok(!page.includes('<script'), 'no script element');
    assert.ok(page.includes('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;q&#39;'));
    const unescaped = renderPage(data(), (t) => String(t ?? ''));
    assert.ok(unescaped.includes('<script>alert("x")</script>'), 'control: without the escape the script is live');
    const one = renderSession(record({ id: '<b>id', result: EVIL, transcript: '/x' }), `assistant: ${EVIL}`);
    assert.ok(!one.includes('<script') && !one.includes('<b>id'));
    assert.ok(renderSession(record({ result: EVIL }), EVIL, (t) => String(t ?? '')).includes('<script>'), 'control for the session page');
  });

  test('now: each agent with its next due, hold or invalid file; the day and each window as bars', () => {
    const page = renderPage(data());
    assert.match(page, /<tr data-agent="scout">.*held until 2026-12-02 10:00 UTC: rate limited/);
    // Why an agent runs no sooner (control: without it the row says only when).
    assert.match(page, /<tr data-agent="gardener"><td>gardener<\/td><td>2026-12-02 09:00 UTC<br><span class="muted why">not sooner: ran 1 of max_runs_per_day 1 today \(every session started counts, a failed one too\)<\/span><\/td><td>ready<\/td><\/tr>/);
    assert.match(page, /<tr data-agent="scout"><td>scout<\/td><td><span class="muted">none within 8 days<\/span><br><span class="muted why">because: held until 2026-12-02T10:00:00Z<\/span>/);
    assert.match(page, /<tr data-agent="broken">.*invalid: \/p\/broken\.md: max_turns: expected a number/);
    assert.match(page, /id="budget-spent">\$1\.25 of \$5\.00</);
    assert.match(page, /id="budget-sessions">1 of 10</);
    assert.match(page, /window five_hour.*42%/);
    assert.match(page, /id="next-ticks">the timer's next ticks: <span class="tick" data-at="2026-12-02T09:00:00.000Z">2026-12-02 09:00 UTC<\/span>, <span class="tick" data-at="2026-12-02T10:00:00.000Z">2026-12-02 10:00 UTC<\/span><\/p>/);
  });

  test('fires: only the last 48 hours, counted by action; the missed ticks as gaps', () => {
    const page = renderPage(data());
    assert.equal(page.match(/<rect class="fire"/g)?.length, 3, 'the fire of 11-29 is older than 48 hours');
    assert.match(page, /data-action="skip"><i [^>]*><\/i>skip <b>2<\/b>/);
    assert.match(page, /data-action="session"><i [^>]*><\/i>session <b>1<\/b>/);
    assert.equal(page.match(/<rect class="gap"/g)?.length, 2);
    assert.match(page, /2 expected ticks of the timer left no fire \(checked since 2026-12-01 08:00 UTC\)/);
    // No timer installed: nothing is claimed about ticks (not "0 left no fire").
    const d = data();
    const none = renderPage({ ...d, status: { ...d.status, tick_gaps: null, next: { ...d.status.next, calendar: { source: 'default', file: '/etc/systemd/system/nightshift.timer' } } } as unknown as StatusLook });
    assert.match(none, /not checked: no timer installed at \/etc\/systemd\/system\/nightshift\.timer/);
    assert.doesNotMatch(none, /left no fire/);
  });

  // Control: with every session fire coloured as "session" (the old green), error and the rest are green.
  test('fires: a session fire says its outcome, green for ok alone, every outcome with a colour and a label of its own', () => {
    const rgb = (hex: string) => [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16));
    const green = (hex: string) => { const [r, g, b] = rgb(hex); return g > r && g > b; };
    const fires = OUTCOMES.map((o, i) => fire(`2026-12-02T0${Math.floor(i / 6)}:${String((i % 6) * 10).padStart(2, '0')}:00.000Z`, 'session', { agent: 'gardener', outcome: o }));
    const page = renderPage({ ...data(), fires });
    assert.equal(new Set(Object.values(OUTCOME_COLOURS)).size, OUTCOMES.length, 'one colour per outcome');
    for (const o of OUTCOMES) {
      const colour = OUTCOME_COLOURS[o];
      assert.equal(green(colour), o === 'ok', `${o}: ${colour}`);
      assert.match(page, new RegExp(`<rect class="fire" data-action="session" data-outcome="${o}" [^>]* fill="${colour}"><title>[^<]* session ${o} gardener`));
      assert.match(page, new RegExp(`data-action="session ${o}"><i class="sw" style="background:${colour}"></i>session ${o} <b>1</b>`));
    }
    // A row that holds no outcome claims none, and is not green either.
    assert.match(renderPage(data()), /<rect class="fire" data-action="session" x="[^"]*" y="10" width="3" height="30" fill="#000000">/);
  });

  // Control: with each fire its own 3-px mark, the eight share one x and read as one bar.
  test('fires: eight fires in a minute are a stack of eight marks with their count; fires hours apart are not stacked', () => {
    const burst = Array.from({ length: 8 }, (_, i) => fire(`2026-12-02T07:00:${String(i * 7).padStart(2, '0')}.000Z`, i % 2 ? 'locked' : 'skip'));
    const page = renderPage({ ...data(), fires: [...burst, fire('2026-12-02T01:00:00.000Z', 'dream')] });
    const stacks = [...page.matchAll(/<g class="fire-stack" data-count="(\d+)">(.*?)<\/g>/g)];
    assert.equal(stacks.length, 1);
    assert.equal(stacks[0][1], '8');
    const marks = [...stacks[0][2].matchAll(/<rect class="fire" data-action="(\w+)" x="\d+" y="([\d.]+)" width="3" height="([\d.]+)"/g)];
    assert.equal(marks.length, 8);
    assert.equal(new Set(marks.map((m) => m[2])).size, 8, 'each at a height of its own');
    assert.ok(marks.every((m) => Number(m[3]) >= 3), 'each tall enough to see');
    assert.deepEqual(marks.map((m) => m[1]), burst.map((f) => f.action), 'oldest at the bottom, in time order');
    assert.match(stacks[0][2], /<text class="stack-count"[^>]*>8<\/text>/);
    assert.match(stacks[0][2], /<title>8 fires, 2026-12-02 07:00 UTC to 2026-12-02 07:00 UTC<\/title>/);
    assert.match(page, /<rect class="fire" data-action="dream" x="\d+" y="10" width="3" height="30"/, 'the dream six hours before stands alone');
    assert.equal(page.match(/<rect class="fire"/g)?.length, 9, 'every fire has its mark');
  });

  test('spend: one bar per day, stacked by agent, the month total, the cap', () => {
    const page = renderPage(data());
    assert.equal(page.match(/<g class="day"/g)?.length, 3);
    assert.equal(page.match(/<rect class="part"/g)?.length, 4);
    assert.match(page, /id="month-total">\$3\.75</);
    assert.match(page, /id="cap">\$5\.00</);
  });

  test('sessions and memory: each session a row linking its record; the counts', () => {
    const page = renderPage(data());
    assert.match(page, /<a href="session\/evil1">evil1<\/a>/);
    assert.match(page, /<tr class="session" data-id="s2">.*timeout/);
    assert.match(page, /data-key="threads_open">3</);
    assert.match(page, /data-key="contradiction_candidates">2</);
    assert.match(page, /id="last-dream" data-at="2026-12-02T03:00:00.000Z">last dream, 2026-12-02 03:00 UTC \(2\.5s\)/);
    assert.match(page, /data-dream="observations">17</);
    assert.match(page, /data-dream="abstractions">2</);
    assert.match(page, /data-dream="faded">-</);
    assert.match(page, /failed phases: fade/);
    const d = data();
    assert.match(renderPage({ ...d, memory: { ...d.memory, last_dream: null } as PageData['memory'] }), /id="last-dream" class="muted">no dream yet</);
    assert.match(renderPage({ ...data(), memory: { error: 'locked <x>' } }), /cannot be read: locked &lt;x&gt;/);
  });

  test("each session's git state: pushed, a branch (pushed or local), files left out, an error; none when git sync is off", () => {
    const g = { pulled: true, committed: true, pushed: true, branch: null, branch_pushed: false, error: null, uncommitted: false, left_out: [], untracked: [] };
    assert.equal(gitWords(g), 'pushed');
    assert.equal(gitWords({ ...g, pushed: false, branch: 'nightshift/s1', branch_pushed: true }), 'branch nightshift/s1 (pushed): not on main until merged');
    assert.equal(gitWords({ ...g, pushed: false, branch: 'nightshift/s1' }), 'branch nightshift/s1 (local only): not on main until merged');
    assert.equal(gitWords({ ...g, left_out: [{ path: 'big.bin', size: 3_000_000, limit: 'commit_file' as const }] }), 'pushed; 1 file left out');
    assert.equal(gitWords({ ...g, pushed: false, error: 'remote unpack failed' }), 'error: remote unpack failed');
    assert.equal(gitWords({ ...g, pushed: false }), 'committed, not pushed');
    assert.equal(gitWords(null), '-');
    const page = renderPage({ ...data(), sessions: [record({ id: 'b1', git: { ...g, pushed: false, branch: 'nightshift/<b1>' } })] });
    assert.match(page, /<td class="git">branch nightshift\/&lt;b1&gt; \(local only\): not on main until merged<\/td>/);
  });

  test('a traced session and fire carry their trace id on the page; untraced ones none', () => {
    const d = data();
    d.sessions = [record({ id: 't1', trace_id: '4bf92f3577b34da6a3ce929d0e0e4736' }), record({ id: 'u1' })];
    d.fires = [fire('2026-12-02T07:00:00.000Z', 'session', { trace_id: '4bf92f3577b34da6a3ce929d0e0e4736' })];
    const page = renderPage(d);
    assert.match(page, /<tr class="session" data-id="t1" data-trace="4bf92f3577b34da6a3ce929d0e0e4736"/);
    assert.match(page, /<tr class="session" data-id="u1">/);
    assert.match(page, /\(trace 4bf92f3577b34da6a3ce929d0e0e4736\)<\/title>/);
    assert.match(renderSession(record({ trace_id: '4bf92f3577b34da6a3ce929d0e0e4736' }), null), /<th>trace_id<\/th><td><pre>4bf92f3577b34da6a3ce929d0e0e4736<\/pre>/);
  });
});
