import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { scanTopLevel } from '../../budget/body-scan.js';
import { readCall } from '../../budget/meter.js';
import { seededRng as rng } from '../../memory/learning/wander.js';

const STRINGS = ['', 'max_tokens', '"max_tokens"', 'a\\b', 'line\nbreak', 'tab\t', 'é ü 日本', '\u0001\u001f', '}{][,:"', 'model'];
function value(r: () => number, depth: number): unknown {
  const k = Math.floor(r() * (depth > 3 ? 4 : 6));
  if (k === 0) return STRINGS[Math.floor(r() * STRINGS.length)];
  if (k === 1) return [0, -1, 1.5, 1e21, -2.5e-7, 64000][Math.floor(r() * 6)];
  if (k === 2) return [true, false, null][Math.floor(r() * 3)];
  if (k === 3) return Math.floor(r() * 100);
  if (k === 4) return Array.from({ length: Math.floor(r() * 4) }, () => value(r, depth + 1));
  return Object.fromEntries(Array.from({ length: Math.floor(r() * 4) }, (_, i) => [`${STRINGS[Math.floor(r() * STRINGS.length)]}${i}`, value(r, depth + 1)]));
}

describe('body scan', () => {
  test('the top-level keys and their values match JSON.parse over 2000 random bodies, compact and spaced', () => {
    const r = rng(7);
    for (let n = 0; n < 2000; n++) {
      const obj = value(r, 0);
      const body = obj && typeof obj === 'object' && !Array.isArray(obj) ? obj : { v: obj };
      const text = r() < 0.5 ? JSON.stringify(body) : JSON.stringify(body, null, 2);
      const raw = Buffer.from(text);
      const top = scanTopLevel(raw);
      assert.ok(top, text);
      assert.deepEqual([...top.keys.keys()], Object.keys(body), text);
      for (const [k, sp] of top.keys) assert.deepEqual(JSON.parse(raw.toString('utf8', sp.start, sp.end)), (body as Record<string, unknown>)[k], text);
    }
  });
  for (const bad of ['', '[]', '{', '{"a":1,}', '{"a" 1}', '{"a":01}', '{"a":1} x', '{"a":tru}', '{"a":"open}', '{"a":1,,"b":2}', '{"a":1e}', '"s"', '{"a":[1,2}']) {
    test(`not taken: ${JSON.stringify(bad)}`, () => assert.equal(scanTopLevel(Buffer.from(bad)), null));
  }
  test('inside a nested value only strings and brackets are followed (invalid JSON there is the API\'s to refuse, at no cost)', () => {
    assert.deepEqual([...scanTopLevel(Buffer.from('{"a":[1,],"b":2}'))!.keys.keys()], ['a', 'b']);
  });
  test('a duplicate top-level key is flagged, an escaped spelling of one included', () => {
    assert.equal(scanTopLevel(Buffer.from('{"max_tokens":1,"max_tok\\u0065ns":2}'))?.duplicate, true);
    assert.equal(scanTopLevel(Buffer.from('{"max_tokens":1,"x":{"max_tokens":2}}'))?.duplicate, false);
  });
  test('a lowered max_tokens and thinking budget are written in place; every other byte stays', () => {
    const raw = Buffer.from('{ "model" : "claude-sonnet-5",\n "thinking": {"type":"enabled","budget_tokens":9000}, "max_tokens" : 64000, "x": "é" }');
    const read = readCall(raw);
    assert.ok(typeof read !== 'string');
    assert.equal(read.model, 'claude-sonnet-5');
    assert.equal(read.rewrite(null, null), raw);
    assert.equal(read.rewrite(5000, 4999).toString(), '{ "model" : "claude-sonnet-5",\n "thinking": {"type":"enabled","budget_tokens":4999}, "max_tokens" : 5000, "x": "é" }');
  });
});
