// Money as money: `$0.0135`, `$12.40`, never `0.013500000000000002`.

// Dollars for people: cents above a dollar, four places below (a session often costs under a cent).
export function money(usd: number): string {
  if (!Number.isFinite(usd)) return '$?';
  return `$${usd.toFixed(Math.abs(usd) >= 1 ? 2 : 4)}`;
}

// Dollars for data (`--json`): sums of floats rounded back to a millionth of a dollar.
export function roundUsd(usd: number): number {
  return Math.round(usd * 1e6) / 1e6;
}
