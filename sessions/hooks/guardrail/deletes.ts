// Deletes: `rm -r` and its kin never take `/`, `~`, `$HOME`, `..`, a `.*` glob, the home
// directory, or the vault itself or a folder above it; `find -delete`/`-exec` only under a start
// the same rules allow (the vault itself when a name filter keeps the vault and its .git out), and
// what it executes is checked as a command of its own.
import path from 'node:path';
import type { Word } from './shell-lexer.js';
import { firstOutside, globBase, outsideWord, type CommandRule, type Ctx } from './shell-words.js';
import { inside } from './write-paths.js';

// `/`, `~`, `$HOME`, `..`, the vault itself or above it, `.*`: never deleted.
function dangerousDelete(w: Word, ctx: Ctx, recursive: boolean): string | null {
  const t = w.text;
  if (t.includes('~')) return 'a path with `~`';
  if (/\$\{?HOME\b/.test(t)) return '$HOME';
  if (w.dynamic) return 'a path nightshift cannot resolve (a variable or a substitution)';
  if (recursive && t.split('/').includes('..')) return 'a path with `..`';
  if (w.glob && /(^|\/)\.[*?[]/.test(t)) return 'a `.*` glob (it can match `..`)';
  if (!path.isAbsolute(t) && ctx.cwd === null) return 'a relative path after a `cd` nightshift cannot follow';
  const abs = path.resolve(ctx.cwd ?? '/', w.glob ? globBase(t) : t);
  if (abs === '/') return 'the root directory';
  if (ctx.roots.home && inside(path.resolve(ctx.roots.home), abs)) return 'the home directory';
  const vault = path.resolve(ctx.roots.vault);
  if (inside(vault, abs) && !(w.glob && abs === vault)) return 'the vault itself (or a directory above it)';
  return null;
}

const remove: CommandRule = ({ name, flags, operands, ctx }) => {
  const recursive = flags.some((f) => f === '--recursive' || (/^-[a-zA-Z]+$/.test(f) && /[rR]/.test(f)));
  for (const w of operands) {
    const why = dangerousDelete(w, ctx, recursive);
    if (why) return `${name}${recursive ? ' -r' : ''} of ${JSON.stringify(w.text)}: ${why}`;
  }
  return firstOutside(operands, name, ctx);
};

const find: CommandRule = ({ args, ctx, nested }) => {
  const deletes = args.some((a) => a.text === '-delete' || a.text === '-exec' || a.text === '-execdir' || a.text === '-ok');
  if (!deletes) return null;
  const starts = args.slice(0, Math.max(0, args.findIndex((a) => a.text.startsWith('-') || a.text === '!' || a.text === '('))).filter(Boolean);
  const list = starts.length ? starts : [{ text: '.', dynamic: false, glob: false }];
  // A name filter keeps find from taking the vault itself (and its .git) along.
  const filtered = args.some((a, k) => /^-i?(name|path|regex)$/.test(a.text) && args[k + 1] && !/^\*?$/.test(args[k + 1].text));
  for (const w of list) {
    const why = (filtered && !w.dynamic && ctx.cwd !== null && path.resolve(ctx.cwd, w.text) === path.resolve(ctx.roots.vault) ? null : dangerousDelete(w, ctx, true)) ?? outsideWord(w, ctx);
    if (why) return `find -delete/-exec under ${JSON.stringify(w.text)}: ${why}`;
  }
  const exec = args.findIndex((a) => a.text === '-exec' || a.text === '-execdir' || a.text === '-ok');
  if (exec >= 0) {
    const inner = args.slice(exec + 1, args.findIndex((a, k) => k > exec && (a.text === ';' || a.text === '+')) >>> 0).filter((a) => a.text !== '{}');
    const why = nested(inner, { ...ctx });
    if (why) return why;
  }
  return null;
};

export const DELETE_RULES: Record<string, CommandRule> = { rm: remove, rmdir: remove, unlink: remove, shred: remove, find };
