// Pure: the fires as one line per hour (`nightshift fires --timeline`): a glyph per fire, in time
// order, coloured by what it did at a colour terminal, and `_` where the installed timer's expected
// tick left no fire. Plain ASCII without colour (NO_COLOR, a pipe, a file).
import type { FireRow } from '../budget/fires.js';
import { localStamp } from './table.js';

const HOUR = 3_600_000;
export const MISSED = '_';
export const GLYPHS: Record<string, { glyph: string; colour: string }> = {
  session: { glyph: 'S', colour: '\x1b[32m' },
  skip: { glyph: '.', colour: '\x1b[2m' },
  dream: { glyph: 'D', colour: '\x1b[35m' },
  locked: { glyph: 'L', colour: '\x1b[33m' },
  refused: { glyph: 'R', colour: '\x1b[33m' },
  'failed to start': { glyph: 'F', colour: '\x1b[31m' },
  crashed: { glyph: 'X', colour: '\x1b[31m' },
  running: { glyph: '>', colour: '\x1b[36m' },
};
const MISSED_COLOUR = '\x1b[1;31m';
const RESET = '\x1b[0m';

export type TimelineOptions = { from: Date; to: Date; timezone: string; missed: Date[] | null; colour: boolean };

const actionOf = (f: FireRow) => (f.status === 'open' ? 'running' : f.action ?? 'running');
// A session that did not end ok is painted red, not the session's green (its outcome is in the note).
const colourOf = (f: FireRow) => (actionOf(f) === 'session' && f.outcome && f.outcome !== 'ok' ? '\x1b[31m' : GLYPHS[actionOf(f)]?.colour ?? '');

// Sessions side by side are told apart by their agents: a session with its outcome, one running
// now, and one that waited for a slot (a locked fire with an agent: the tick was at capacity).
function noteOf(f: FireRow): string | null {
  if (!f.agent) return null;
  const a = actionOf(f);
  if (a === 'session') return `${f.agent}${f.outcome ? ` ${f.outcome}` : ''}`;
  if (a === 'running') return `${f.agent} running`;
  if (a === 'locked') return `${f.agent} waited`;
  return null;
}

export function firesTimeline(rows: FireRow[], o: TimelineOptions): string {
  const paint = (text: string, colour: string) => (o.colour ? `${colour}${text}${RESET}` : text);
  const marks = [
    ...rows.map((f) => ({ t: Date.parse(f.at), glyph: paint(GLYPHS[actionOf(f)]?.glyph ?? '?', colourOf(f)), note: noteOf(f) })),
    ...(o.missed ?? []).map((m) => ({ t: m.getTime(), glyph: paint(MISSED, MISSED_COLOUR), note: null })),
  ].sort((a, b) => a.t - b.t);
  const lines: string[] = [];
  const seen = new Set<string>();
  for (let h = Math.floor(o.from.getTime() / HOUR) * HOUR; h <= o.to.getTime(); h += HOUR) {
    const inHour = marks.filter((m) => m.t >= h && m.t < h + HOUR);
    const notes = inHour.flatMap((m) => (m.note ? [m.note] : []));
    const line = `${localStamp(new Date(h).toISOString(), o.timezone)}  ${inHour.map((m) => m.glyph).join('')}${notes.length ? `  ${notes.join(', ')}` : ''}`;
    lines.push(line.trimEnd());
    for (const f of rows) if (Date.parse(f.at) >= h && Date.parse(f.at) < h + HOUR) seen.add(actionOf(f));
  }
  const legend = Object.entries(GLYPHS).filter(([a]) => seen.has(a)).map(([a, g]) => `${paint(g.glyph, g.colour)} ${a}`);
  if (o.missed?.length) legend.push(`${paint(MISSED, MISSED_COLOUR)} an expected tick that left no fire`);
  const tail = o.missed === null ? "the timer's expected ticks are not checked (no timer installed, or its times unknown)" : null;
  return [...lines, '', `(${o.timezone}) ${legend.join('  ') || 'no fires'}`, ...(tail ? [tail] : [])].join('\n');
}
