// Pure: zod's issues as the lines an operator reads: a misspelt key gets the setting it was
// probably meant to be, a wrong type the value that was there.
import type { z } from 'zod';
import { didYouMean } from '../core/suggest.js';
import { show } from './schema.js';

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
