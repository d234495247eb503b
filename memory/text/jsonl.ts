// The JSONL line formats of `nightshift memory import` and `export`. Pure: a line in, a verdict out.
import { AGENT } from '../store/scope.js';
import { transcriptSpeaker } from './speaker.js';
import { fieldsProblem } from './text-hygiene.js';
import { CATEGORIES, type Category, type ObserveInput } from '../types.js';

export type LineProblem = { line: number; field: string; message: string };
export type ParsedLine = { ok: true; input: ObserveInput } | { ok: false; field: string; message: string };

const show = (v: unknown) => (v === undefined ? 'nothing' : `\`${JSON.stringify(v)?.slice(0, 60)}\` (${Array.isArray(v) ? 'array' : v === null ? 'null' : typeof v})`);

// One import line: {"text", "source", "created_at"?, "valid_from"?, "scope"? (an agent's own), "tags"?, "category"?, "salience"?, "speaker"?};
// other fields are ignored, so an export (or another tool's dump) imports as it is. Without a
// `speaker`, a transcript line's `Name: ` opening names it. Blank lines: null.
export function parseImportLine(line: string): ParsedLine | null {
  if (!line.trim()) return null;
  let v: unknown;
  try {
    v = JSON.parse(line);
  } catch (err) {
    return { ok: false, field: '(line)', message: `not JSON: ${(err as Error).message}` };
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return { ok: false, field: '(line)', message: `Expected a JSON object, got ${show(v)}` };
  const o = v as Record<string, unknown>;
  if (typeof o.text !== 'string' || !o.text.trim()) return { ok: false, field: 'text', message: `Expected \`text\` to be a non-empty string, got ${show(o.text)}` };
  if (typeof o.source !== 'string' || !o.source.trim()) return { ok: false, field: 'source', message: `Expected \`source\` to be a non-empty string, got ${show(o.source)}` };
  const bad = fieldsProblem({ text: o.text, source: o.source, tags: o.tags, speaker: o.speaker });
  if (bad) return { ok: false, ...bad };
  if (o.speaker !== undefined && o.speaker !== null && typeof o.speaker !== 'string') return { ok: false, field: 'speaker', message: `Expected \`speaker\` to be a string, got ${show(o.speaker)}` };
  const input: ObserveInput = { text: o.text, source: o.source, speaker: (o.speaker as string | null | undefined) || transcriptSpeaker(o.text) };
  if (o.created_at !== undefined && o.created_at !== null) {
    const t = typeof o.created_at === 'string' ? Date.parse(o.created_at) : NaN;
    if (Number.isNaN(t)) return { ok: false, field: 'created_at', message: `Expected \`created_at\` to be an ISO-8601 time, got ${show(o.created_at)}` };
    input.created_at = new Date(t).toISOString();
  }
  if (o.valid_from !== undefined && o.valid_from !== null) {
    const t = typeof o.valid_from === 'string' ? Date.parse(o.valid_from) : NaN;
    if (Number.isNaN(t)) return { ok: false, field: 'valid_from', message: `Expected \`valid_from\` to be an ISO-8601 time, got ${show(o.valid_from)}` };
    input.valid_from = new Date(t).toISOString();
  }
  if (o.scope !== undefined && o.scope !== null) {
    if (typeof o.scope !== 'string' || !AGENT.test(o.scope)) return { ok: false, field: 'scope', message: `Expected \`scope\` to be an agent's name, got ${show(o.scope)}` };
    input.scope = o.scope;
  }
  if (o.tags !== undefined && o.tags !== null) {
    if (!Array.isArray(o.tags) || !o.tags.every((t) => typeof t === 'string')) return { ok: false, field: 'tags', message: `Expected \`tags\` to be an array of strings, got ${show(o.tags)}` };
    input.tags = o.tags as string[];
  }
  if (o.category !== undefined && o.category !== null) {
    if (!CATEGORIES.includes(o.category as Category)) return { ok: false, field: 'category', message: `Expected \`category\` to be one of ${CATEGORIES.join(', ')}, got ${show(o.category)}` };
    input.category = o.category as Category;
  }
  if (o.salience !== undefined && o.salience !== null) {
    if (typeof o.salience !== 'number' || !(o.salience >= 0 && o.salience <= 1)) return { ok: false, field: 'salience', message: `Expected \`salience\` to be a number from 0 to 1, got ${show(o.salience)}` };
    input.salience = o.salience;
  }
  return { ok: true, input };
}
