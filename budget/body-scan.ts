// Pure: the top-level keys of a JSON object body and where each value lies, read from the bytes
// without building the values. A CLI body is ~120 KB of system prompt and tool schemas, and
// JSON.parse of it costs more than a millisecond; the meter needs three small values from it
// (max_tokens, model, thinking) and to rewrite one in place, so the rest stays byte for byte.
// Strict JSON grammar; anything it does not accept is null (the caller then parses in full).

export type Span = { start: number; end: number };
// duplicate: a key seen twice at the top level (an API may read either: the caller re-serialises).
export type TopLevel = { keys: Map<string, Span>; duplicate: boolean };

const WS = new Uint8Array(256);
for (const c of [0x20, 0x09, 0x0a, 0x0d]) WS[c] = 1;
const NUM = new Uint8Array(256);
for (const c of '0123456789+-.eE') NUM[c.charCodeAt(0)] = 1;

class Bad extends Error {}

export function scanTopLevel(b: Buffer): TopLevel | null {
  let i = 0;
  const n = b.length;
  let nextEscape = b.indexOf(0x5c);
  const ws = () => {
    while (i < n && WS[b[i]]) i++;
  };
  const expect = (c: number) => {
    if (b[i] !== c) throw new Bad();
    i++;
  };
  // A string from its opening quote; returns whether it held an escape. The closing quote is
  // found natively (indexOf): most of a body is long strings. Raw control characters inside are
  // not judged (they change no structure; the API refuses such a body, at no cost).
  const string = (): boolean => {
    expect(0x22);
    const from = i;
    for (;;) {
      const q = b.indexOf(0x22, i);
      if (q === -1) throw new Bad();
      let k = q - 1;
      while (k >= from && b[k] === 0x5c) k--;
      i = q + 1;
      // An even run of backslashes before it: the quote closes the string.
      if ((q - 1 - k) % 2 === 0) {
        // The next backslash in the body, found once and moved on only when passed: one
        // search per string would run to the end of the body for every string.
        if (nextEscape !== -1 && nextEscape < from) nextEscape = b.indexOf(0x5c, from);
        return nextEscape !== -1 && nextEscape < q;
      }
    }
  };
  // A nested object or array, from its opening bracket: only strings and brackets are followed,
  // in one tight loop, strings jumped natively. Its inner grammar is not judged: in valid JSON
  // this finds its end exactly, and invalid JSON the API refuses, at no cost.
  const container = (): void => {
    let depth = 0;
    for (; i < n; i++) {
      const c = b[i];
      if (c === 0x22) {
        string();
        i--;
      } else if (c === 0x7b || c === 0x5b) depth++;
      else if ((c === 0x7d || c === 0x5d) && --depth === 0) {
        i++;
        return;
      }
    }
    throw new Bad();
  };
  const value = (depth: number): void => {
    if (depth > 512) throw new Bad();
    const c = b[i];
    if (c === 0x22) return void string();
    if (c === 0x7b || c === 0x5b) return container();
    if (c === 0x7b) {
      i++;
      ws();
      if (b[i] === 0x7d) return void i++;
      for (;;) {
        ws();
        string();
        ws();
        expect(0x3a);
        ws();
        value(depth + 1);
        ws();
        if (b[i] === 0x2c) i++;
        else return expect(0x7d);
      }
    }
    if (c === 0x5b) {
      i++;
      ws();
      if (b[i] === 0x5d) return void i++;
      for (;;) {
        ws();
        value(depth + 1);
        ws();
        if (b[i] === 0x2c) i++;
        else return expect(0x5d);
      }
    }
    const start = i;
    if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
      while (i < n && NUM[b[i]]) i++;
      // The grammar of the number itself, on its few bytes.
      if (!/^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/.test(b.toString('latin1', start, i))) throw new Bad();
      return;
    }
    for (const lit of ['true', 'false', 'null']) {
      if (b.toString('latin1', i, i + lit.length) === lit) return void (i += lit.length);
    }
    throw new Bad();
  };
  try {
    ws();
    expect(0x7b);
    const keys = new Map<string, Span>();
    let duplicate = false;
    ws();
    if (b[i] === 0x7d) i++;
    else {
      for (;;) {
        ws();
        const ks = i;
        const escaped = string();
        const key = escaped ? (JSON.parse(b.toString('utf8', ks, i)) as string) : b.toString('utf8', ks + 1, i - 1);
        ws();
        expect(0x3a);
        ws();
        const start = i;
        value(1);
        if (keys.has(key)) duplicate = true;
        keys.set(key, { start, end: i });
        ws();
        if (b[i] === 0x2c) i++;
        else {
          expect(0x7d);
          break;
        }
      }
    }
    ws();
    if (i !== n) return null;
    return { keys, duplicate };
  } catch (err) {
    if (err instanceof Bad || err instanceof SyntaxError) return null;
    throw err;
  }
}
