// Sizes in config are written `512M`, `50MB`, `2G`, `64k` (or a bare number of bytes).
const UNITS: Record<string, number> = { '': 1, b: 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3, t: 1024 ** 4 };

// Returns bytes, or null when the text is not a size.
export function parseSize(input: unknown): number | null {
  if (typeof input === 'number') return Number.isSafeInteger(input) && input >= 0 ? input : null;
  if (typeof input !== 'string') return null;
  const m = /^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(?:i?b)?\s*$/i.exec(input);
  if (!m) return null;
  return Math.round(Number(m[1]) * UNITS[m[2].toLowerCase()]);
}

// The inverse, for messages.
export function formatSize(bytes: number): string {
  for (const [unit, size] of [['G', 1024 ** 3], ['M', 1024 ** 2], ['k', 1024]] as const) {
    if (bytes >= size) return `${+(bytes / size).toFixed(1)}${unit}`;
  }
  return `${bytes} bytes`;
}
