// terminalText's fast path (logs/terminal-text.ts): a plain text is returned as it is, so a long
// clean log costs a scan, not a rebuild. Ratio: 20 passes over 800 KB of plain text against the
// same over text that needs escaping (one C1 byte a line), in one run. Goal: well under 1.
import { terminalText } from '../logs/terminal-text.js';

export function terminalTextBench(rounds = 5) {
  const plain = 'a plain line of log text, café 日本語\n'.repeat(20_000);
  const dirty = 'a plain line of log text, café \x9b日本語\n'.repeat(20_000);
  const time = (s: string) => {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < 20; i++) terminalText(s, { block: true });
    return Number(process.hrtime.bigint() - t0) / 1e6;
  };
  const fast: number[] = [];
  const slow: number[] = [];
  for (let r = 0; r < rounds; r++) {
    fast.push(time(plain));
    slow.push(time(dirty));
  }
  const med = (a: number[]) => a.sort((x, y) => x - y)[Math.floor(a.length / 2)];
  const r = { plain_ms: +med(fast).toFixed(1), escaped_ms: +med(slow).toFixed(1), ratio: +(med(fast) / med(slow)).toFixed(2) };
  console.log(`terminal-text: 20 passes over ${plain.length} plain chars ${r.plain_ms} ms, over text to escape ${r.escaped_ms} ms: ratio ${r.ratio}`);
  return r;
}
