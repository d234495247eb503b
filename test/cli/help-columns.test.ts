// Every command's --help keeps its columns (issue 35.8): in a table of terms and descriptions each
// description starts at the table's one column, a term too long for it stands alone with its
// description on the next lines at that column, and continuation lines sit at that column too.
// And `memory --help` ends with its own exit codes, as the other commands' do.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ALLOWED } from '../../cli/args.js';
import { main } from '../../cli/main.js';
import { ROOT } from '../helpers.js';

const indentOf = (l: string) => l.length - l.trimStart().length;

// Pure: the misaligned lines of one help text, as `line N: why`. A table is a run of indented
// lines whose least indent is 2 (its rows); a row's description follows its term after two spaces
// or more (one, after an exit code's number).
export function misaligned(help: string): string[] {
  const lines = help.split('\n');
  const out: string[] = [];
  let i = 0;
  while (i < lines.length) {
    if (!/^ /.test(lines[i])) {
      i++;
      continue;
    }
    const start = i;
    while (i < lines.length && /^ /.test(lines[i])) i++;
    const block = lines.slice(start, i).map((text, k) => ({ text, n: start + k + 1 }));
    const rowIndent = Math.min(...block.map((l) => indentOf(l.text)));
    if (rowIndent !== 2) continue;
    const rows = block.map((l, k) => {
      if (indentOf(l.text) !== rowIndent) return null;
      const m = /^(\s+)(\d+ |\S.*?\S {2,}|\S {2,})(\S.*)$/.exec(l.text);
      const next = block[k + 1];
      return { ...l, desc: m ? m[1].length + m[2].length : null, alone: !m && !!next && indentOf(next.text) > rowIndent };
    }).filter((r) => r !== null);
    const cols = rows.flatMap((r) => (r.desc === null ? [] : [r.desc]));
    const conts = block.filter((l) => indentOf(l.text) > rowIndent).map((l) => indentOf(l.text));
    // The table's column: its rows' descriptions, else (every term alone) its continuations'.
    const col = cols.length ? mode(cols) : conts.length ? mode(conts) : null;
    if (col === null) continue;
    for (const r of rows) {
      if (r.desc !== null && r.desc !== col) out.push(`line ${r.n}: description at column ${r.desc}, the table's is ${col}: ${r.text.trim()}`);
      if (r.desc === null && !r.alone && r.text.length > col) out.push(`line ${r.n}: no description at column ${col} (a term too long for it stands alone): ${r.text.trim()}`);
    }
    for (const l of block) if (indentOf(l.text) > rowIndent && indentOf(l.text) !== col) out.push(`line ${l.n}: continued at column ${indentOf(l.text)}, the table's is ${col}: ${l.text.trim()}`);
  }
  return out;
}

function mode(xs: number[]): number {
  const c = new Map<number, number>();
  for (const x of xs) c.set(x, (c.get(x) ?? 0) + 1);
  return [...c].sort((a, b) => b[1] - a[1] || a[0] - b[0])[0][0];
}

async function help(argv: string[]): Promise<string> {
  let out = '';
  const code = await main({ argv: [...argv, '--help'], env: {}, cwd: ROOT, stdout: (t) => void (out += t), stderr: () => {} });
  assert.equal(code, 0);
  return out;
}

test('the checker finds a description off the column, a term that runs into it, and a continuation off it (controls)', () => {
  const good = 'Commands:\n  run <agent>      run one session\n  init [DIR] [--remote URL]\n                   a new site\n  tick             one tick, on\n                   two lines\n';
  assert.deepEqual(misaligned(good), []);
  assert.equal(misaligned(good.replace('  tick             one', '  tick              one')).length, 1);
  assert.equal(misaligned('  state [--agent NAME] the state\n  run <agent>         one session\n  tick                a tick\n').length, 1);
  assert.equal(misaligned(good.replace('                   two lines', '                 two lines')).length, 1);
  assert.equal(misaligned('  anneal [--agent NAME] the anneal log\n  run <agent>          one session\n  tick                 a tick\n').length, 1);
  // Exit codes: a three-digit code takes one space.
  assert.deepEqual(misaligned('Exit codes:\n  0   ok\n  64  usage,\n      more\n  130 interrupted\n'), []);
});

test("every command's --help keeps its columns", async () => {
  const problems: string[] = [];
  for (const argv of [[], ...Object.keys(ALLOWED).map((c) => [c])]) for (const p of misaligned(await help(argv))) problems.push(`nightshift ${argv.join(' ')} --help: ${p}`);
  assert.deepEqual(problems, []);
});

test('memory --help ends with its own exit codes', async () => {
  const text = await help(['memory']);
  const tail = text.slice(text.lastIndexOf('Exit codes:'));
  assert.ok(text.lastIndexOf('Exit codes:') > 0, 'an exit codes section');
  assert.match(tail, /^ {2}75 +refused: .*forgotten claim/m);
  assert.match(tail, /^ {2}77 +permission: [\s\S]*forget --approve/m);
  // Its own: not the session's codes every command shares.
  assert.doesNotMatch(tail, /the session ended|130/);
});
