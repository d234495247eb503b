// The holds of this install: budget/holds.ts's pure rules over the ledger's last settled rows.
import { backoffChange, holdsOf, withFleetHolds, withFleetRows, type Hold, type HoldRow, type HoldSettings } from '../../budget/holds.js';
import type { Ledger } from '../../budget/ledger.js';
import type { Config } from '../../config/schema.js';
import { afterReleases, readReleases } from '../../budget/hold-releases.js';

export function holdSettings(config: Config): HoldSettings {
  const b = config.backoff;
  return { afterFailures: b.after_failures, baseMs: b.base, maxMs: b.max, rateLimitMs: b.rate_limit };
}

// Rows enough for any streak that still changes the wait (it is capped after ~30 doublings).
const HOLD_ROWS = 40;

// Each agent's last settled rows (with the sessions other hosts ran of it, across a fleet), those
// before the operator's release of its hold left out.
function heldRows(config: Config, ledger: Ledger, others?: Record<string, HoldRow[]>) {
  const own = ledger.lastSettled(config.backoff.after_failures + HOLD_ROWS);
  return afterReleases(others ? withFleetRows(own, others) : own, readReleases(config.state_dir));
}

// What the fleet says of the holds, once a tick (or `hold release`) has connected: the holds other
// hosts set, and the sessions they ran of each agent (budget/fleet-holds.ts).
export type FleetHoldView = { holds?: Record<string, Hold>; rows?: Record<string, HoldRow[]> };

// Every agent that waits now, read from the ledger; across a fleet, its failure streak counted
// over every host's sessions, with the holds other hosts set.
export function currentHolds(config: Config, ledger: Ledger, at: Date, fleet: FleetHoldView = {}): Record<string, Hold> {
  return withFleetHolds(holdsOf(heldRows(config, ledger, fleet.rows), at, holdSettings(config)), fleet.holds ?? {});
}

// What the session just settled for `agent` changed about its backoff (once per change); across a
// fleet, over every host's sessions of it as the tick read them, so the host whose session makes
// (or ends) the fleet's streak is the one that tells it.
export function settledChange(config: Config, ledger: Ledger, agent: string, fleet: FleetHoldView = {}) {
  return backoffChange(heldRows(config, ledger, fleet.rows)[agent] ?? [], holdSettings(config));
}
