// Pure loop detection over the sequence of tool calls. A call's key is its tool name plus the
// canonical JSON of its input, so the same tool with other inputs never counts as a repeat.
import { canonicalJson } from './canonical-json.js';

export type LoopLimits = { maxRepeats: number; window: number; cycleRepeats: number };
export type LoopVerdict = { kind: 'repeat' | 'cycle'; key: string; count: number; period?: number };

const MAX_PERIOD = 4;

export const toolKey = (name: string, input: unknown) => `${name} ${canonicalJson(input)}`;

export class LoopDetector {
  private readonly history: string[] = [];
  constructor(private readonly limits: LoopLimits) {}

  // Records one call; returns a verdict when the sequence is now a loop.
  push(name: string, input: unknown): LoopVerdict | null {
    const key = toolKey(name, input);
    const keep = Math.max(this.limits.window, MAX_PERIOD * this.limits.cycleRepeats);
    this.history.push(key);
    if (this.history.length > keep) this.history.shift();

    // The same call max_repeats times within the last `window` calls.
    const start = Math.max(0, this.history.length - this.limits.window);
    let count = 0;
    for (let i = start; i < this.history.length; i++) if (this.history[i] === key) count++;
    if (count >= this.limits.maxRepeats) return { kind: 'repeat', key, count };

    // A short cycle (A B A B A B, A B C A B C ...) repeated cycleRepeats times at the tail.
    const h = this.history;
    for (let p = 2; p <= MAX_PERIOD; p++) {
      const span = p * this.limits.cycleRepeats;
      if (h.length < span) break;
      let periodic = true;
      for (let i = h.length - span + p; i < h.length && periodic; i++) periodic = h[i] === h[i - p];
      if (periodic && new Set(h.slice(h.length - p)).size > 1) return { kind: 'cycle', key, count: this.limits.cycleRepeats, period: p };
    }
    return null;
  }
}
