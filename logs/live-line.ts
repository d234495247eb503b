// One line at the bottom of a terminal while a session runs (elapsed, turns, cost, the last tool),
// redrawn in place. Log lines written meanwhile clear it, print, and draw it again. Only ever made
// when stderr is a terminal: a pipe, a file or journald get nothing from here.
import { money } from '../core/money.js';
import { terminalText } from './terminal-text.js';

export type LiveState = { agent: string; startedAt: number; turns: number; usd: number; lastTool: string | null; retry?: { attempt: number; max: number; status: number | null } | null };

// Pure: the CLI retrying the API, as the line shows it (a refused key retries for minutes).
export function retryText(r: LiveState['retry']): string {
  return r ? `  API retry ${r.attempt}/${r.max}${r.status ? ` (${r.status})` : ''}` : '';
}

const CLEAR = '\r\x1b[2K';

function elapsed(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  const m = Math.floor(s / 60);
  return m ? `${m}m ${String(s % 60).padStart(2, '0')}s` : `${s}s`;
}

// Pure: the text of the line at `now`, cut to `columns` so it never wraps. The tool's name is
// the session's word: shown escaped, never acted on.
export function liveText(s: LiveState, now: number, columns = 80): string {
  const text = `▶ ${terminalText(s.agent)}  ${elapsed(now - s.startedAt)}  ${s.turns} turn${s.turns === 1 ? '' : 's'}  ${money(s.usd)}${retryText(s.retry)}${s.lastTool ? `  last: ${terminalText(s.lastTool)}` : ''}`;
  return [...text].length > columns - 1 ? `${[...text].slice(0, Math.max(10, columns - 2)).join('')}…` : text;
}

export class LiveLine {
  private state: LiveState | null = null;
  private shown = false;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly write: (text: string) => void,
    private readonly columns: () => number = () => 80,
    private readonly now: () => number = () => Date.now(),
  ) {}

  start(agent: string, startedAt: Date): void {
    this.state = { agent, startedAt: startedAt.getTime(), turns: 0, usd: 0, lastTool: null };
    this.draw();
    // The clock moves even while the model thinks; unref: it never keeps the process alive.
    this.timer = setInterval(() => this.draw(), 1000);
    this.timer.unref();
  }

  update(p: Partial<Omit<LiveState, 'agent' | 'startedAt'>>): void {
    if (!this.state) return;
    const before = liveText(this.state, this.now(), this.columns());
    Object.assign(this.state, p);
    if (liveText(this.state, this.now(), this.columns()) !== before) this.draw();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.clear();
    this.state = null;
  }

  // Writes something else to the terminal without tearing the line.
  around(fn: () => void): void {
    const was = this.shown;
    this.clear();
    fn();
    if (was) this.draw();
  }

  private clear(): void {
    if (!this.shown) return;
    this.shown = false;
    this.safe(CLEAR);
  }

  private draw(): void {
    if (!this.state) return;
    this.shown = true;
    this.safe(`${CLEAR}${liveText(this.state, this.now(), this.columns())}`);
  }

  // A terminal gone away must not end the session.
  private safe(text: string): void {
    try {
      this.write(text);
    } catch {
      // nothing to show it on
    }
  }
}
