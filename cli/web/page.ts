// The status page as HTML: pure functions over the plain data the --json outputs give (status,
// budget --days, fires, sessions, show, memory stats). Every text goes through one escape (`esc`,
// ./escape.ts by default; a test passes another to show it is what keeps a session's words inert).
import type { GitOutcome, SessionRecord } from '../../budget/session-record.js';
import type { FireRow } from '../../budget/fires.js';
import type { MemoryStats } from '../../memory/types.js';
import type { budgetReport } from '../../daemon/tick/budget-report.js';
import type { status } from '../../daemon/tick/status.js';
import { money } from '../../core/money.js';
import { shortDuration, zoneStamp } from '../table.js';
import { html, type Escape } from './escape.js';
import { counted } from '../../core/words.js';
import type { Outcome } from '../../sessions/run/outcome.js';

export type Day = ReturnType<typeof budgetReport>;
export type StatusLook = Awaited<ReturnType<typeof status>>;
export type PageData = {
  at: string;
  timezone: string;
  status: StatusLook;
  // The chart's days (oldest first) and the month's days so far (budget --days N --json).
  days: Day[];
  month: Day[];
  fires: FireRow[];
  sessions: SessionRecord[];
  memory: MemoryStats | { error: string };
};

export const FIRE_HOURS = 48;
const PALETTE = ['#4e79a7', '#f28e2b', '#59a14f', '#b07aa1', '#76b7b2', '#edc948', '#ff9da7', '#9c755f'];
export const FIRE_COLOURS: Record<string, string> = {
  session: '#000000', skip: '#9e9e9e', dream: '#6a1b9a', locked: '#f9a825', refused: '#ef6c00', 'failed to start': '#c62828', crashed: '#b71c1c', running: '#1565c0',
};
// A session fire is coloured by how the session ended: green for ok alone. (A session fire whose
// outcome the row does not hold is black, "session".)
export const OUTCOME_COLOURS: Record<Outcome, string> = {
  ok: '#2e7d32', error: '#c62828', spawn_failed: '#880e4f', abandoned: '#4e342e', disk_full: '#ad1457', interrupted: '#546e7a',
  timeout: '#e65100', stalled: '#ff6f00', loop: '#d84315', budget: '#bf360c', max_turns: '#8d6e63', rate_limited: '#00838f',
};

// What a fire's mark says: its action, and a session's outcome ("session error").
export function fireMark(f: FireRow): { label: string; colour: string } {
  const action = f.status === 'open' ? 'running' : f.action ?? 'running';
  if (action === 'session' && f.outcome) return { label: `session ${f.outcome}`, colour: OUTCOME_COLOURS[f.outcome as Outcome] ?? '#000000' };
  return { label: action, colour: FIRE_COLOURS[action] ?? '#000000' };
}

// Fires whose marks would overlap (within `px` of the first of a run, in time order) drawn as one
// stack: eight fires in a minute are eight marks and a count, not one bar.
export function fireStacks<T>(items: T[], xOf: (i: T) => number, px = 4): T[][] {
  const out: T[][] = [];
  for (const i of items) {
    const last = out.at(-1);
    if (last && xOf(i) - xOf(last[0]) < px) last.push(i);
    else out.push([i]);
  }
  return out;
}

const STYLE = `body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222;max-width:1100px}
h1{font-size:1.4em}h2{font-size:1.1em;border-bottom:1px solid #ccc;margin-top:1.6em}
table{border-collapse:collapse}td,th{padding:2px 8px;text-align:left;vertical-align:top}
td.n{text-align:right}tr:nth-child(even){background:#f4f4f4}.bad{color:#b71c1c}.muted{color:#777}
.legend span{display:inline-block;margin-right:1em}.sw{display:inline-block;width:.8em;height:.8em;margin-right:.3em}
pre{white-space:pre-wrap;background:#f7f7f7;padding:.8em;border:1px solid #ddd}`;

export function layout(title: string, body: string, o: { refresh?: number; esc?: Escape } = {}): string {
  const esc = o.esc ?? html;
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${esc(title)}</title>${o.refresh ? `<meta http-equiv="refresh" content="${o.refresh}">` : ''}<meta name="referrer" content="no-referrer"><style>${STYLE}</style></head><body>${body}</body></html>`;
}

// A horizontal bar: `value` of `max`, over the limit in red.
function hbar(value: number, max: number, label: string, esc: Escape): string {
  const w = 300;
  const f = max > 0 ? Math.min(1, value / max) : 0;
  return `<svg class="hbar" width="${w}" height="14" role="img" aria-label="${esc(label)}"><rect width="${w}" height="14" fill="#eee"/><rect width="${Math.round(f * w)}" height="14" fill="${value > max ? '#c62828' : '#4e79a7'}"/></svg>`;
}

export function nowSection(d: PageData, esc: Escape = html): string {
  const s = d.status;
  const at = (iso: string | null) => (iso ? esc(zoneStamp(iso, d.timezone)) : '<span class="muted">none within 8 days</span>');
  const invalid = new Map(s.invalid_agents.map((b) => [b.name, b]));
  const names = [...new Set([...Object.keys(s.next.next_due), ...Object.keys(s.holds), ...invalid.keys()])].sort();
  const rows = names.map((a) => {
    const h = s.holds[a];
    const b = invalid.get(a);
    const state = b ? `<span class="bad">invalid: ${esc(b.file)}: ${esc(b.problems.join('; '))}</span>` : h ? `held until ${esc(zoneStamp(h.until, d.timezone))}: ${esc(h.reason)}` : 'ready';
    // Why it will not run sooner (or at all within 8 days): its limit used up, a hold, the budget.
    const why = s.next.next_due[a] ? s.next.waits?.[a] : s.next.why?.[a];
    return `<tr data-agent="${esc(a)}"><td>${esc(a)}</td><td>${b ? '-' : at(s.next.next_due[a] ?? null)}${!b && why ? `<br><span class="muted why">${s.next.next_due[a] ? 'not sooner' : 'because'}: ${esc(why)}</span>` : ''}</td><td>${state}</td></tr>`;
  });
  const b = s.budget;
  const windows = s.windows.map((w) => `<tr class="window"><td>window ${esc(w.name)}</td><td>${hbar(w.utilization, 1, `${w.name} ${Math.round(w.utilization * 100)}%`, esc)}</td><td class="n">${esc(Math.round(w.utilization * 100))}%</td><td>${w.resets_at ? `resets ${esc(zoneStamp(w.resets_at, d.timezone))}` : ''}</td></tr>`);
  return `<section id="now"><h2>Now</h2>
<p>next tick: <b>${esc(s.next.starts ? s.next.agent : 'nothing')}</b> (${esc(s.next.reason)}) at ${at(s.next.tick_at)}</p>
<p id="next-ticks">the timer's next ticks: ${(s.next.next_ticks ?? []).map((t) => `<span class="tick" data-at="${esc(t)}">${esc(zoneStamp(t, d.timezone))}</span>`).join(', ') || '<span class="muted">none within 8 days</span>'}</p>
${runningTable(s, d.timezone, esc)}<table class="agents"><tr><th>agent</th><th>next due</th><th>state</th></tr>${rows.join('')}</table>
<table class="budget"><tr><td>sessions today</td><td>${hbar(b.sessions, b.max_sessions, 'sessions', esc)}</td><td class="n" id="budget-sessions">${esc(b.sessions)} of ${esc(b.max_sessions)}</td><td></td></tr>
<tr><td>spent today</td><td>${hbar(b.cost_usd + b.reserved_usd, b.max_usd, 'spend', esc)}</td><td class="n" id="budget-spent">${esc(money(b.cost_usd))} of ${esc(money(b.max_usd))}</td><td>${b.reserved_usd ? `${esc(money(b.reserved_usd))} reserved` : ''}</td></tr>${windows.join('')}</table></section>`;
}

// The sessions running now, side by side: agent, since when, spend of its reservation; the slots.
function runningTable(s: StatusLook, timezone: string, esc: Escape): string {
  const running = s.running ?? [];
  const slots = `${esc(running.length)} of ${esc(s.max_concurrent ?? 1)} slots in use (sessions.max_concurrent)`;
  if (!running.length) return `<p id="running" class="muted">no session running; ${slots}</p>`;
  const rows = running.map((r) => `<tr data-session="${esc(r.id)}"><td>${esc(r.agent)}</td><td>${esc(zoneStamp(r.started_at, timezone))}</td><td class="n">${esc(Math.round(r.elapsed_ms / 60_000))} min</td><td class="n">${esc(money(r.cost_usd))}${r.reserved_usd !== null ? ` of ${esc(money(r.reserved_usd))}` : ''}</td><td>${esc(r.id)}</td></tr>`);
  return `<table id="running"><caption>running now: ${slots}</caption><tr><th>agent</th><th>since</th><th>for</th><th>spent</th><th>session</th></tr>${rows.join('')}</table>`;
}

// The fleet's hosts (status --json's `fleet`): each host's last heartbeat, its sessions running
// (live claims), its spend and reservations of the fleet's day, its clock; the sessions running
// anywhere. Nothing without a fleet; a database that cannot be reached is said, and the rest of the
// page is this host's own state.
export function fleetSection(d: PageData, esc: Escape = html): string {
  const f = d.status.fleet ?? null;
  if (!f) return '';
  const head = `<h2>Fleet, ${esc(f.database)}</h2>`;
  if (f.error) return `<section id="fleet">${head}<p id="fleet-error" class="bad">the fleet's database cannot be seen: ${esc(f.error)}. The page shows this host's own state.</p></section>`;
  const day = f.day ? `<p id="fleet-day">the fleet's day ${esc(f.day.date)}: ${esc(counted(f.day.sessions, 'session'))}, <b>${esc(money(f.day.cost_usd))}</b> spent${f.day.reserved_usd ? `, ${esc(money(f.day.reserved_usd))} reserved` : ''}</p>` : '';
  const hosts = f.hosts.map((h) => `<tr class="host" data-host="${esc(h.host)}"><td>${esc(h.host)}${h.host === f.this_host ? ' <span class="muted">(this one)</span>' : ''}</td><td class="n" data-age="${esc(h.age_ms)}">${esc(shortDuration(h.age_ms))} ago</td><td class="n" data-running="${esc(h.running)}">${esc(h.running)}</td><td class="n">${esc(money(h.spent_today_usd))}</td><td class="n">${h.reserved_today_usd ? esc(money(h.reserved_today_usd)) : ''}</td><td class="n${Math.abs(h.skew_ms) > 2000 ? ' bad' : ''}">${esc(`${h.skew_ms >= 0 ? '+' : ''}${(h.skew_ms / 1000).toFixed(1)} s`)}</td><td>${esc(h.version)}</td></tr>`);
  const table = hosts.length
    ? `<table id="fleet-hosts"><tr><th>host</th><th>last heard</th><th>running</th><th>spent today</th><th>reserved</th><th>clock</th><th>version</th></tr>${hosts.join('')}</table>`
    : '<p id="fleet-hosts" class="muted">no host heard yet</p>';
  const running = f.running.map((c) => `<tr class="claim" data-agent="${esc(c.agent)}" data-host="${esc(c.host)}"><td>${esc(c.agent)}</td><td>${esc(c.host)}</td><td>${esc(zoneStamp(c.claimed_at, d.timezone))}</td><td>${esc(c.session ?? '-')}</td></tr>`);
  const live = running.length ? `<table id="fleet-running"><caption>running on the fleet</caption><tr><th>agent</th><th>host</th><th>since</th><th>session</th></tr>${running.join('')}</table>` : '';
  return `<section id="fleet">${head}${day}${table}${live}</section>`;
}

// The last 48 hours: each fire a mark coloured by what it did (a session by its outcome), fires too
// close to tell apart stacked with their count; each expected tick that left no fire (status's
// tick_gaps) a red mark under the line.
export function firesSection(d: PageData, esc: Escape = html): string {
  const end = Date.parse(d.at);
  const start = end - FIRE_HOURS * 3_600_000;
  const W = 960;
  const x = (iso: string) => Math.round(((Date.parse(iso) - start) / (end - start)) * (W - 10)) + 5;
  const shown = d.fires.filter((f) => Date.parse(f.at) >= start && Date.parse(f.at) <= end).sort((a, b) => Date.parse(a.at) - Date.parse(b.at));
  const what = (f: FireRow) => (f.status === 'open' ? 'running' : f.action ?? 'running');
  const mark = (f: FireRow, y: number, h: number) => `<rect class="fire" data-action="${esc(what(f))}"${what(f) === 'session' && f.outcome ? ` data-outcome="${esc(f.outcome)}"` : ''} x="${x(f.at) - 1}" y="${y}" width="3" height="${h}" fill="${fireMark(f).colour}"><title>${esc(`${zoneStamp(f.at, d.timezone)} ${f.kind}/${f.trigger} ${fireMark(f).label}${f.agent ? ` ${f.agent}` : ''}: ${f.reason ?? ''}${f.trace_id ? ` (trace ${f.trace_id})` : ''}`)}</title></rect>`;
  // A stack's marks share the 30 px, oldest at the bottom, its count above it.
  const marks = fireStacks(shown, (f) => x(f.at)).map((g) => {
    if (g.length === 1) return mark(g[0], 10, 30);
    const h = 30 / g.length;
    const parts = g.map((f, i) => mark(f, Number((40 - (i + 1) * h).toFixed(2)), Number(h.toFixed(2))));
    return `<g class="fire-stack" data-count="${g.length}"><title>${esc(`${g.length} fires, ${zoneStamp(g[0].at, d.timezone)} to ${zoneStamp(g.at(-1)!.at, d.timezone)}`)}</title>${parts.join('')}<text class="stack-count" x="${x(g[0].at)}" y="8" font-size="9" text-anchor="middle">${g.length}</text></g>`;
  });
  const missed = (d.status.tick_gaps?.missed ?? []).filter((m) => Date.parse(m) >= start);
  const gaps = missed.map((m) => `<rect class="gap" x="${x(m) - 2}" y="44" width="5" height="10" fill="#d32f2f"><title>${esc(`expected tick at ${zoneStamp(m, d.timezone)} left no fire`)}</title></rect>`);
  const hours = Array.from({ length: FIRE_HOURS / 6 + 1 }, (_, i) => start + i * 6 * 3_600_000).map((t, i, all) => `<text x="${x(new Date(t).toISOString())}" y="70" font-size="10" text-anchor="${i === 0 ? 'start' : i === all.length - 1 ? 'end' : 'middle'}">${esc(zoneStamp(new Date(t).toISOString(), d.timezone).slice(5, 16))}</text>`);
  const counts = new Map<string, { colour: string; n: number }>();
  for (const f of shown) {
    const m = fireMark(f);
    counts.set(m.label, { colour: m.colour, n: (counts.get(m.label)?.n ?? 0) + 1 });
  }
  const legend = [...counts].map(([a, { colour, n }]) => `<span class="count" data-action="${esc(a)}"><i class="sw" style="background:${colour}"></i>${esc(a)} <b>${esc(n)}</b></span>`);
  // Only an installed timer's ticks are expected (status's tick_gaps); without one nothing is claimed.
  const g = d.status.tick_gaps;
  const gapText = d.status.fires_error
    ? `<p class="bad">fires cannot be read: ${esc(d.status.fires_error)}</p>`
    : g
      ? `<p id="gaps">${esc(missed.length)} expected tick${missed.length === 1 ? '' : 's'} of the timer left no fire (checked since ${esc(zoneStamp(g.from, d.timezone))})</p>`
      : `<p id="gaps" class="muted">the timer's expected ticks are not checked: ${esc(d.status.next.calendar.source === 'timer' ? d.status.next.calendar.assumed ?? 'its times are unknown' : `no timer installed at ${d.status.next.calendar.file}`)}</p>`;
  return `<section id="fires"><h2>Fires, the last ${FIRE_HOURS} hours</h2><p class="legend" id="fire-count" data-total="${shown.length}">${esc(counted(shown.length, 'fire'))}: ${legend.join('')}</p>
<svg class="timeline" width="${W}" height="76" role="img" aria-label="fires"><line x1="5" y1="40" x2="${W - 5}" y2="40" stroke="#999"/>${marks.join('')}${gaps.join('')}${hours.join('')}</svg>${gapText}</section>`;
}

// Cost per day by agent, stacked, against the day's cap; and the month's total.
export function spendSection(d: PageData, esc: Escape = html): string {
  const agents = [...new Set(d.days.flatMap((x) => Object.keys(x.by_agent)))].sort();
  const colour = (a: string) => PALETTE[agents.indexOf(a) % PALETTE.length];
  const cap = d.days[0]?.max_usd ?? 0;
  const top = Math.max(cap, ...d.days.map((x) => x.cost_usd)) || 1;
  const H = 180;
  const bw = 24;
  const y = (usd: number) => Math.round((usd / top) * H);
  const bars = d.days.map((day, i) => {
    let base = H + 10;
    const parts = agents.filter((a) => day.by_agent[a]?.cost_usd).map((a) => {
      const h = Math.max(1, y(day.by_agent[a].cost_usd));
      base -= h;
      return `<rect class="part" data-agent="${esc(a)}" x="${40 + i * (bw + 4)}" y="${base}" width="${bw}" height="${h}" fill="${colour(a)}"><title>${esc(`${day.date} ${a} ${money(day.by_agent[a].cost_usd)}`)}</title></rect>`;
    });
    return `<g class="day" data-date="${esc(day.date)}" data-cost="${esc(day.cost_usd)}"><title>${esc(`${day.date}: ${money(day.cost_usd)}`)}</title>${parts.join('')}</g>`;
  });
  const W = 40 + d.days.length * (bw + 4) + 10;
  const capY = H + 10 - y(cap);
  const legend = agents.map((a) => `<span><i class="sw" style="background:${colour(a)}"></i>${esc(a)}</span>`);
  const total = d.month.reduce((n, x) => n + x.cost_usd, 0);
  const first = d.days[0]?.date ?? '';
  const last = d.days.at(-1)?.date ?? '';
  return `<section id="spend"><h2>Spend, ${esc(first)} to ${esc(last)}</h2><p>this month (${esc(d.month[0]?.date ?? '')} on): <b id="month-total">${esc(money(total))}</b>; cap <span id="cap">${esc(money(cap))}</span> a day</p>
<p class="legend">${legend.join('')}</p><svg class="spend" width="${W}" height="${H + 30}" role="img" aria-label="spend per day">${bars.join('')}<line class="cap" x1="36" x2="${W}" y1="${capY}" y2="${capY}" stroke="#c62828" stroke-dasharray="4 3"/><text x="0" y="${capY + 4}" font-size="10">${esc(money(cap))}</text></svg></section>`;
}

// Pure: where a session's work went, in words (sessions --json `git`; null: git sync off or an
// older row that did not keep it).
export function gitWords(g: GitOutcome | null | undefined): string {
  if (!g) return '-';
  const out = g.branch ? `branch ${g.branch} (${g.branch_pushed ? 'pushed' : 'local only'}): not on main until merged`
    : g.error ? `error: ${g.error}`
    : g.pushed ? 'pushed'
    : g.committed ? 'committed, not pushed'
    : g.uncommitted ? 'left uncommitted'
    : 'nothing to commit';
  return g.left_out.length ? `${out}; ${counted(g.left_out.length, 'file')} left out` : out;
}

export function sessionsSection(d: PageData, esc: Escape = html): string {
  const rows = d.sessions.map((r) => `<tr class="session" data-id="${esc(r.id)}"${r.trace_id ? ` data-trace="${esc(r.trace_id)}" title="${esc(`trace ${r.trace_id}`)}"` : ''}><td>${esc(zoneStamp(r.started_at, d.timezone))}</td><td>${esc(r.agent)}</td><td class="${r.outcome === 'ok' ? '' : 'bad'}">${esc(r.outcome)}</td><td class="n">${esc(`${r.cost_estimated ? '~' : ''}${money(r.cost_usd)}`)}</td><td class="n">${esc(r.turns)}</td><td class="n">${esc(shortDuration(r.duration_ms))}</td><td><a href="session/${encodeURIComponent(r.id)}">${esc(r.id)}</a></td><td class="git">${esc(gitWords(r.git))}</td><td class="result">${esc((r.result ?? r.error ?? '').slice(0, 120))}</td></tr>`);
  return `<section id="sessions"><h2>Sessions, the last ${esc(d.sessions.length)}</h2><table><tr><th>start</th><th>agent</th><th>outcome</th><th>cost</th><th>turns</th><th>duration</th><th>id</th><th>git</th><th>result</th></tr>${rows.join('')}</table></section>`;
}

export function memorySection(d: PageData, esc: Escape = html): string {
  const m = d.memory;
  if ('error' in m) return `<section id="memory"><h2>Memory</h2><p class="bad">the memory store cannot be read: ${esc(m.error)}</p></section>`;
  const rows: Array<[string, string, number]> = [
    ['memories', 'memories', m.memories], ['faded', 'faded', m.faded], ['superseded', 'superseded', m.superseded], ['observations', 'observations', m.observations],
    ['edges', 'edges', m.edges], ['threads_open', 'open threads', m.threads_open], ['predictions_open', 'open predictions', m.predictions_open],
    ['contradiction_candidates', 'contradiction candidates', m.contradiction_candidates], ['overdue', 'overdue for review', m.overdue],
  ];
  return `<section id="memory"><h2>Memory</h2><table>${rows.map(([k, label, n]) => `<tr><td>${esc(label)}</td><td class="n" data-key="${esc(k)}">${esc(n)}</td></tr>`).join('')}<tr><td>mean retrievability</td><td class="n">${esc(m.retrievability.mean.toFixed(2))}</td></tr></table>${dreamTable(m.last_dream, d.timezone, esc)}</section>`;
}

// The last dream's metrics (memory stats --json's last_dream); a count its failed phase did not give is "-".
function dreamTable(l: MemoryStats['last_dream'] | undefined, timezone: string, esc: Escape): string {
  if (!l) return '<p id="last-dream" class="muted">no dream yet</p>';
  const rows: Array<[keyof typeof l, string]> = [
    ['observations', 'observations since the one before'], ['clusters', 'clusters'], ['abstractions', 'abstractions made'], ['superseded', 'values superseded'],
    ['contradictions', 'contradiction candidates found'], ['linked', 'links added'], ['faded', 'memories faded'],
  ];
  const failed = l.failed_phases.length ? `<p class="bad">failed phases: ${esc(l.failed_phases.join(', '))}</p>` : '';
  return `<h3 id="last-dream" data-at="${esc(l.at)}">last dream, ${esc(zoneStamp(l.at, timezone))} (${esc(l.duration_ms < 60_000 ? `${(l.duration_ms / 1000).toFixed(1)}s` : shortDuration(l.duration_ms))})</h3><table class="dream">${rows.map(([k, label]) => `<tr><td>${esc(label)}</td><td class="n" data-dream="${esc(k)}">${esc(l[k] === null ? '-' : l[k])}</td></tr>`).join('')}</table>${failed}`;
}

export function renderPage(d: PageData, esc: Escape = html): string {
  const body = `<h1>nightshift at ${esc(zoneStamp(d.at, d.timezone))}</h1>${nowSection(d, esc)}${fleetSection(d, esc)}${firesSection(d, esc)}${spendSection(d, esc)}${sessionsSection(d, esc)}${memorySection(d, esc)}`;
  return layout('nightshift status', body, { refresh: 60, esc });
}

// One session: its record (show --json) and its transcript as `show --transcript` renders it.
export function renderSession(r: SessionRecord, transcript: string | null, esc: Escape = html): string {
  const fields = Object.entries(r).map(([k, v]) => `<tr><th>${esc(k)}</th><td><pre>${esc(v === null ? '-' : typeof v === 'string' ? v : JSON.stringify(v))}</pre></td></tr>`);
  const body = `<p><a href="../">back</a></p><h1>session ${esc(r.id)}</h1><table class="record">${fields.join('')}</table><h2>transcript</h2>${transcript === null ? '<p class="muted">no transcript</p>' : `<pre id="transcript">${esc(transcript)}</pre>`}`;
  return layout(`session ${r.id}`, body, { esc });
}
