// Money as money: `$0.25`, `$12.40`, never `0.013500000000000002`.

// Dollars for people, in cents on every screen (`$0.25 of $20.00`, never four places beside two);
// a cost above zero but below half a cent is `<$0.01`, not a free-looking `$0.00`. --json keeps
// the exact amount.
export function money(usd: number): string {
  if (!Number.isFinite(usd)) return '$?';
  if (usd > 0 && usd < 0.005) return '<$0.01';
  return `$${usd.toFixed(2)}`;
}

// Dollars where a cent would hide the arithmetic (a reservation against one call's worst case):
// four places for every amount of the sentence alike.
export function exactMoney(usd: number): string {
  return Number.isFinite(usd) ? `$${usd.toFixed(4)}` : '$?';
}

// Dollars for data (`--json`): sums of floats rounded back to a millionth of a dollar.
export function roundUsd(usd: number): number {
  return Math.round(usd * 1e6) / 1e6;
}
