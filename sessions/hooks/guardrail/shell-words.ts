// What the command rules share: where a command runs (its cwd, which a `cd` moves), the path a word
// names as a write target, and a command's flags apart from its operands.
import type { GuardRoots } from './verdict.js';
import type { Word } from './shell-lexer.js';
import { outside } from './write-paths.js';

// The cwd is null once a `cd` went where nightshift cannot follow.
export type Ctx = { cwd: string | null; roots: GuardRoots };

// One command's rule: why it must not run, or null. `name` is the command's base name; `nested`
// checks a command it runs itself (find -exec), one level deeper.
export type CommandRule = (c: { name: string; args: Word[]; flags: string[]; operands: Word[]; ctx: Ctx; nested: (words: Word[], ctx: Ctx) => string | null }) => string | null;

// Why a write to the path a word names is not allowed, or null.
export function outsideWord(w: Word, ctx: Ctx): string | null {
  if (w.dynamic) return w.text.includes('HOME') ? 'a path under $HOME (outside the vault)' : 'a path nightshift cannot resolve (a variable or a substitution)';
  return outside(w.glob ? globBase(w.text) : w.text, ctx.cwd, ctx.roots);
}

// The first of `list` a write must not reach, said as `what "word": why`; or null.
export function firstOutside(list: Word[], what: string, ctx: Ctx): string | null {
  for (const w of list) {
    const why = outsideWord(w, ctx);
    if (why) return `${what} ${JSON.stringify(w.text)}: ${why}`;
  }
  return null;
}

// The directory a glob expands within: `/*` -> `/`, `notes/*.md` -> `notes`.
export function globBase(p: string): string {
  const i = p.search(/[*?[]/);
  const head = p.slice(0, i);
  const slash = head.lastIndexOf('/');
  return slash < 0 ? '.' : slash === 0 ? '/' : head.slice(0, slash);
}

// Flags (before `--`) and operands.
export function splitArgs(args: Word[]): { flags: string[]; operands: Word[] } {
  const flags: string[] = [];
  const operands: Word[] = [];
  let ended = false;
  for (const a of args) {
    if (!ended && a.text === '--') ended = true;
    else if (!ended && a.text.startsWith('-') && a.text.length > 1 && !a.dynamic) flags.push(a.text);
    else operands.push(a);
  }
  return { flags, operands };
}
