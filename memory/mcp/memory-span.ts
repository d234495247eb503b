// Pure: what a trace span says of one memory operation a session's server served
// (docs/observability.md). The text asked or stored only with content capture on.
import type { TraceAttrs } from '../../core/trace.js';

// The GenAI conventions' memory operations, by tool.
const OPERATION: Record<string, string> = {
  query: 'search_memory', wander: 'search_memory', threads: 'search_memory', review: 'search_memory',
  observe: 'create_memory', believe: 'create_memory', predict: 'create_memory',
  link: 'update_memory', contradict: 'update_memory', resolve: 'update_memory',
  recall: 'get_memory', stats: 'get_memory',
};

export const memoryOperation = (tool: string): string => OPERATION[tool] ?? 'memory_operation';

export function memorySpanAttrs(tool: string, args: unknown, content: boolean): TraceAttrs {
  const a = (args ?? {}) as Record<string, unknown>;
  return {
    'gen_ai.operation.name': memoryOperation(tool),
    'nightshift.memory.tool': tool,
    'gen_ai.retrieval.query.text': content && typeof a.query === 'string' ? a.query : undefined,
    'nightshift.memory.text': content && typeof a.text === 'string' ? a.text : undefined,
  };
}

// Pure: what came back: hits for a search, the decision for a write, the refusal's code.
export function memoryResultAttrs(structured: Record<string, unknown> | undefined, error: string | null, ms: number): TraceAttrs {
  const results = structured?.results;
  return {
    'nightshift.memory.hits': Array.isArray(results) ? results.length : undefined,
    'nightshift.memory.decision': typeof structured?.decision === 'string' ? structured.decision : undefined,
    'nightshift.memory.error': error ?? undefined,
    'nightshift.memory.latency_ms': Math.round(ms * 1000) / 1000,
  };
}
