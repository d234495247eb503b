// The shell lexer (sessions/hooks/guardrail/shell-lexer.ts): words, redirects and substitutions as the
// rules need them.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { lex } from '../../../../sessions/hooks/guardrail/shell-lexer.js';

test('the lexer keeps quoted operators inside words and finds substitutions', () => {
  const cmds = lex(`echo "a; b" && cat <<EOF > out.txt\nx\nEOF`);
  assert.deepEqual(cmds[0].words.map((w) => w.text), ['echo', 'a; b']);
  assert.deepEqual(cmds[1].redirects.map((r) => r.target.text), ['EOF', 'out.txt']);
  assert.deepEqual(lex('echo $(rm -rf ~)')[0].subs, ['rm -rf ~']);
});

