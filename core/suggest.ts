// "Did you mean": the closest known word to a typo, for commands, options and agents.

// Edit distance (insert, delete, substitute, and swapping two neighbours, the commonest typo).
export function distance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0][j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.length][b.length];
}

// The closest of `known`, when it is close enough to be what was meant (else null).
export function closest(word: string, known: readonly string[]): string | null {
  const w = word.toLowerCase();
  let best: string | null = null;
  let bestD = Infinity;
  for (const k of known) {
    const dist = k.startsWith(w) && w.length >= 3 ? 0.5 : distance(w, k.toLowerCase());
    if (dist < bestD) [best, bestD] = [k, dist];
  }
  return best !== null && bestD <= Math.max(1, Math.floor(Math.min(w.length, best.length) / 3)) ? best : null;
}

// " Did you mean `x`?" or "".
export function didYouMean(word: string, known: readonly string[], render = (k: string) => `\`${k}\``): string {
  const k = closest(word, known);
  return k ? ` Did you mean ${render(k)}?` : '';
}
