// Counts as people write them: `1 turn`, `2 turns`.
export function counted(n: number, word: string, plural = `${word}s`): string {
  return `${n} ${n === 1 ? word : plural}`;
}

// The word alone, for a count with words between: `3 earlier ${noun(3, 'one')}`.
export function noun(n: number, word: string, plural = `${word}s`): string {
  return n === 1 ? word : plural;
}
