// Pure: what a call's server tools can add to its bill beyond its body, admitted up front. The API
// runs a server tool itself, within the one call: each web search costs $0.01 and its results are
// billed as input, none of it in the body the meter reads (the CLI's WebSearch sends
// web_search_20250305 with max_uses 8). A server tool whose price we do not know is refused, naming
// it, unless the agent allows it (`server_tools:` in its file), and then it adds nothing we know of.
import { WEB_SEARCH_USD } from './pricing.js';

// Our bound on one search's results as input, since the API publishes none: a results page of ten
// hits with their encrypted content came to ~5,500 tokens in issue 52's review; about twice that.
export const WEB_SEARCH_RESULT_TOKENS = 10_000;
// Tool types the client runs (their results come back in a later body, counted there).
const CLIENT_TOOL = /^(custom|bash_\d{8}|text_editor_\d{8}|computer_\d{8}|memory_\d{8})$/;

// Pure: the server tools among a call's tools (what count_tokens is asked about).
export function serverToolDefs(tools: unknown): object[] {
  if (!Array.isArray(tools)) return [];
  return tools.filter((t) => t && typeof t === 'object' && 'type' in t && typeof t.type === 'string' && !CLIENT_TOOL.test(t.type));
}

export type ServerToolsWorst = { usd: number; tokens: number; names: string[] } | { refuse: string };

export function serverToolsWorst(tools: unknown, allowed: readonly string[] = []): ServerToolsWorst {
  const out = { usd: 0, tokens: 0, names: [] as string[] };
  if (!Array.isArray(tools)) return out;
  for (const t of tools) {
    if (!t || typeof t !== 'object' || !('type' in t) || typeof t.type !== 'string' || CLIENT_TOOL.test(t.type)) continue;
    const type: string = t.type;
    const name = 'name' in t && typeof t.name === 'string' ? t.name : type;
    if (/^web_search_\d{8}$/.test(type)) {
      const uses = (t as { max_uses?: unknown }).max_uses;
      if (!Number.isSafeInteger(uses) || (uses as number) < 1) return { refuse: `the server tool ${JSON.stringify(type)} without a whole max_uses: its searches are unbounded, so the budget cannot bound them (set max_uses)` };
      out.usd += (uses as number) * WEB_SEARCH_USD;
      out.tokens += (uses as number) * WEB_SEARCH_RESULT_TOKENS;
      out.names.push(type);
      continue;
    }
    if (allowed.includes(type) || allowed.includes(name)) {
      out.names.push(type);
      continue;
    }
    return { refuse: `the server tool ${JSON.stringify(type)}: the meter knows no price for it, so the budget cannot bound it (allow it for this agent with server_tools: [${type}] to send it uncounted)` };
  }
  return out;
}

// Pure: whether a body's tools may hold a server tool, from the bytes of its `tools` value alone:
// every server tool type ends in a date (`_20250305`); a \u escape may hide one. Otherwise the
// tools are not parsed (the CLI's are ~80 KB of schemas on every call).
export function mayHoldServerTool(toolsJson: Buffer): boolean {
  return toolsJson.includes('_20') || toolsJson.includes('\\u');
}
