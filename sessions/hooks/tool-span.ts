// Pure: what a trace span says of one tool call the hook saw (docs/observability.md): the tool,
// the verdict and the rule family that gave it; its input and the refusal's words (which quote the
// input) only with content capture on.
import type { TraceAttrs } from '../../core/trace.js';

export function toolSpanAttrs(call: { tool_name: string; tool_use_id: string | null; tool_input: unknown }, v: { allow: boolean; reason?: string; rule?: string }, decideMs: number, content: boolean): TraceAttrs {
  return {
    'gen_ai.operation.name': 'execute_tool',
    'gen_ai.tool.name': call.tool_name,
    'gen_ai.tool.call.id': call.tool_use_id ?? undefined,
    'gen_ai.tool.type': call.tool_name.startsWith('mcp__') ? 'extension' : 'function',
    'nightshift.tool.decision': v.allow ? 'allowed' : 'refused',
    'nightshift.tool.rule': v.allow ? undefined : (v.rule ?? 'guardrail'),
    'nightshift.tool.decide_ms': Math.round(decideMs * 1000) / 1000,
    'nightshift.tool.reason': content && !v.allow ? v.reason : undefined,
    'gen_ai.tool.call.arguments': content ? JSON.stringify(call.tool_input) : undefined,
  };
}

// Pure: the tool_use_id of a PostToolUse payload (null: none, or not one).
export function postToolUseId(text: string): string | null {
  try {
    const o = JSON.parse(text) as Record<string, unknown>;
    return o && typeof o === 'object' && typeof o.tool_use_id === 'string' ? o.tool_use_id : null;
  } catch {
    return null;
  }
}
