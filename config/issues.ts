// Pure: zod's issues as the lines an operator reads: a misspelt key gets the setting it was
// probably meant to be, a wrong type the value that was there.
import type { z } from 'zod';
import { isMap, isScalar, isSeq, type Document, type LineCounter, type Scalar } from 'yaml';
import { didYouMean } from '../core/suggest.js';
import { show } from './show.js';

export function formatIssuePath(p: readonly PropertyKey[]): string {
  return p.length ? p.map((x) => (typeof x === 'number' ? `[${x}]` : String(x))).join('.').replace(/\.\[/g, '[') : '(top level)';
}

// The schema's own type below wrappers (default, optional, nullable, a pipe's input).
function inner(s: any): any {
  for (let i = 0; i < 10 && s?._zod?.def; i++) {
    const d = s._zod.def;
    if (d.innerType) s = d.innerType;
    else if (d.type === 'pipe') s = d.in;
    else break;
  }
  return s;
}

// The settings a mapping at `at` takes, or [] where the schema is not a known object.
export function keysAt(schema: z.ZodType, at: readonly PropertyKey[]): string[] {
  let s = inner(schema);
  for (const seg of at) {
    const d = s?._zod?.def;
    if (d?.type === 'object') s = inner(d.shape[seg as string]);
    else if (d?.type === 'array') s = inner(d.element);
    else if (d?.type === 'record') s = inner(d.valueType);
    else return [];
  }
  const d = s?._zod?.def;
  return d?.type === 'object' ? Object.keys(d.shape) : [];
}

function valueAt(data: unknown, at: readonly PropertyKey[]): { found: boolean; value: unknown } {
  let v: any = data;
  for (const seg of at) {
    if (v === null || typeof v !== 'object' || !Object.hasOwn(v, seg)) return { found: false, value: undefined };
    v = v[seg as string];
  }
  return { found: true, value: v };
}

export function issueLines(issues: readonly z.core.$ZodIssue[], data: unknown, schema: z.ZodType): string[] {
  const out: string[] = [];
  for (const i of issues) {
    if (i.code === 'unrecognized_keys') {
      const known = keysAt(schema, i.path);
      for (const key of i.keys) out.push(`${formatIssuePath([...i.path, key])}: not a setting here${didYouMean(key, known).replace(/^ /, '. ') || (known.length ? `. Known: ${known.join(', ')}` : '')}`);
      continue;
    }
    const got = valueAt(data, i.path);
    // zod's own words ("Invalid input: expected number, received string") in ours, with the value.
    if (i.code === 'invalid_type' && /^Invalid input/.test(i.message)) {
      out.push(`${formatIssuePath(i.path)}: Expected ${i.expected}, got ${got.found ? show(got.value) : 'nothing'}`);
      continue;
    }
    out.push(`${formatIssuePath(i.path)}: ${i.message}${got.found && !/\bgot\b/.test(i.message) ? `, got ${show(got.value)}` : ''}`);
  }
  return out;
}

// The yaml library's message with its snippet and caret, indented under the problem's line.
export function yamlMessage(message: string): string {
  return message.trimEnd().replace(/\n\n+/g, '\n').replace(/\n/g, '\n    ');
}

// Pure: `a.b[0].c: message` lines with where the field is in the YAML appended (` (FILE:LINE)`),
// the line of its key (of the item, in a list). A field the file does not hold (a default, a
// missing key) keeps its line as it was. `lineOffset`: lines before the YAML (front matter's `---`).
export function withLines(problems: readonly string[], doc: Document, lines: LineCounter, file: string, lineOffset = 0): string[] {
  return problems.map((p) => {
    const m = /^((?:[A-Za-z0-9_-]+|\[\d+\])(?:\.[A-Za-z0-9_-]+|\[\d+\])*): /.exec(p);
    if (!m) return p;
    const at = offsetOf(doc, m[1].split(/\.|(?=\[)/).map((s) => (/^\[\d+\]$/.test(s) ? Number(s.slice(1, -1)) : s)));
    if (at === null) return p;
    const [first, ...rest] = p.split('\n');
    return [`${first} (${file}:${lines.linePos(at).line + lineOffset})`, ...rest].join('\n');
  });
}

// Where a path's key (or list item) begins in the document, or null when it is not there.
function offsetOf(doc: Document, at: Array<string | number>): number | null {
  let node: unknown = doc.contents;
  let offset: number | null = null;
  for (const seg of at) {
    if (isMap(node)) {
      const pair = node.items.find((i) => isScalar(i.key) && String(i.key.value) === String(seg));
      if (!pair) return null;
      offset = (pair.key as Scalar).range?.[0] ?? null;
      node = pair.value;
    } else if (isSeq(node) && typeof seg === 'number') {
      const item = node.items[seg] as { range?: [number, number, number] } | undefined;
      if (!item) return null;
      offset = item.range?.[0] ?? null;
      node = item;
    } else return null;
  }
  return offset;
}
