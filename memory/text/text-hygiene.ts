// What text may enter the memory store, on every route (MCP, CLI, import, capture, dream). A NUL
// or another control character once stored can stop every later session (the state goes to the
// CLI), and a lone surrogate is not text at all (SQLite stores it as U+FFFD, so what is hashed is
// not what is kept). Text a person or a session gave is refused; text we derived is cleaned.
// Pure: strings in, a verdict out.

// C0 controls except tab (U+0009) and newline (U+000A), DEL, and the C1 controls.
const CONTROL = /[\u0000-\u0008\u000B-\u001F\u007F-\u009F]/;
const CONTROL_ALL = /[\u0000-\u0008\u000B-\u001F\u007F-\u009F]/g;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const LONE_SURROGATE_ALL = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

const hex = (s: string) => `U+${s.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`;

// Why `value` may not be stored, naming `field`; null when it may.
export function textProblem(value: string, field: string): string | null {
  const c = CONTROL.exec(value);
  if (c) return `Expected \`${field}\` without control characters (only tab and newline are allowed), got ${hex(c[0])} at position ${c.index}`;
  const s = LONE_SURROGATE.exec(value);
  if (s) return `Expected \`${field}\` to be valid Unicode text, got a lone surrogate ${hex(s[0])} at position ${s.index}`;
  return null;
}

// The first problem among named fields: strings, lists of strings (tags); other values are not ours to judge.
export function fieldsProblem(fields: Record<string, unknown>): { field: string; message: string } | null {
  for (const [name, v] of Object.entries(fields)) {
    const items: Array<[string, unknown]> = Array.isArray(v) ? v.map((x, i) => [`${name}[${i}]`, x]) : [[name, v]];
    for (const [field, x] of items) {
      const message = typeof x === 'string' ? textProblem(x, field) : null;
      if (message) return { field, message };
    }
  }
  return null;
}

// Derived text (a session's marked lines and result, a model's answer): CRLF and lone CR become
// newlines, other control characters and lone surrogates are dropped.
export function cleanDerived(value: string): string {
  return value.replace(/\r\n?/g, '\n').replace(CONTROL_ALL, '').replace(LONE_SURROGATE_ALL, '');
}
