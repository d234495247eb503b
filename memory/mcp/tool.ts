// One MCP tool's whole contract: name, title, description, zod input and output schemas, hints,
// and what it runs. memory/mcp/server.ts registers every tool and turns results and refusals into
// MCP replies; the tool files (store-tools.ts, learning-tools.ts) only declare.
import type { z } from 'zod';
import type { Logger } from '../../logs/logger.js';
import type { Actor } from '../types.js';
import type { TraceSpan } from '../../core/trace.js';

export type ToolOptions = {
  // Who the audit log names for every mutation made through these tools.
  actor: Actor;
  // The source of an observation that names none (the session id, when the supervisor set one).
  defaultSource: string | null;
  // False for a session's own server: every write's source is `defaultSource`, and a `source` the
  // caller gives is kept only as a `claimed-source:` tag (memory/mcp/claimed-source.ts).
  trustSource: boolean;
  // Who an observation is said by when it names no `speaker`: the session's agent, `operator` on stdio.
  speaker?: string | null;
  logger?: Pick<Logger, 'warn' | 'error' | 'debug'>;
  // Called with each new memory an observe made (not a merge), after it has answered; the server
  // runs its slower checks there (Gemini's contradiction check) without delaying the reply.
  afterObserve?: (memory: { id: number; text: string }) => void;
  // A session's budget of writing calls (limits.memory_writes), shared by every request it makes;
  // past it a writing tool is refused and the store is not touched.
  writes?: { used: number; max: number };
  // The session's trace span: each call is a memory operation span under it (./memory-span.ts).
  trace?: TraceSpan;
};

type Annotations = { readOnlyHint: boolean; destructiveHint?: boolean; idempotentHint: boolean; openWorldHint: boolean };
export type Tool = {
  name: string;
  title: string;
  description: string;
  input: z.ZodObject;
  output: z.ZodObject;
  annotations: Annotations;
  run(args: any): Promise<{ structured: Record<string, unknown>; text?: string }>;
};
