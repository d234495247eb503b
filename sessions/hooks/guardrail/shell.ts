// A Bash command as the guardrail reads it: each simple command the lexer finds, its redirects,
// the substitutions and nested shells inside it (to a depth), unwrapped from what runs it (sudo,
// env, xargs, time ...), the `cd`s that move where it runs; then the rule of the command's family
// (deletes.ts, writer-commands.ts, git.ts). What it cannot resolve counts as outside.
import path from 'node:path';
import { lex, type Word } from './shell-lexer.js';
import { outsideWord, splitArgs, type CommandRule, type Ctx } from './shell-words.js';
import { DELETE_RULES } from './deletes.js';
import { GIT_RULES } from './git.js';
import { WRITER_RULES } from './writer-commands.js';

const MAX_DEPTH = 4;

// Targets a redirect may always write.
const SAFE_SINKS = new Set(['/dev/null', '/dev/stdout', '/dev/stderr', '/dev/tty']);

// Shell words that come before a command (if/then/do ... !): the command is what follows. (`time`
// is a wrapper below: it has options of its own.)
const RESERVED = new Set(['if', 'then', 'elif', 'else', 'fi', 'do', 'done', 'while', 'until', '!', 'coproc', '{', '}', 'esac']);
// Per wrapper, the options that take a value (the next word is that value, not the command).
const VALUE_OPTIONS: Record<string, string[]> = {
  sudo: ['-u', '-g', '-C', '-D', '-p', '-h', '-r', '-t', '-U', '-T', '-R'],
  doas: ['-u', '-C'],
  env: ['-u', '-C', '--unset', '--chdir'],
  xargs: ['-I', '-n', '-L', '-P', '-s', '-d', '-E', '-a', '--arg-file', '--delimiter', '--max-args', '--max-procs'],
  nice: ['-n', '--adjustment'],
  ionice: ['-c', '-n', '-p', '-P', '-u', '--class', '--classdata'],
  stdbuf: ['-i', '-o', '-e'],
  timeout: ['-s', '-k', '--signal', '--kill-after'],
  exec: ['-a'],
  time: ['-f', '-o', '--format', '--output'],
};
// Prefixes that run the rest of the line as a command.
const WRAPPERS = new Set(['sudo', 'doas', 'command', 'builtin', 'exec', 'nohup', 'time', 'nice', 'ionice', 'stdbuf', 'env', 'xargs', 'busybox', 'timeout', 'unbuffer', 'chronic']);
// What writes to targets named on its command line (under xargs they come from stdin).
const WRITERS = new Set(['curl', 'wget', 'tar', 'unzip', 'rm', 'rmdir', 'unlink', 'shred', 'touch', 'mkdir', 'truncate', 'tee', 'mv', 'chmod', 'chown', 'chgrp', 'cp', 'install', 'ln', 'rsync', 'dd', 'sed', 'perl']);
const SHELLS = new Set(['sh', 'bash', 'dash', 'zsh', 'ksh', 'fish']);

// Each command's rule, by its base name; one family per name.
const RULES = new Map<string, CommandRule>();
for (const family of [DELETE_RULES, WRITER_RULES, GIT_RULES]) {
  for (const [name, rule] of Object.entries(family)) {
    if (RULES.has(name)) throw new Error(`guardrail: two rules for \`${name}\``);
    RULES.set(name, rule);
  }
}

// Why the shell command must not run, or null.
export function checkShell(src: string, ctx: Ctx, depth: number): string | null {
  if (depth > MAX_DEPTH) return 'a command nested too deeply to check';
  for (const cmd of lex(src)) {
    for (const sub of cmd.subs) {
      const why = checkShell(sub, { ...ctx }, depth + 1);
      if (why) return why;
    }
    for (const r of cmd.redirects) {
      if (r.op.startsWith('<') && !r.op.includes('>')) continue;
      const t = r.target.text;
      if (SAFE_SINKS.has(t) || /^\/dev\/fd\/\d+$/.test(t)) continue;
      const why = outsideWord(r.target, ctx);
      if (why) return `a redirect (${r.op}) to ${JSON.stringify(t)}: ${why}`;
    }
    const why = checkSimple(cmd.words, ctx, depth);
    if (why) return why;
  }
  return null;
}

const base = (w: Word) => path.basename(w.text.replace(/^\\/, ''));

function checkSimple(all: Word[], ctx: Ctx, depth: number): string | null {
  let words = all.filter((w, i) => !(i === 0 && /^\w+=/.test(w.text)));
  // Leading assignments (FOO=1 cmd) and wrappers (sudo, env, xargs ...) with their options.
  let viaXargs = false;
  for (;;) {
    while (words.length && (/^[A-Za-z_]\w*=/.test(words[0].text) || RESERVED.has(words[0].text))) words = words.slice(1);
    if (!words.length || !WRAPPERS.has(base(words[0]))) break;
    const name = base(words[0]);
    if (name === 'xargs') viaXargs = true;
    words = words.slice(1);
    while (words.length && (words[0].text.startsWith('-') || (name === 'timeout' && /^\d/.test(words[0].text)) || (name === 'nice' && /^\d/.test(words[0].text)))) {
      const flag = words[0].text;
      words = words.slice(1);
      // env -S splits its value into a command line of its own: nothing to check it with.
      if (name === 'env' && /^(-S|--split-string)/.test(flag)) return 'env -S: a command line nightshift cannot check';
      // Options that take a value, per wrapper: sudo -u USER, env -u NAME, xargs -I {} -n N ...
      if ((VALUE_OPTIONS[name] ?? []).includes(flag) && words.length) words = words.slice(1);
    }
  }
  if (!words.length) return null;
  if (words[0].dynamic) return `a command name nightshift cannot resolve (${JSON.stringify(words[0].text)})`;
  const name = base(words[0]);
  const args = words.slice(1);
  if (name === 'cd' || name === 'pushd') {
    const t = args.find((a) => !a.text.startsWith('-'));
    if (!t || t.text === '~' || t.text.startsWith('~/') || (t.dynamic && /HOME/.test(t.text))) ctx.cwd = ctx.roots.home ? path.resolve(ctx.roots.home, t ? t.text.replace(/^~\/?|^\$\{?HOME\}?\/?/, '') : '') : null;
    else if (t.dynamic || t.glob || t.text.includes('~') || t.text === '-') ctx.cwd = null;
    else ctx.cwd = ctx.cwd === null && !path.isAbsolute(t.text) ? null : path.resolve(ctx.cwd ?? '/', t.text);
    return null;
  }
  if (SHELLS.has(name) || name === 'eval') {
    const i = args.findIndex((a) => a.text === '-c' || /^-\w*c$/.test(a.text));
    const script = name === 'eval' ? args.map((a) => a.text).join(' ') : i >= 0 ? args[i + 1]?.text : undefined;
    if (script !== undefined) return checkShell(script, { ...ctx }, depth + 1);
    return null;
  }
  const { flags, operands } = splitArgs(args);
  // Under xargs the operands come from stdin: a write with targets nightshift cannot see.
  if (viaXargs && WRITERS.has(name)) return `xargs ${name}: targets read from stdin, which nightshift cannot check`;
  const rule = RULES.get(name);
  return rule ? rule({ name, args, flags, operands, ctx, nested: (words, inner) => checkSimple(words, inner, depth + 1) }) : null;
}
