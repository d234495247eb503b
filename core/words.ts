// Counts as people write them: `1 turn`, `2 turns`.
export function counted(n: number, word: string, plural = `${word}s`): string {
  return `${n} ${n === 1 ? word : plural}`;
}
