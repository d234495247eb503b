// Pure: one pino JSON line as a short line for a person at a terminal, `HH:MM:SS level msg`.
// journald, the daily file and --json keep the JSON; only a terminal gets these. What the line
// carries (a message, an error, an agent's name) may be a session's text: shown escaped, one line.
import { terminalText } from './terminal-text.js';

const NAMES: Record<number, string> = { 10: 'trace', 20: 'debug', 30: 'info', 40: 'warn', 50: 'error', 60: 'fatal' };
const COLOR: Record<number, string> = { 40: '\x1b[33m', 50: '\x1b[31m', 60: '\x1b[31m', 20: '\x1b[2m', 10: '\x1b[2m' };

const two = (n: number) => String(n).padStart(2, '0');

// `at` in the terminal's own zone (process.env.TZ), as a clock reads.
export function clockTime(at: Date): string {
  return `${two(at.getHours())}:${two(at.getMinutes())}:${two(at.getSeconds())}`;
}

// A line that is not pino JSON is passed through as it is.
export function humanLine(line: string, o: { color?: boolean } = {}): string {
  let m: Record<string, any>;
  try {
    m = JSON.parse(line);
  } catch {
    return terminalText(line.replace(/\n$/, ''));
  }
  if (!m || typeof m !== 'object' || typeof m.level !== 'number') return terminalText(line.replace(/\n$/, ''));
  const at = typeof m.time === 'string' || typeof m.time === 'number' ? new Date(m.time) : new Date();
  const level = (NAMES[m.level] ?? String(m.level)).padEnd(5);
  let msg = String(m.msg ?? m.event ?? '');
  const err = m.err?.message;
  if (err && !msg.includes(err)) msg += `: ${err}`;
  const who = m.agent && !msg.includes(m.agent) ? `${m.agent}: ` : '';
  const paint = o.color && COLOR[m.level] ? (t: string) => `${COLOR[m.level]}${t}\x1b[0m` : (t: string) => t;
  return `${clockTime(Number.isNaN(at.getTime()) ? new Date() : at)} ${paint(terminalText(level))} ${terminalText(`${who}${msg}`)}`;
}
