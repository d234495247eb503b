// The holds of this install: budget/holds.ts's pure rules over the ledger's last settled rows.
import { backoffChange, holdsOf, withFleetHolds, type Hold, type HoldSettings } from '../../budget/holds.js';
import type { Ledger } from '../../budget/ledger.js';
import type { Config } from '../../config/schema.js';
import { afterReleases, readReleases } from '../../budget/hold-releases.js';

export function holdSettings(config: Config): HoldSettings {
  const b = config.backoff;
  return { afterFailures: b.after_failures, baseMs: b.base, maxMs: b.max, rateLimitMs: b.rate_limit };
}

// Rows enough for any streak that still changes the wait (it is capped after ~30 doublings).
const HOLD_ROWS = 40;

// Each agent's last settled rows, those before the operator's release of its hold left out.
function heldRows(config: Config, ledger: Ledger) {
  return afterReleases(ledger.lastSettled(config.backoff.after_failures + HOLD_ROWS), readReleases(config.state_dir));
}

// Every agent that waits now, read from the ledger; across a fleet, with the holds other hosts set
// (budget/fleet-holds.ts, read by the tick once it has connected).
export function currentHolds(config: Config, ledger: Ledger, at: Date, fleet: Record<string, Hold> = {}): Record<string, Hold> {
  return withFleetHolds(holdsOf(heldRows(config, ledger), at, holdSettings(config)), fleet);
}

// What the session just settled for `agent` changed about its backoff (once per change).
export function settledChange(config: Config, ledger: Ledger, agent: string) {
  return backoffChange(heldRows(config, ledger)[agent] ?? [], holdSettings(config));
}
