// A fire's trace (docs/observability.md): its root span, begun beside the fire row, and ended with
// the fire's own words before the row is settled with the trace id; what the collector did not
// take is counted in the row once the result is out. Telemetry off: NO_SPAN, nothing loaded,
// nothing written.
import { NO_SPAN, type TraceAttrs, type TraceSpan } from '../../core/trace.js';
import { Fires, firesFile, type FireKind, type FireTrigger } from '../../budget/fires.js';
import type { Config } from '../../config/schema.js';
import type { Telemetry } from '../../logs/telemetry.js';
import type { FireRecord } from './fire-record.js';
import type { FireWords } from './fire-words.js';

type Log = { warn(o: object, m?: string): void };

// The root span of a fire: a trace of its own (`invoke_workflow`, the GenAI conventions' word).
export function beginFireSpan(telemetry: Telemetry | null, start: { kind: FireKind; trigger: FireTrigger; fire: number | null; atMs: number }): TraceSpan {
  if (!telemetry) return NO_SPAN;
  return telemetry.fire('invoke_workflow nightshift', {
    'gen_ai.operation.name': 'invoke_workflow',
    'gen_ai.workflow.name': 'nightshift',
    'gen_ai.provider.name': 'anthropic',
    'nightshift.fire.id': start.fire ?? undefined,
    'nightshift.fire.kind': start.kind,
    'nightshift.fire.trigger': start.trigger,
  }, start.atMs);
}

// Pure: what the fire did, as its span's attributes.
export function fireAttrs(w: FireWords): TraceAttrs {
  return {
    'nightshift.fire.action': w.action,
    'gen_ai.agent.name': w.agent ?? undefined,
    'nightshift.fire.rule': w.rule ?? undefined,
    'nightshift.session.id': w.session ?? undefined,
    'nightshift.session.outcome': w.outcome ?? undefined,
    'nightshift.fire.reason': w.reason,
    'nightshift.fire.exit_code': w.exit_code ?? undefined,
    'nightshift.fire.passed_over': w.passed_over.length ? w.passed_over.map((p) => `${p.agent}${p.rule === null ? '' : ` (rule ${p.rule})`}: ${p.cause}: ${p.why}`) : undefined,
  };
}

export type FireTrace = { trace_id: string; spans_dropped: number };
// The fires of this process settled with a count not final yet (finishTraces makes it final).
export type Traced = Array<{ fire: number; trace: FireTrace }>;

// Ends the fire's span with its words; null with telemetry off. The count is of the spans the
// collector has not taken yet: the fire's row and result never wait on the collector (one that
// hangs would hold them for flush_timeout), finishTraces waits once the result is out. Not a
// tighter bound instead: a healthy remote collector may take a few hundred ms, and the fire's span
// is every trace's root. `wait` (test-only, the negative control): the fire waits here, as it did.
export async function endFireSpan(telemetry: Telemetry | null, span: TraceSpan, words: FireWords, logger: Log, wait = false): Promise<FireTrace | null> {
  if (!telemetry || !span.traceId) return null;
  span.set(fireAttrs(words));
  if (words.exit_code !== null && words.exit_code !== 0) span.fail(words.reason);
  span.end();
  if (!wait) return { trace_id: span.traceId, spans_dropped: telemetry.undelivered(span.traceId) };
  const dropped = await telemetry.flush(span.traceId);
  sayDropped(logger, span.traceId, dropped);
  return { trace_id: span.traceId, spans_dropped: dropped };
}

// The fire's span ended and its row settled with the trace (the one path of a tick's, a run's
// and an at-capacity fire); a count still open is noted in `traced` for finishTraces.
export async function settleTraced(fire: FireRecord, ending: Parameters<FireRecord['settle']>[0], o: { telemetry: Telemetry | null; span: TraceSpan; traced: Traced; logger: Log; wait?: boolean }): Promise<ReturnType<FireRecord['settle']>> {
  const trace = await endFireSpan(o.telemetry, o.span, fire.words(ending), o.logger, o.wait).catch(() => null);
  const settled = fire.settle(ending, trace);
  if (trace && fire.id !== null && !o.wait) o.traced.push({ fire: fire.id, trace });
  return settled;
}

// After the result is out (cli/main.ts awaits it before the exit; the daemon lets it run on): the
// traces flushed, flush_timeout at most, then each fire's row given its final count of the spans
// the collector did not take, a drop said once. Never throws.
export async function finishTraces(telemetry: Telemetry, config: Pick<Config, 'state_dir'>, traced: Traced, logger: Log): Promise<void> {
  await telemetry.close();
  const changed: Array<{ fire: number; dropped: number }> = [];
  for (const t of traced) {
    const dropped = telemetry.undelivered(t.trace.trace_id);
    sayDropped(logger, t.trace.trace_id, dropped);
    if (dropped !== t.trace.spans_dropped) changed.push({ fire: t.fire, dropped });
  }
  if (!changed.length) return;
  try {
    const fires = Fires.open(firesFile(config));
    try {
      for (const c of changed) fires.dropped(c.fire, c.dropped);
    } finally {
      fires.close();
    }
  } catch (err) {
    logger.warn({ event: 'fire_unwritable', err: String((err as Error)?.message ?? err) }, `the spans a collector did not take cannot be counted in the fires' rows: ${String((err as Error)?.message ?? err)}`);
  }
}

// Work left to finish after the result is out: the process's exit waits for it (RunDeps.afterward).
export function later(deps: { afterward?: (work: Promise<void>) => void }, work: Promise<void>): void {
  if (deps.afterward) deps.afterward(work);
  else void work;
}

function sayDropped(logger: Log, traceId: string, dropped: number): void {
  if (dropped) logger.warn({ event: 'telemetry_dropped', trace_id: traceId, spans: dropped }, `${dropped} span${dropped === 1 ? '' : 's'} of trace ${traceId} did not reach the collector (telemetry.otlp_endpoint); counted in the fire's row`);
}
