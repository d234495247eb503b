// `nightshift run <agent>`: the operator's choice instead of dispatch, on the one path every
// start takes (./supervise.ts).
import { BudgetExhaustedError, LockedError } from '../../core/errors.js';
import type { Ledger } from '../../budget/ledger.js';
import type { Agent } from '../../config/agents.js';
import type { Config } from '../../config/schema.js';
import { currentHolds } from '../schedule/holds.js';
import type { SessionRecord } from '../../budget/session-record.js';
import { sessionConfig } from '../../config/rules.js';
import { exitCodeForError, FireRecord } from './fire-record.js';
import { exitCodeOf, startProbe, supervise } from './supervise.js';
import type { Choice, RunDeps, SuperviseResult } from './types.js';
import { openTelemetry } from '../../logs/telemetry.js';
import { version } from '../../core/version.js';
import { beginFireSpan, finishTraces, later, settleTraced, type Traced } from './fire-trace.js';
import { fleetLink } from './fleet-link.js';

export async function runAgent(config: Config, agent: Agent, options: { force: boolean }, deps: RunDeps): Promise<SuperviseResult & { session: SessionRecord }> {
  // A held agent still runs by hand (the operator decided), with a warning that says so.
  const choose = (ledger: Ledger, now: Date): Choice => {
    const hold = currentHolds(config, ledger, now)[agent.name];
    if (!hold) return { agent, reason: 'run by hand' };
    deps.logger.warn({ event: 'held_run_by_hand', agent: agent.name, until: hold.until, kind: hold.kind }, `${agent.name} is held until ${hold.until} (${hold.reason}): running it anyway, by hand`);
    return { agent, reason: `run by hand while held until ${hold.until}` };
  };
  // A named agent's session is all but certain: the sandbox's probe (a child process that writes
  // nothing) starts before the fire row and the run lock, and runs beside them.
  const probe = startProbe(sessionConfig(config, agent.name), deps);
  // The operator's choice, not a fire of the timer: its row says kind `run`, so the fires page
  // explains every start of the supervisor, a refused run included (never counted as a timer tick).
  // Traces (telemetry.otlp_endpoint): the SDK loads while the fire row is written; off, nothing loads.
  const opening = openTelemetry(config, { env: deps.env, redact: deps.redact, version: version(), logger: deps.logger }).catch((err: unknown) => {
    deps.logger.warn({ event: 'telemetry_unavailable', err: deps.redact(String((err as Error)?.message ?? err)) }, `telemetry is off for this run: ${deps.redact(String((err as Error)?.message ?? err))}`);
    return null;
  });
  const begun = Date.now();
  // The fleet (NIGHTSHIFT_DATABASE_URL): a run by hand claims no slot, and is charged across it.
  const fleet = deps.fleet !== undefined ? deps.fleet : fleetLink(config, deps.env, deps.redact, deps.logger);
  const fire = FireRecord.begin(config, { kind: 'run', trigger: 'hand', slot: null }, deps);
  fire.choose(agent.name, null);
  const telemetry = await opening;
  const span = beginFireSpan(telemetry, { kind: 'run', trigger: 'hand', fire: fire.id, atMs: begun });
  const tracing = { telemetry, span, traced: [] as Traced, logger: deps.logger, wait: deps.traceAtFire };
  let r: SuperviseResult;
  try {
    try {
      r = await supervise(config, choose, { ...options, refuse: true, probe }, { ...deps, fleet, trace: span, onCharged: (id) => fire.charge(id) });
    } catch (err) {
      const ending = { dispatch: [], error: { message: deps.redact((err as Error)?.message ?? String(err)), exitCode: exitCodeForError(err) } };
      await settleTraced(fire, ending, tracing);
      throw err;
    }
    const ending = {
      dispatch: [],
      result: { action: r.action, reason: r.reason, limit: r.limit, exit: exitCodeOf(r), session: r.session ? { id: r.session.id, outcome: r.session.outcome } : null, dream: null },
    };
    await settleTraced(fire, ending, tracing);
  } finally {
    // The result goes out first; the flush after it (./fire-trace.ts finishTraces).
    if (telemetry) later(deps, finishTraces(telemetry, config, tracing.traced, deps.logger));
    if (fleet !== deps.fleet) await fleet?.close();
  }
  if (r.action === 'skip') {
    if (r.limit === 'lock' || r.limit === 'stopped' || r.limit === 'busy') throw new LockedError(`Refused: ${r.reason}`);
    throw new BudgetExhaustedError(r.limit ?? 'unknown', `Refused: ${r.reason} (use --force to run anyway)`);
  }
  return r as SuperviseResult & { session: SessionRecord };
}

