// `nightshift hold release AGENT|--all`: lifts a hold (a rate limit or a backoff) the operator has
// dealt with. The ledger keeps every row; what the release changes is that rows ended before it no
// longer hold the agent, start its failure streak, or count as its failure "again" in doctor.
// Across a fleet (docs/fleet.md), the holds other hosts set are released too, and the release is
// written through for every host.
import { EXIT, FleetUnavailableError, UsageError } from '../../core/errors.js';
import { agentNames } from '../../config/agent-names.js';
import { didYouMean } from '../../core/suggest.js';
import type { FullContext } from '../context.js';
import type { FleetHoldView } from '../../daemon/schedule/holds.js';
import { FLEET_URL_VAR, fleetTarget } from '../../config/fleet-url.js';
import { withLedger } from '../with-ledger.js';

export const help = `Usage: nightshift hold release AGENT [--json] [--config PATH]
       nightshift hold release --all [--json] [--config PATH]

Lifts the hold on AGENT (or on every held agent with --all): a rate limit held until the API's
reset time, or a backoff after backoff.after_failures failures in a row. Do it once the cause is
fixed (a key in nightshift.env, say): the next tick may run the agent again, and its failures
before the release no longer count toward a backoff or doctor's "recurring" check. Logged
(event hold_released); the ledger's rows are kept as they are. An agent that is not held is
said so, and nothing is recorded. It also clears the mark of a key the API refused today (401),
which refuses every start with that key until the key changes or the day ends.

Across a fleet (NIGHTSHIFT_DATABASE_URL in the env file), a hold another host set is released
too, and the release is written to the fleet's database: every host's next tick may run the agent.
With the database unreachable, the release is recorded on this host, kept in the fleet's spool
for this host's next start that reaches the database, and the command exits 69: until then the
other hosts keep their holds.
--json: {released: [{agent, kind, until, reason, host?}], not_held: [agent], refused_key_cleared:
bool, fleet: "written" | "spooled" | null} (host: the host that set it, another of the fleet;
fleet: null without one, or nothing released)

Exit codes: 0 done (also when nothing was held), 64 usage (an unknown agent, with a "did you mean"),
69 the fleet's database unreachable (released on this host only, the fleet's release spooled),
78 the fleet's database at a schema this nightshift does not run on (nothing released).`;

export const stage = 'full';

export async function run({ config, positionals, flags, io, logger, env }: FullContext): Promise<number> {
  const [verb, name, ...rest] = positionals;
  if (verb !== 'release') throw new UsageError(`Expected \`nightshift hold release AGENT\` or \`nightshift hold release --all\`, got \`hold ${verb ?? ''}\`.${verb ? didYouMean(verb, ['release']) : ''}`);
  if (rest.length || (name && flags.all) || (!name && !flags.all)) throw new UsageError('Expected one AGENT or --all after `nightshift hold release`');
  const known = agentNames(config.agents_dir);
  if (name && !known.includes(name)) throw new UsageError(`No agent \`${name}\` (known: ${known.join(', ') || 'none'}).${didYouMean(name, known)}`);
  const [{ currentHolds }, { adoptReleases, recordReleases }, { clearRefusal }, { fleetLink, spoolDir }] = await Promise.all([import('../../daemon/schedule/holds.js'), import('../../budget/hold-releases.js'), import('../../budget/credential-refusal.js'), import('../../daemon/tick/fleet-link.js')]);
  const now = new Date();
  // Across a fleet, its holds and releases first (a database this host cannot run on refuses it
  // all, 78); unreachable, what this host holds is released here and the fleet's release spooled.
  const link = fleetLink(config, env, io.redact, logger);
  try {
    let unreachable: FleetUnavailableError | null = null;
    let shared: FleetHoldView = {};
    if (link) {
      try {
        const f = await link.holds(now);
        adoptReleases(config.state_dir, f.releases);
        shared = { holds: f.holds, rows: f.rows };
      } catch (err) {
        if (!(err instanceof FleetUnavailableError)) throw err;
        unreachable = err;
      }
    }
    const holds = await withLedger(config, logger, (l) => currentHolds(config, l, now, shared));
    const asked = name ? [name] : Object.keys(holds);
    const released = asked.filter((a) => holds[a]).map((a) => ({ agent: a, kind: holds[a].kind, until: holds[a].until, reason: holds[a].reason, ...(holds[a].host ? { host: holds[a].host } : {}) }));
    const notHeld = asked.filter((a) => !holds[a]);
    if (released.length) {
      recordReleases(config.state_dir, released.map((r) => r.agent), now);
      for (const r of released) logger.warn({ event: 'hold_released', agent: r.agent, kind: r.kind, until: r.until, reason: r.reason, host: r.host }, `${r.agent}: hold released by the operator (was ${r.reason}, until ${r.until})`);
    }
    // Unseen, another host may hold the named agent: its release goes to the fleet all the same.
    const forFleet = unreachable && name ? [name] : released.map((r) => r.agent);
    const fleet = link && forFleet.length ? ((await link.write({ kind: 'release', agents: forFleet, at: now.toISOString() })) ? 'written' : 'spooled') : null;
    // The refused key's mark holds every agent: any release lifts it.
    const mark = clearRefusal(config.state_dir);
    if (mark) logger.warn({ event: 'credential_refusal_cleared', refused_at: mark.at, session: mark.session }, `the mark of the key the API refused at ${mark.at} is cleared by the operator`);
    if (flags.json) io.out(JSON.stringify({ released, not_held: notHeld, refused_key_cleared: !!mark, fleet }));
    else {
      const lines = released.map((r) => `released ${r.agent} (was ${r.reason}${r.host ? ` on host ${r.host}` : ''}, until ${r.until})`);
      for (const a of notHeld) lines.push(`${a} is not held: nothing to release`);
      if (!asked.length) lines.push('no agent is held');
      if (mark) lines.push(`cleared the refused key (the API refused it at ${mark.at}): the next start tries the key again`);
      if (fleet === 'written') lines.push('the release is written to the fleet: every host may run it again');
      io.out(lines.join('\n'));
    }
    if (fleet === 'spooled') {
      const why = io.redact(String((unreachable?.cause as Error | undefined)?.message ?? unreachable?.message ?? 'it did not take the write'));
      throw new FleetUnavailableError(`the release of ${forFleet.join(', ')} is recorded on this host only: the fleet's database at ${fleetTarget(env)?.where} (${FLEET_URL_VAR} in the env file) cannot be reached: ${why}. The release waits in ${spoolDir(config.state_dir)} and is written by this host's next start that reaches the database; until then the other hosts keep their holds. Fix: start PostgreSQL there, or correct ${FLEET_URL_VAR}`);
    }
    return EXIT.OK;
  } finally {
    await link?.close();
  }
}
