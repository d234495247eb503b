// Made-up words, Zipf-ish, as JSONL import lines: the lexical index and the gate see prose-like
// postings. Shared by the 10k import test and its bench.
export function zipfLines(n: number): string {
  let seed = 3;
  const rand = () => ((seed = (Math.imul(seed, 48271) >>> 0) % 2147483647) / 2147483647);
  const syl = ['ka', 'lo', 'mi', 'ren', 'tas', 'vo', 'quel', 'dar', 'fin', 'gor', 'hul', 'jis', 'nem', 'pra', 'sul', 'tek'];
  const words = Array.from({ length: 8000 }, (_, i) => `${syl[i % 16]}${syl[(i >> 4) % 16]}${syl[(i >> 8) % 16]}`);
  const line = (i: number) => JSON.stringify({
    text: `${Array.from({ length: 12 }, () => words[Math.floor(words.length * rand() ** 2)]).join(' ')}.`,
    source: `conversation-${i >> 5}`,
    created_at: new Date(Date.UTC(2026, 0, 1) + (i >> 1) * 60_000).toISOString(),
  });
  return `${Array.from({ length: n }, (_, i) => line(i)).join('\n')}\n`;
}
