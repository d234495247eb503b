// The memory store's MCP server side: every tool (memory/mcp/store-tools.ts, learning-tools.ts)
// registered, arguments checked, results and refusals turned into MCP replies. Importable and
// side-effect free; memory/mcp/mcp-stdio.ts connects it to stdio, mcp-http.ts to loopback HTTP.
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { CallToolRequestParamsSchema, ErrorCode, ListToolsRequestSchema, McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { learningTools, type LearningToolStore } from './learning-tools.js';
import { storeTools, type StoreToolStore } from './store-tools.js';
import type { Tool, ToolOptions } from './tool.js';
import { fieldsProblem } from '../text/text-hygiene.js';
import { MemoryError } from '../types.js';
import { memoryOperation, memoryResultAttrs, memorySpanAttrs } from './memory-span.js';

export type { Tool, ToolOptions } from './tool.js';
export { toResult } from './store-tools.js';

export const SERVER_NAME = 'nightshift_memory';

export const INSTRUCTIONS =
  'Long-term memory across nightshift sessions. Query it before you start on something; ' +
  'observe what you learn that a later session would want (one self-contained claim per call). Results name their sources.';

// What the tools need from the store; `MemoryStore` satisfies it (sync or async methods alike).
export type ToolStore = StoreToolStore & LearningToolStore;

function tools(store: ToolStore, opts: ToolOptions): Tool[] {
  return [...storeTools(store, opts), ...learningTools(store, opts)];
}

// "Expected `limit` to be ..." lines from a zod error, for the model to fix its call.
function describeIssues(err: z.ZodError): string {
  return err.issues.map((i) => `${i.path.length ? i.path.join('.') : '(arguments)'}: ${i.message}`).join('; ');
}

function toolError(text: string): CallToolResult {
  return { content: [{ type: 'text', text }], isError: true };
}

// Each call under the session's trace span, when it has one.
async function callTool(tool: Tool, args: unknown, opts: ToolOptions): Promise<CallToolResult> {
  if (!opts.trace?.traceId) return runTool(tool, args, opts);
  const span = opts.trace.child(`${memoryOperation(tool.name)} ${tool.name}`, memorySpanAttrs(tool.name, args, opts.trace.content));
  const t0 = performance.now();
  const r = await runTool(tool, args, opts);
  const error = r.isError ? String((r.content as Array<{ text?: string }>)[0]?.text ?? 'error').split(':')[0].slice(0, 80) : null;
  span.set(memoryResultAttrs(r.structuredContent as Record<string, unknown> | undefined, error, performance.now() - t0));
  if (r.isError) span.fail(error ?? 'error');
  span.end();
  return r;
}

async function runTool(tool: Tool, args: unknown, opts: ToolOptions): Promise<CallToolResult> {
  const parsed = tool.input.safeParse(args ?? {});
  if (!parsed.success) return toolError(`Invalid arguments for \`${tool.name}\`: ${describeIssues(parsed.error)}. Fix the arguments and call it again.`);
  // Every text argument, by the name the caller used (the store checks again under its own names).
  const bad = fieldsProblem(parsed.data as Record<string, unknown>);
  if (bad) return toolError(`Invalid arguments for \`${tool.name}\`: ${bad.message}. Fix the arguments and call it again.`);
  if (!tool.annotations.readOnlyHint && opts.writes) {
    if (opts.writes.used >= opts.writes.max) {
      opts.logger?.warn({ event: 'mcp_write_limit', tool: tool.name, max: opts.writes.max }, `memory: write limit of ${opts.writes.max} reached`);
      return toolError(`limit: this session has made its ${opts.writes.max} memory writes (limits.memory_writes); \`${tool.name}\` was not run. Keep what is left to say for your result.`);
    }
    opts.writes.used++;
  }
  try {
    const { structured, text } = await tool.run(parsed.data);
    return { content: [{ type: 'text', text: text ?? JSON.stringify(structured) }], structuredContent: structured };
  } catch (err) {
    if (err instanceof MemoryError) {
      opts.logger?.debug({ event: 'mcp_refused', tool: tool.name, code: err.code }, err.message);
      return toolError(`${err.code}: ${err.message}`);
    }
    opts.logger?.error({ event: 'mcp_tool_failed', tool: tool.name, err }, `tool ${tool.name} failed`);
    return toolError(`\`${tool.name}\` failed inside the memory server: ${(err as Error)?.message ?? String(err)}. The store may be busy; try again, or go on without it.`);
  }
}

// Keys the model does not need to call a tool right: the server's zod schema enforces them all
// and says what to fix. A schema's bytes are paid on every turn of every session.
const DROPPED = new Set(['$schema', 'additionalProperties', 'minLength', 'maxLength', 'maxItems', 'minItems']);
export function compactSchema(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(compactSchema);
  if (!node || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(node)) {
    if (DROPPED.has(k)) continue;
    // zod's integer bounds are the safe-integer range: no information.
    if ((k === 'minimum' || k === 'maximum') && Math.abs(v as number) === Number.MAX_SAFE_INTEGER) continue;
    out[k] = k === 'properties' && v && typeof v === 'object' ? Object.fromEntries(Object.entries(v).map(([p, sub]) => [p, compactSchema(sub)])) : compactSchema(v);
  }
  return out;
}

// A tool's schema as listed, by its zod schema (the tools' schemas are module constants), per io.
// Callers get their own copy: the SDK or a client may add to what it is given.
type Listed = { type: 'object'; [k: string]: unknown };
const listedSchemas = { input: new WeakMap<z.ZodType, string>(), output: new WeakMap<z.ZodType, string>() };
function jsonSchemaOf(schema: z.ZodType, io: 'input' | 'output'): Listed {
  let json = listedSchemas[io].get(schema);
  if (json === undefined) listedSchemas[io].set(schema, (json = JSON.stringify(compactSchema(z.toJSONSchema(schema, { target: 'draft-7', io })))));
  return JSON.parse(json) as Listed;
}

// The loose request shape: a malformed `params` reaches us and gets -32602, not the SDK's -32603.
const LooseCallTool = z.object({ method: z.literal('tools/call'), params: z.unknown() });

/**
 * Registers the memory tools on `server`. Per MCP 2025-11-25, an unknown tool is a JSON-RPC error
 * (-32602) and bad arguments or a failure inside a tool are `isError` results; SDK 1.32.2 answers an
 * unknown tool with an `isError` result, so `tools/call` is dispatched here instead.
 */
export function registerTools(server: McpServer, store: ToolStore, opts: ToolOptions): void {
  const byName = new Map<string, Tool>();
  for (const tool of tools(store, opts)) {
    byName.set(tool.name, tool);
    server.registerTool(
      tool.name,
      { title: tool.title, description: tool.description, inputSchema: tool.input, outputSchema: tool.output, annotations: { title: tool.title, ...tool.annotations } },
      (args: unknown) => callTool(tool, args, opts),
    );
  }
  // The list the CLI puts into every request of the session: each schema as the model needs it
  // (types, enums, required, descriptions), the bounds left to the server, which checks them.
  // Made when asked for, each schema once per process (a session's HTTP server registers the
  // tools for every request: converting them all each time was ~2 ms of each).
  server.server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: [...byName.values()].map((t) => ({
      name: t.name, title: t.title, description: t.description, annotations: { title: t.title, ...t.annotations },
      inputSchema: jsonSchemaOf(t.input, 'input'),
      // For the client, which checks structuredContent against it; never part of a model request.
      outputSchema: jsonSchemaOf(t.output, 'output'),
    })),
  }));
  server.server.setRequestHandler(LooseCallTool, async (request) => {
    const params = CallToolRequestParamsSchema.safeParse(request.params);
    if (!params.success) throw new McpError(ErrorCode.InvalidParams, `Invalid tools/call params: ${describeIssues(params.error)}`);
    const tool = byName.get(params.data.name);
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${params.data.name}. Tools: ${[...byName.keys()].join(', ')}`);
    return callTool(tool, params.data.arguments, opts);
  });
}
