// Markers count only in the session's own words: never inside fenced code (closed or not), indented
// code or `>` block quotes (nested, lazy, inside list items), whatever the line ends (LF, CRLF, CR).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { classifyLines, extractMarkers, ownWords, resolvedId } from '../../../sessions/capture/markers.js';
import { TABLE } from './capture-table.js';

// The rule before this change, kept as the negative control: one optional `-`, `*` or `>` prefix.
const OLD = /^\s*(?:[-*>]\s+)?(?:\*\*)?(OBSERVE|BELIEVE|THREAD|RESOLVED):(?:\*\*)?\s*(.+?)\s*$/;

describe('markers', () => {
  test('the capture table: no quoted marker is taken, every plain one is', () => {
    let quoted = 0;
    let plain = 0;
    for (const [name, text, own] of TABLE) {
      const got = extractMarkers([text]).map((m) => m.text);
      assert.deepEqual(got, own, name);
      quoted += (text.match(/QUOTED/g) ?? []).length;
      plain += own.length;
    }
    assert.ok(quoted >= 25 && plain >= 20, `table size: ${quoted} quoted, ${plain} plain`);
  });

  test('negative control: the old line rule takes quoted markers from the same table', () => {
    const taken = TABLE.flatMap(([, text]) => text.split(/\r\n|\r|\n/).map((l) => OLD.exec(l)?.[2] ?? '').filter((t) => t.includes('QUOTED')));
    assert.ok(taken.length >= 15, `the old rule took ${taken.length} quoted markers`);
  });

  test('own words leave out code and quotes, keep the rest', () => {
    assert.equal(ownWords('mine\n> theirs\n\n```\ncode\n```\nmine too'), 'mine\n\nmine too');
    assert.deepEqual(classifyLines('a\r\n> b').map((l) => l.kind), ['own', 'quote']);
  });

  test('RESOLVED names a thread by its id only', () => {
    assert.deepEqual(resolvedId('#12 merged the glossaries'), { id: 12, resolution: 'merged the glossaries' });
    assert.deepEqual(resolvedId('#7: done'), { id: 7, resolution: 'done' });
    assert.equal(resolvedId('cleaned up old backup logs'), null);
    assert.equal(resolvedId('#12a not an id'), null);
    assert.equal(resolvedId('#0 none'), null);
  });
});
