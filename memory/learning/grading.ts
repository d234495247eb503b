// What a session did with memory, read from its stream-json transcript: which memories the agent
// recalled (query, recall) or had surfaced (wander), and which of them it then used. Pure over the
// transcript's lines; the store turns the answer into FSRS grades (docs/memory.md).
import { contentTerms } from '../text/text.js';

const TOOL_PREFIX = 'mcp__nightshift_memory__';
// Tools whose answer recalls memories the agent asked for, and the one that surfaces memories it did not.
const RECALLING = new Set(['query', 'recall']);
const SURFACING = new Set(['wander']);
// Memory tools whose input names memories by id: calling one with an id uses that memory.
const ID_FIELDS = ['id', 'other_id', 'from', 'to'];
// Used by words: at least this many of the memory's own content terms (the ones the agent did not
// already say when it asked) appear in what the agent wrote or did afterwards, and this share of them.
const MIN_TERMS = 3;
const MIN_SHARE = 0.4;

export type SessionUsage = {
  recalledIds: number[]; // returned by query or recall
  surfacedIds: number[]; // returned by wander
  injectedIds: number[]; // put in the prompt by session-state
  usedIds: number[]; // of those, the ones the agent referred to later (by id or by their words)
};

type Seen = { id: number; text: string; askedTerms: Set<string>; order: number };

/** Reads a transcript (stream-json lines, any order of assistant/user messages) and says which memories were recalled, surfaced and used. */
export function usageFromTranscript(lines: Iterable<string>, injected: Array<{ id: number; text: string }> = []): SessionUsage {
  const pending = new Map<string, { tool: string; asked: string }>(); // tool_use id -> memory tool
  const seen = new Map<number, Seen & { kind: 'recalled' | 'surfaced' | 'injected' }>();
  for (const m of injected) seen.set(m.id, { id: m.id, text: m.text, askedTerms: new Set(), order: 0, kind: 'injected' });
  const used = new Set<number>();
  let order = 0;
  for (const line of lines) {
    let msg: any;
    try {
      msg = JSON.parse(line);
    } catch {
      continue;
    }
    const content = msg?.message?.content;
    if (!Array.isArray(content)) continue;
    if (msg.type === 'assistant') {
      order++;
      // What the agent says or does now can use any memory it saw before this turn.
      const said: string[] = [];
      for (const b of content) {
        if (b?.type === 'text' && typeof b.text === 'string') said.push(b.text);
        if (b?.type === 'tool_use') {
          const input = b.input && typeof b.input === 'object' ? b.input : {};
          const name = typeof b.name === 'string' ? b.name : '';
          if (name.startsWith(TOOL_PREFIX)) {
            const tool = name.slice(TOOL_PREFIX.length);
            for (const f of ID_FIELDS) if (Number.isInteger(input[f]) && seen.has(input[f]) && seen.get(input[f])!.order < order) used.add(input[f]);
            if ((RECALLING.has(tool) || SURFACING.has(tool)) && typeof b.id === 'string') pending.set(b.id, { tool, asked: JSON.stringify(input) });
            // A memory tool's own words (a query, an observation) count as saying something too.
            if (!RECALLING.has(tool) && !SURFACING.has(tool)) said.push(JSON.stringify(input));
          } else said.push(JSON.stringify(input));
        }
      }
      const text = said.join('\n');
      if (!text) continue;
      const words = new Set(contentTerms(text, 100_000));
      const lower = text.toLowerCase();
      for (const s of seen.values()) {
        if (used.has(s.id) || s.order >= order) continue;
        if (new RegExp(`(?:#|\\bmemory\\s+#?)${s.id}\\b`, 'i').test(lower) || usesWords(s, words)) used.add(s.id);
      }
    } else if (msg.type === 'user') {
      for (const b of content) {
        if (b?.type !== 'tool_result' || typeof b.tool_use_id !== 'string') continue;
        const call = pending.get(b.tool_use_id);
        if (!call || b.is_error) continue;
        pending.delete(b.tool_use_id);
        const asked = new Set(contentTerms(call.asked, 100_000));
        for (const m of memoriesIn(resultText(b.content))) {
          const kind = SURFACING.has(call.tool) ? 'surfaced' : 'recalled';
          const prev = seen.get(m.id);
          // Asked for beats surfaced: a memory the agent queried for is not "surfaced and ignored".
          if (!prev || (prev.kind !== 'recalled' && kind === 'recalled')) seen.set(m.id, { ...m, askedTerms: asked, order, kind });
        }
      }
    }
  }
  const recalledIds = [...seen.values()].filter((s) => s.kind === 'recalled').map((s) => s.id).sort((a, b) => a - b);
  const surfacedIds = [...seen.values()].filter((s) => s.kind === 'surfaced').map((s) => s.id).sort((a, b) => a - b);
  const injectedIds = [...seen.values()].filter((s) => s.kind === 'injected').map((s) => s.id).sort((a, b) => a - b);
  return { recalledIds, surfacedIds, injectedIds, usedIds: [...used].sort((a, b) => a - b) };
}

function usesWords(s: Seen, said: Set<string>): boolean {
  const own = contentTerms(s.text).filter((t) => !s.askedTerms.has(t));
  if (own.length < MIN_TERMS) return false;
  const hit = own.filter((t) => said.has(t)).length;
  return hit >= MIN_TERMS && hit / own.length >= MIN_SHARE;
}

function resultText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((c) => (c && typeof c === 'object' && typeof (c as any).text === 'string' ? (c as any).text : '')).join('\n');
  return '';
}

// The memories a memory tool answered with: `results[]` (query), `path[]` (wander) or one record (recall).
function memoriesIn(text: string): Array<{ id: number; text: string }> {
  let v: any;
  try {
    v = JSON.parse(text);
  } catch {
    return [];
  }
  const list = Array.isArray(v?.results) ? v.results : Array.isArray(v?.path) ? v.path : v && typeof v === 'object' ? [v] : [];
  return list.filter((m: any) => Number.isInteger(m?.id) && typeof m?.text === 'string').map((m: any) => ({ id: m.id, text: m.text }));
}
