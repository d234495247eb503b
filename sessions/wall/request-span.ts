// Pure: what a trace span says of one API request the proxy forwarded (docs/observability.md):
// GenAI convention names where they exist, `nightshift.*` where they do not. Never content: no
// body, no header but the limits' and the retry count.
import type { TraceAttrs } from '../../core/trace.js';
import type { CallUsage } from '../../budget/pricing.js';

type Headers = Record<string, string | string[] | undefined>;
const one = (v: string | string[] | undefined) => (Array.isArray(v) ? v.join(', ') : v);

// The span's name: `chat <model>` for inference, the path's last word else (count_tokens).
export function requestSpanName(path: string, model: string | null): string {
  const p = path.split('?')[0];
  return p === '/v1/messages' ? `chat ${model ?? 'unknown'}` : `nightshift.${p.split('/').pop() || 'request'}`;
}

// At the start: the path, the model asked for, the retry the client counts, and the meter's view.
export function requestStartAttrs(path: string, headers: Headers, m: { model: string | null; maxTokens: number; worstUsd: number; lowered: { from: number; to: number } | null } | null): TraceAttrs {
  const retry = Number(one(headers['x-stainless-retry-count']));
  return {
    'gen_ai.operation.name': path.split('?')[0] === '/v1/messages' ? 'chat' : undefined,
    'gen_ai.provider.name': 'anthropic',
    'url.path': path.split('?')[0],
    'gen_ai.request.model': m?.model ?? undefined,
    'gen_ai.request.max_tokens': m?.maxTokens,
    'nightshift.meter.worst_case_usd': m?.worstUsd,
    'nightshift.meter.lowered_from': m?.lowered?.from,
    'nightshift.retry': Number.isFinite(retry) ? retry : undefined,
  };
}

// At the reply's head: its status and the limits it reported (anthropic-ratelimit-*, retry-after).
export function responseAttrs(status: number, headers: Headers): TraceAttrs {
  const out: TraceAttrs = { 'http.response.status_code': status, 'nightshift.request_id': one(headers['request-id']) };
  for (const [k, v] of Object.entries(headers)) {
    if (k.startsWith('anthropic-ratelimit-')) out[`nightshift.ratelimit.${k.slice('anthropic-ratelimit-'.length)}`] = one(v);
  }
  if (headers['retry-after'] !== undefined) out['nightshift.ratelimit.retry_after'] = one(headers['retry-after']);
  return out;
}

// Once priced: the tokens as the API reported them and what the meter charged.
export function usageAttrs(u: { usage: CallUsage; model: string | null; complete: boolean; stopReason?: string | null } | null, usd: number): TraceAttrs {
  if (!u) return { 'nightshift.cost_usd': usd, 'nightshift.meter.worst_case_counted': true };
  return {
    'gen_ai.response.model': u.model ?? undefined,
    'gen_ai.usage.input_tokens': u.usage.input,
    'gen_ai.usage.output_tokens': u.usage.output,
    'gen_ai.usage.cache_read.input_tokens': u.usage.cacheRead,
    'gen_ai.usage.cache_creation.input_tokens': u.usage.cacheWrite,
    'gen_ai.response.finish_reasons': u.stopReason ? [u.stopReason] : undefined,
    'nightshift.cost_usd': usd,
    'nightshift.meter.worst_case_counted': !u.complete,
  };
}
