// `nightshift tick`: what the timer fires. Its fire row is written first (./fire-record.ts), then
// dispatch picks the agent and the rest is the session path; the fire is settled with what the tick
// did and the exit code it ends with.
import { mark } from '../../core/profile.js';
import { readAgentsCached } from '../../config/agent-file.js';
import type { Agent, BrokenAgent } from '../../config/agents.js';
import type { Config } from '../../config/schema.js';
import type { FireTrigger, PassedOver } from '../../budget/fires.js';
import { explain } from '../schedule/explain.js';
import { dreamDue } from './dream-tick.js';
import { ping } from '../../report/ping.js';
import { exitCodeForError, FireRecord, triggerOf } from './fire-record.js';
import { dispatchPassedOver } from './fire-words.js';
import type { AgentHistory } from '../schedule/dispatch.js';
import { exitCodeOf, supervise } from './supervise.js';
import type { RunDeps, SuperviseResult } from './types.js';
import { openTelemetry, type Telemetry } from '../../logs/telemetry.js';
import { version } from '../../core/version.js';
import { beginFireSpan, finishTraces, later, settleTraced, type Traced } from './fire-trace.js';
import { claimForFire, fleetLink, type FireClaim, type FleetLink } from './fleet-link.js';
import type { FleetHoldView } from '../schedule/holds.js';
import { adoptReleases } from '../../budget/hold-releases.js';

// exit_code: what the tick exits with (the fire's record); fire: its row's id (null: unwritable).
// beside: the sessions this tick started beside its own (sessions.max_concurrent).
export type TickResult = Omit<SuperviseResult, 'limit'> & { exit_code: number; fire: number | null; passed_over: PassedOver[]; beside?: BesideSession[] };
export type BesideSession = { fire: number | null; agent: string | null; session: string | null; outcome: string | null; exit_code: number };

// The dead-man's ping (monitor.ping_url) around the tick: /start now, not awaited, and success or
// /fail at the end, bounded by monitor.ping_timeout; it never changes the tick's result.
export async function tick(config: Config, deps: RunDeps, trigger: FireTrigger = triggerOf(deps.env, false)): Promise<TickResult> {
  const url = config.monitor.ping_url;
  const pingDeps = { fetch: deps.fetch ?? fetch, logger: deps.logger, timeoutMs: config.monitor.ping_timeout };
  const started = ping(url, 'start', null, pingDeps);
  let r: TickResult;
  try {
    r = await tickOnce(config, deps, trigger);
  } catch (err) {
    await Promise.all([started, ping(url, 'fail', deps.redact(`tick failed: ${(err as Error).message}`), pingDeps)]);
    throw err;
  }
  const failed = r.exit_code !== 0;
  const why = r.session ? `${r.session.agent}: ${r.session.outcome}${r.session.error ? `: ${r.session.error}` : ''}` : r.reason;
  await Promise.all([started, ping(url, failed ? 'fail' : 'success', deps.redact(`${r.action}: ${why ?? ''}`), pingDeps)]);
  return r;
}

async function tickOnce(config: Config, deps: RunDeps, trigger: FireTrigger): Promise<TickResult> {
  mark('tick');
  const { agents, broken } = await readAgentsCached(config);
  mark('agents_read');
  deps.logger.info({ event: 'tick_start', trigger }, 'tick');
  // A broken agent file is skipped and said, each tick: the other agents still run (a due rule
  // passed over for it makes the tick exit 78, see ./fire-words.ts).
  for (const b of broken) deps.logger.error({ event: 'agent_invalid', agent: b.name, file: b.file, problems: b.problems }, `Invalid agent file ${b.file}: ${b.problems.join('; ')} (skipped; the other agents run)`);
  // Beside other sessions (sessions.max_concurrent above 1): each session charged lets the next
  // due agent start, one at a time, and each session that ends frees its slot for another, each in
  // a supervise() and a fire row of its own, until no slot or no due agent is left. An agent runs
  // once a tick at most. The tick ends when all have.
  const beside: Array<Promise<TickResult | null>> = [];
  const ran = new Set<string>();
  // Traces (telemetry.otlp_endpoint): the SDK loads beside the fire row, never before it; off, nothing loads.
  const telemetry = openTelemetry(config, { env: deps.env, redact: deps.redact, version: version(), logger: deps.logger }).catch((err: unknown) => {
    deps.logger.warn({ event: 'telemetry_unavailable', err: deps.redact(String((err as Error)?.message ?? err)) }, `telemetry is off for this tick: ${deps.redact(String((err as Error)?.message ?? err))}`);
    return null;
  });
  // The fleet (NIGHTSHIFT_DATABASE_URL): connected once a session is chosen, never before.
  const fleet = deps.fleet !== undefined ? deps.fleet : fleetLink(config, deps.env, deps.redact, deps.logger);
  const traced: Traced = [];
  try {
    // What an earlier start could not write to the fleet's database, written as soon as it answers.
    await fleet?.flush();
    return await fires(config, { ...deps, fleet }, trigger, agents, broken, beside, ran, telemetry, traced);
  } finally {
    if (fleet !== deps.fleet) await fleet?.close();
    // The result goes out first; the flush after it (./fire-trace.ts finishTraces).
    const t = await telemetry;
    if (t) later(deps, finishTraces(t, config, traced, deps.logger));
  }
}

async function fires(config: Config, deps: RunDeps, trigger: FireTrigger, agents: Agent[], broken: BrokenAgent[], beside: Array<Promise<TickResult | null>>, ran: Set<string>, telemetry: Promise<Telemetry | null>, traced: Traced): Promise<TickResult> {
  // Each one's failure is said and kept apart: it never ends the others, nor the tick's own.
  const more = config.sessions.max_concurrent > 1 ? () => {
    beside.push(oneFire(config, deps, trigger, agents, broken, { lead: false, ran, more, telemetry, traced }).catch((e: unknown) => {
      const why = deps.redact(String((e as Error)?.message ?? e));
      deps.logger.error({ event: 'tick_beside_failed', err: why }, `a session started beside another failed: ${why}`);
      return null;
    }));
  } : () => {};
  const lead = await oneFire(config, deps, trigger, agents, broken, { lead: true, ran, more, telemetry, traced }).then((v) => ({ v }), (e: unknown) => ({ e }));
  // Sessions started beside may start more as they go: wait until none is left.
  const others: TickResult[] = [];
  for (let i = 0; i < beside.length; i++) {
    const v = await beside[i];
    if (v) others.push(v);
  }
  if ('e' in lead) throw lead.e;
  const r = lead.v!;
  if (!others.length) return r;
  // The tick fails when any of its sessions did (OnFailure= fires once for the lot).
  const failed = [r, ...others].find((x) => x.exit_code !== 0);
  return { ...r, exit_code: failed?.exit_code ?? r.exit_code, beside: others.map((o) => ({ fire: o.fire, agent: o.session?.agent ?? null, session: o.session?.id ?? null, outcome: o.session?.outcome ?? null, exit_code: o.exit_code })) };
}

// One fire of the tick: dispatch's choice and its session. `lead`: the tick's own (its fire row
// written first, a skip or a dream recorded); else a session beside it, whose fire row is written
// only once a due agent is chosen (none, or no slot: nothing to record). `ran`: the agents this
// tick started; `more`: let another session start beside (at the charge, and at the end).
async function oneFire(config: Config, deps: RunDeps, trigger: FireTrigger, agents: Agent[], broken: BrokenAgent[], o: { lead: boolean; ran: Set<string>; more: () => void; telemetry: Promise<Telemetry | null>; traced: Traced }): Promise<TickResult | null> {
  const { lead } = o;
  const begun = Date.now();
  const byName = new Map(agents.map((a) => [a.name, a]));
  let fire: FireRecord | null = lead ? FireRecord.begin(config, { kind: 'tick', trigger, slot: deps.slot ?? null }, deps) : null;
  if (lead) mark('fire_begun');
  const telemetry = await o.telemetry;
  const span = beginFireSpan(telemetry, { kind: 'tick', trigger, fire: fire?.id ?? null, atMs: begun });
  const tracing = { telemetry, span, traced: o.traced, logger: deps.logger, wait: deps.traceAtFire };
  let dispatch: PassedOver[] = [];
  // The fleet's claim on the chosen agent's slot: let go when no session was charged, else ended
  // with the session's outcome (its heartbeat keeps it until then).
  let claimed: FireClaim | null = null;
  let charged = false;
  const letGo = async (outcome: string) => {
    const c = claimed;
    claimed = null;
    if (!c) return;
    await (charged ? c.end(outcome) : c.release()).catch((e: unknown) => deps.logger.warn({ event: 'fleet_claim_unreleased', err: deps.redact(String((e as Error)?.message ?? e)) }, `the fleet's claim on this slot could not be ${charged ? 'ended' : 'let go'} (its lease ends it): ${deps.redact(String((e as Error)?.message ?? e))}`));
  };
  try {
    const r = await supervise(
      config,
      async (ledger, now, day, busy) => {
        const occupied = Object.fromEntries(agents.flatMap((a) => {
          const why = busy(a.name) ?? (o.ran.has(a.name) ? `${a.name} ran in this tick already` : null);
          return why ? [[a.name, why]] : [];
        }));
        let d = explain(config, agents, ledger, now, broken, occupied);
        // Across a fleet, the holds other hosts set and the releases made on any host, read once
        // an agent is due or held; then what every host ran (a rule's min_interval and
        // max_runs_per_day hold fleet-wide), once one is due. A tick with none connects to nothing.
        let shared: FleetHoldView = {};
        let history: Record<string, AgentHistory> | undefined;
        if (deps.fleet && (d.agent || d.rules.some((v) => v.passed === 'held'))) {
          shared = await fleetHolds(config, deps.fleet, deps, now, !d.agent);
          d = explain(config, agents, ledger, now, broken, occupied, shared);
          if (d.agent) {
            const { fleetHistory } = await import('../../budget/fleet-reservations.js');
            history = await fleetHistory(await deps.fleet.get(), day);
            d = explain(config, agents, ledger, now, broken, occupied, shared, history);
          }
        }
        // Across a fleet, the agent's slot is claimed first: a slot another host (or an earlier
        // tick) claimed is passed over, named, and the next due agent is tried.
        while (d.agent && deps.fleet) {
          // An agent pinned to another host (where its memory is) is that host's to run.
          const pinned = byName.get(d.agent)?.host;
          if (pinned && pinned !== deps.fleet.host) {
            occupied[d.agent] = `runs on host ${pinned} (host: in its file), where its memory is`;
            d = explain(config, agents, ledger, now, broken, occupied, shared, history);
            continue;
          }
          const claim = await claimForFire(deps.fleet, d.agent, deps.slot ?? now, config.budget.timezone);
          if ('claim' in claim) {
            claimed = claim;
            break;
          }
          occupied[d.agent] = claim.lost;
          d = explain(config, agents, ledger, now, broken, occupied, shared, history);
        }
        dispatch = dispatchPassedOver(d.rules);
        if (lead) {
          for (const p of dispatch.filter((x) => x.cause === 'invalid')) {
            deps.logger.error({ event: 'due_rule_invalid', agent: p.agent, rule: p.rule, why: p.why }, `rule ${p.rule} (${p.agent}) is due and passed over: ${p.why}`);
          }
        }
        if (d.agent) {
          o.ran.add(d.agent);
          fire ??= FireRecord.begin(config, { kind: 'tick', trigger, slot: deps.slot ?? null }, deps);
          span.set({ 'nightshift.fire.id': fire.id ?? undefined });
          fire.choose(d.agent, d.rule);
          return { agent: byName.get(d.agent)!, reason: d.reason, fleet: shared };
        }
        if (!lead) return { skip: d.reason };
        // Nothing due: a session always wins, so only now may the memory's pressure ask for a dream.
        const dream = await dreamDue(config, deps, now);
        return dream ? { dream } : { skip: d.reason };
      },
      // A session beside another that finds nothing to start says so at debug only.
      { force: false, refuse: !lead },
      { ...deps, trace: span, onCharged: (id) => {
        charged = true;
        void claimed?.charged(id);
        fire?.charge(id);
        o.more();
      } },
    );
    await letGo(r.session?.outcome ?? r.action);
    // Its slot is free again: another due agent may take it.
    if (r.action === 'session') o.more();
    // Every slot held by sessions other supervisors run: each due agent's wait gets a row of its own.
    if (lead && r.action === 'skip' && r.limit === 'lock' && config.sessions.max_concurrent > 1) {
      await (await import('./at-capacity.js')).recordWaiting(config, agents, broken, deps, { trigger, slot: deps.slot ?? null, why: r.reason }, { telemetry, traced: o.traced }).catch((e: unknown) => {
        deps.logger.warn({ event: 'at_capacity_unrecorded', err: deps.redact(String((e as Error)?.message ?? e)) }, `the agents waiting for a slot could not be recorded: ${deps.redact(String((e as Error)?.message ?? e))}`);
      });
    }
    if (!fire) return null;
    const ending = {
      dispatch,
      result: {
        action: r.action, reason: r.reason, limit: r.limit, exit: exitCodeOf(r),
        session: r.session ? { id: r.session.id, outcome: r.session.outcome } : null,
        dream: r.dream ? { id: r.dream.id, ok: r.dream.ok } : null,
      },
    };
    const settled = await settleTraced(fire, ending, tracing);
    if (lead) mark('fire_settled');
    const { limit: _limit, ...rest } = r;
    return { ...rest, exit_code: settled.exit, fire: fire.id, passed_over: settled.passed_over };
  } catch (err) {
    await letGo('error');
    const ending = { dispatch, error: { message: deps.redact((err as Error)?.message ?? String(err)), exitCode: exitCodeForError(err) } };
    if (fire) await settleTraced(fire, ending, tracing);
    throw err;
  }
}

// The holds other hosts of the fleet set, and the releases made on any host recorded as this
// host's own (so its ledger's rows before them hold nothing here either). Unreachable: a due agent
// fails the tick closed (exit 69); with only held agents, they stay held, said.
async function fleetHolds(config: Config, fleet: FleetLink, deps: RunDeps, now: Date, onlyHeld: boolean): Promise<FleetHoldView> {
  try {
    const f = await fleet.holds(now);
    for (const [agent, at] of Object.entries(adoptReleases(config.state_dir, f.releases))) {
      deps.logger.warn({ event: 'hold_released', agent, released_at: at, by: 'fleet' }, `${agent}: hold released on another host of the fleet at ${at}`);
    }
    return { holds: f.holds, rows: f.rows };
  } catch (err) {
    if (!onlyHeld) throw err;
    const why = deps.redact(String((err as Error)?.message ?? err));
    deps.logger.warn({ event: 'fleet_holds_unread', err: why }, `the fleet's holds and releases could not be read (the held agents stay held): ${why}`);
    return {};
  }
}
