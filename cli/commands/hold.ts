// `nightshift hold release AGENT|--all`: lifts a hold (a rate limit or a backoff) the operator has
// dealt with. The ledger keeps every row; what the release changes is that rows ended before it no
// longer hold the agent, start its failure streak, or count as its failure "again" in doctor.
import { EXIT, UsageError } from '../../core/errors.js';
import { agentNames } from '../../config/agent-names.js';
import { didYouMean } from '../../core/suggest.js';
import type { FullContext } from '../context.js';
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
--json: {released: [{agent, kind, until, reason}], not_held: [agent], refused_key_cleared: bool}

Exit codes: 0 done (also when nothing was held), 64 usage (an unknown agent, with a "did you mean").`;

export const stage = 'full';

export async function run({ config, positionals, flags, io, logger }: FullContext): Promise<number> {
  const [verb, name, ...rest] = positionals;
  if (verb !== 'release') throw new UsageError(`Expected \`nightshift hold release AGENT\` or \`nightshift hold release --all\`, got \`hold ${verb ?? ''}\`.${verb ? didYouMean(verb, ['release']) : ''}`);
  if (rest.length || (name && flags.all) || (!name && !flags.all)) throw new UsageError('Expected one AGENT or --all after `nightshift hold release`');
  const known = agentNames(config.agents_dir);
  if (name && !known.includes(name)) throw new UsageError(`No agent \`${name}\` (known: ${known.join(', ') || 'none'}).${didYouMean(name, known)}`);
  const [{ currentHolds }, { recordReleases }, { clearRefusal }] = await Promise.all([import('../../daemon/schedule/holds.js'), import('../../budget/hold-releases.js'), import('../../budget/credential-refusal.js')]);
  const now = new Date();
  const holds = await withLedger(config, logger, (l) => currentHolds(config, l, now));
  const asked = name ? [name] : Object.keys(holds);
  const released = asked.filter((a) => holds[a]).map((a) => ({ agent: a, kind: holds[a].kind, until: holds[a].until, reason: holds[a].reason }));
  const notHeld = asked.filter((a) => !holds[a]);
  if (released.length) {
    recordReleases(config.state_dir, released.map((r) => r.agent), now);
    for (const r of released) logger.warn({ event: 'hold_released', agent: r.agent, kind: r.kind, until: r.until, reason: r.reason }, `${r.agent}: hold released by the operator (was ${r.reason}, until ${r.until})`);
  }
  // The refused key's mark holds every agent: any release lifts it.
  const mark = clearRefusal(config.state_dir);
  if (mark) logger.warn({ event: 'credential_refusal_cleared', refused_at: mark.at, session: mark.session }, `the mark of the key the API refused at ${mark.at} is cleared by the operator`);
  if (flags.json) io.out(JSON.stringify({ released, not_held: notHeld, refused_key_cleared: !!mark }));
  else {
    const lines = released.map((r) => `released ${r.agent} (was ${r.reason}, until ${r.until})`);
    for (const a of notHeld) lines.push(`${a} is not held: nothing to release`);
    if (!asked.length) lines.push('no agent is held');
    if (mark) lines.push(`cleared the refused key (the API refused it at ${mark.at}): the next start tries the key again`);
    io.out(lines.join('\n'));
  }
  return EXIT.OK;
}
