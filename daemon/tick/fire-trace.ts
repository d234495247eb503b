// A fire's trace (docs/observability.md): its root span, begun beside the fire row, and ended with
// the fire's own words before the row is settled with the trace id and what the collector did not
// take. Telemetry off: NO_SPAN, nothing loaded, nothing written.
import { NO_SPAN, type TraceAttrs, type TraceSpan } from '../../core/trace.js';
import type { FireKind, FireTrigger } from '../../budget/fires.js';
import type { Telemetry } from '../../logs/telemetry.js';
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

// Ends the fire's span with its words and waits (telemetry.flush_timeout at most) for its trace to
// go out; null with telemetry off. What did not go is counted in the fire's row and said once.
export async function endFireSpan(telemetry: Telemetry | null, span: TraceSpan, words: FireWords, logger: Log): Promise<{ trace_id: string; spans_dropped: number } | null> {
  if (!telemetry || !span.traceId) return null;
  span.set(fireAttrs(words));
  if (words.exit_code !== null && words.exit_code !== 0) span.fail(words.reason);
  span.end();
  const dropped = await telemetry.flush(span.traceId);
  if (dropped) logger.warn({ event: 'telemetry_dropped', trace_id: span.traceId, spans: dropped }, `${dropped} span${dropped === 1 ? '' : 's'} of trace ${span.traceId} did not reach the collector (telemetry.otlp_endpoint); counted in the fire's row`);
  return { trace_id: span.traceId, spans_dropped: dropped };
}
