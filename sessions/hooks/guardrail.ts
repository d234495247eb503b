// The PreToolUse guardrail, a pure decision over one tool call: writes and edits stay inside the
// vault and the configured extra dirs, and recursive deletes of `/`, `~`, `$HOME`, `..` or any path
// with `~` never run. A Bash command is read by a small shell lexer; what it cannot resolve (a
// variable, a substitution, a `cd` it cannot follow) counts as outside. Doubt blocks: a false block
// costs the agent one turn, a false allow can cost the machine.
import fs from 'node:fs';
import path from 'node:path';
import { LoopDetector, toolKey, type LoopLimits } from '../stream/loop-detector.js';

export type ToolCall = { tool_name: string; tool_input: unknown; cwd?: string | null };
// Where writes may land. `home` is what `~` and `$HOME` mean (never a root by itself).
export type GuardRoots = { vault: string; extraDirs: string[]; home?: string | null };
export type Verdict = { allow: true } | { allow: false; reason: string };

const ALLOW: Verdict = { allow: true };
const block = (reason: string): Verdict => ({ allow: false, reason: `blocked by nightshift: ${reason}` });

// Tools that write a file named in their input.
const FILE_WRITERS: Record<string, string> = { Write: 'file_path', Edit: 'file_path', MultiEdit: 'file_path', NotebookEdit: 'notebook_path' };
// Targets a redirect may always write.
const SAFE_SINKS = new Set(['/dev/null', '/dev/stdout', '/dev/stderr', '/dev/tty']);

// The guardrail's verdict on one call.
export function guard(call: ToolCall, roots: GuardRoots): Verdict {
  const cwd = typeof call.cwd === 'string' && path.isAbsolute(call.cwd) ? path.resolve(call.cwd) : path.resolve(roots.vault);
  const input = (call.tool_input ?? {}) as Record<string, unknown>;
  const field = FILE_WRITERS[call.tool_name];
  if (field) {
    const p = input[field];
    if (typeof p !== 'string' || !p) return block(`${call.tool_name} without a \`${field}\``);
    const why = outside(p, cwd, roots);
    return why ? block(`${call.tool_name} to ${JSON.stringify(p)}: ${why}`) : ALLOW;
  }
  if (call.tool_name === 'Bash') {
    const command = input.command;
    if (typeof command !== 'string') return block('Bash without a `command`');
    const why = checkShell(command, { cwd, roots }, 0);
    return why ? block(why) : ALLOW;
  }
  return ALLOW;
}

// The loop pre-block: this call is refused when the loop detector would flag it, or would flag the
// call that continues it (the same call again, or the next step of a cycle), so the agent is told
// before the supervisor ends the session. `history` is the keys of the calls before this one.
export function loopPreBlock(history: readonly string[], call: { tool_name: string; tool_input: unknown }, limits: LoopLimits): Verdict {
  const key = toolKey(call.tool_name, call.tool_input);
  const keep = Math.max(limits.window, 4 * limits.cycleRepeats) + 1;
  const seq = [...history.slice(-keep), key];
  const flagsAfter = (next: string | null) => {
    const d = new LoopDetector(limits);
    let v = null;
    for (const k of seq) v = pushKey(d, k);
    if (v) return v;
    return next === null ? null : pushKey(d, next);
  };
  const now = flagsAfter(null);
  const nextCandidates = new Set([key, ...[2, 3, 4].map((p) => seq[seq.length - p]).filter((k): k is string => k !== undefined)]);
  let verdict = now;
  for (const next of nextCandidates) {
    if (verdict) break;
    verdict = flagsAfter(next);
  }
  if (!verdict) return ALLOW;
  const shown = key.length > 160 ? `${key.slice(0, 160)}…` : key;
  const count = seq.slice(-limits.window).filter((k) => k === key).length;
  const what = verdict.kind === 'cycle' ? `your last calls repeat a cycle of ${verdict.period} (this is one step of it: ${shown})` : `you made this exact call (${shown}) ${count} times in the last ${limits.window} tool calls`;
  return { allow: false, reason: `blocked: repeat: ${what}. One more repeat and nightshift ends this session as a loop. Do something different, or finish.` };
}

// LoopDetector keys by (name, input); a key is already that pair joined, so split it back.
function pushKey(d: LoopDetector, key: string) {
  const i = key.indexOf(' ');
  return d.push(key.slice(0, i), { k: key.slice(i + 1) });
}

// ---- paths --------------------------------------------------------------------------------------

const inside = (abs: string, root: string) => {
  const rel = path.relative(path.resolve(root), abs);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
};

// Why a write to `p` is not allowed, or null. Relative paths resolve against `cwd` (null: unknown).
function outside(p: string, cwd: string | null, roots: GuardRoots): string | null {
  if (p.includes('~')) return 'a path with `~` (outside the vault)';
  if (/[$`]/.test(p)) return 'a path nightshift cannot resolve (a variable or a substitution)';
  if (!path.isAbsolute(p) && cwd === null) return 'a relative path after a `cd` nightshift cannot follow';
  const abs = path.resolve(cwd ?? '/', p);
  const vault = path.resolve(roots.vault);
  const why = (at: string, v: string, extra: string[]) => {
    if (inside(at, v)) return inside(at, path.join(v, '.git')) ? "inside the vault's .git (git is nightshift's to run)" : null;
    if (extra.some((d) => inside(at, d))) return null;
    return `outside the vault (${vault}) and the allowed dirs`;
  };
  const byText = why(abs, vault, roots.extraDirs.map((d) => path.resolve(d)));
  if (byText) return byText;
  // By text it is inside; a symlink on the way may still lead out (vault/etclink -> /etc).
  const real = realOf(abs);
  return real === abs ? null : why(real, realOf(vault), roots.extraDirs.map((d) => realOf(path.resolve(d))));
}

// The real path of `p`: its deepest existing ancestor resolved, the rest appended.
function realOf(p: string): string {
  let head = p;
  const rest: string[] = [];
  for (;;) {
    try {
      return path.join(fs.realpathSync(head), ...rest.reverse());
    } catch {
      const parent = path.dirname(head);
      if (parent === head) return p;
      rest.push(path.basename(head));
      head = parent;
    }
  }
}

// ---- a small shell lexer ------------------------------------------------------------------------

type Word = { text: string; dynamic: boolean; glob: boolean };
type Redirect = { op: string; target: Word };
type Simple = { words: Word[]; redirects: Redirect[]; subs: string[] };
type Ctx = { cwd: string | null; roots: GuardRoots };

const MAX_DEPTH = 4;

// Splits a command line into simple commands (at ; & && || | newlines and parentheses), each with
// its words (quotes removed), its redirects and the text of any $(...) or `...` inside it.
export function lex(src: string): Simple[] {
  const out: Simple[] = [];
  let cur: Simple = { words: [], redirects: [], subs: [] };
  let word: Word | null = null;
  let pendingRedirect: string | null = null;
  const endWord = () => {
    if (!word) return;
    // Brace expansion ({..,x}, {a..b}) makes other paths of one word: treated as unresolvable.
    if (/\{[^{}]*(,|\.\.)[^{}]*\}/.test(word.text)) word.dynamic = true;
    if (pendingRedirect) {
      cur.redirects.push({ op: pendingRedirect, target: word });
      pendingRedirect = null;
    } else cur.words.push(word);
    word = null;
  };
  const endCommand = () => {
    endWord();
    if (cur.words.length || cur.redirects.length || cur.subs.length) out.push(cur);
    cur = { words: [], redirects: [], subs: [] };
  };
  const w = () => (word ??= { text: '', dynamic: false, glob: false });
  // The text of a $( ... ) or ` ... ` starting at i (after the opener); returns [inner, end index].
  const substitution = (i: number, closer: string): [string, number] => {
    let depth = 1;
    let j = i;
    for (; j < src.length; j++) {
      const c = src[j];
      if (c === '\\') {
        j++;
        continue;
      }
      if (closer === ')' && c === '(') depth++;
      if (c === closer && --depth === 0) break;
    }
    return [src.slice(i, j), j];
  };
  for (let i = 0; i < src.length; i++) {
    const c = src[i];
    if (c === '\\') {
      if (src[i + 1] === '\n') {
        i++;
        continue;
      }
      w().text += src[i + 1] ?? '';
      i++;
      continue;
    }
    if (c === "'") {
      const j = src.indexOf("'", i + 1);
      w().text += src.slice(i + 1, j < 0 ? src.length : j);
      i = j < 0 ? src.length : j;
      continue;
    }
    if (c === '"') {
      let j = i + 1;
      for (; j < src.length && src[j] !== '"'; j++) {
        const d = src[j];
        if (d === '\\') {
          w().text += src[j + 1] ?? '';
          j++;
        } else if (d === '$' && src[j + 1] === '(') {
          const [inner, end] = substitution(j + 2, ')');
          cur.subs.push(inner);
          w().text += `$(${inner})`;
          w().dynamic = true;
          j = end;
        } else if (d === '`') {
          const [inner, end] = substitution(j + 1, '`');
          cur.subs.push(inner);
          w().dynamic = true;
          j = end;
        } else {
          if (d === '$') w().dynamic = true;
          w().text += d;
        }
      }
      w();
      i = j;
      continue;
    }
    if (c === '$' && src[i + 1] === '(') {
      const [inner, end] = substitution(i + 2, ')');
      cur.subs.push(inner);
      w().text += `$(${inner})`;
      w().dynamic = true;
      i = end;
      continue;
    }
    if (c === '`') {
      const [inner, end] = substitution(i + 1, '`');
      cur.subs.push(inner);
      w().dynamic = true;
      i = end;
      continue;
    }
    if (c === '#' && !word) {
      while (i < src.length && src[i] !== '\n') i++;
      endCommand();
      continue;
    }
    if (c === ' ' || c === '\t') {
      endWord();
      continue;
    }
    // `{` opens a group only as a word of its own (`{ cmd; }`); `{a,b}` is a brace expansion.
    if (c === '\n' || c === ';' || c === '(' || c === ')' || (c === '{' && !word && /[\s]|^$/.test(src[i + 1] ?? '')) || (c === '}' && !word)) {
      endCommand();
      continue;
    }
    if (c === '&' || c === '|') {
      if (c === '&' && src[i + 1] === '>') {
        endWord();
        const op = src[i + 2] === '>' ? '&>>' : '&>';
        i += op.length - 1;
        pendingRedirect = op;
        continue;
      }
      if (src[i + 1] === c) i++;
      endCommand();
      continue;
    }
    if (c === '>' || c === '<') {
      // A file-descriptor number just before it belongs to the operator (2>file).
      const fd = word as Word | null;
      if (fd && /^\d+$/.test(fd.text) && !fd.dynamic) word = null;
      endWord();
      let op = c;
      while (src[i + 1] === '>' || src[i + 1] === '|' || src[i + 1] === '<' || src[i + 1] === '&') op += src[++i];
      if (op.includes('&') && /\d|-/.test(src[i + 1] ?? '')) {
        // 2>&1, >&2, <&-: a descriptor, not a file.
        while (/[\d-]/.test(src[i + 1] ?? '')) i++;
        continue;
      }
      pendingRedirect = op;
      continue;
    }
    if (c === '$') w().dynamic = true;
    if (c === '*' || c === '?' || c === '[') w().glob = true;
    w().text += c;
  }
  endCommand();
  return out;
}

// Prefixes that run the rest of the line as a command.
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
const WRAPPERS = new Set(['sudo', 'doas', 'command', 'builtin', 'exec', 'nohup', 'time', 'nice', 'ionice', 'stdbuf', 'env', 'xargs', 'busybox', 'timeout', 'unbuffer', 'chronic']);
const WRITERS = new Set(['curl', 'wget', 'tar', 'unzip', 'rm', 'rmdir', 'unlink', 'shred', 'touch', 'mkdir', 'truncate', 'tee', 'mv', 'chmod', 'chown', 'chgrp', 'cp', 'install', 'ln', 'rsync', 'dd', 'sed', 'perl']);
const SHELLS = new Set(['sh', 'bash', 'dash', 'zsh', 'ksh', 'fish']);

// Why the shell command must not run, or null.
function checkShell(src: string, ctx: Ctx, depth: number): string | null {
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

function outsideWord(w: Word, ctx: Ctx): string | null {
  if (w.dynamic) return w.text.includes('HOME') ? 'a path under $HOME (outside the vault)' : 'a path nightshift cannot resolve (a variable or a substitution)';
  return outside(w.glob ? globBase(w.text) : w.text, ctx.cwd, ctx.roots);
}

// The directory a glob expands within: `/*` -> `/`, `notes/*.md` -> `notes`.
function globBase(p: string): string {
  const i = p.search(/[*?[]/);
  const head = p.slice(0, i);
  const slash = head.lastIndexOf('/');
  return slash < 0 ? '.' : slash === 0 ? '/' : head.slice(0, slash);
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
  const each = (list: Word[], what: string) => {
    for (const w of list) {
      const why = outsideWord(w, ctx);
      if (why) return `${what} ${JSON.stringify(w.text)}: ${why}`;
    }
    return null;
  };
  switch (name) {
    case 'rm':
    case 'rmdir':
    case 'unlink':
    case 'shred': {
      const recursive = flags.some((f) => f === '--recursive' || (/^-[a-zA-Z]+$/.test(f) && /[rR]/.test(f)));
      for (const w of operands) {
        const why = dangerousDelete(w, ctx, recursive);
        if (why) return `${name}${recursive ? ' -r' : ''} of ${JSON.stringify(w.text)}: ${why}`;
      }
      return each(operands, name);
    }
    case 'find': {
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
        const why = checkSimple(inner, { ...ctx }, depth + 1);
        if (why) return why;
      }
      return null;
    }
    case 'touch':
    case 'mkdir':
    case 'truncate':
    case 'tee':
    case 'mv':
    case 'chmod':
    case 'chown':
    case 'chgrp':
    case 'mkfifo':
    case 'mknod': {
      const targets = name === 'chmod' || name === 'chown' || name === 'chgrp' ? operands.slice(1) : operands;
      if (name === 'truncate') return each(operands.filter((w) => !/^\d/.test(w.text)), name);
      return each(targets, name);
    }
    case 'ln':
      return each(operands, name);
    case 'cp':
    case 'install':
    case 'rsync':
    case 'scp': {
      // -t DIR / -tDIR / --target-directory=DIR / --target-directory DIR: the destination is DIR.
      const dest: Word[] = [];
      args.forEach((a, k) => {
        if ((a.text === '-t' || a.text === '--target-directory') && args[k + 1]) dest.push(args[k + 1]);
        else if (/^-t./.test(a.text)) dest.push({ ...a, text: a.text.slice(2) });
        else if (a.text.startsWith('--target-directory=')) dest.push({ ...a, text: a.text.slice('--target-directory='.length) });
      });
      if (!dest.length) dest.push(...operands.slice(-1));
      if (dest.some((d) => name === 'scp' || name === 'rsync' ? /^[^/]*:/.test(d.text) : false)) return null;
      return each(dest.length ? dest : operands.slice(-1), name);
    }
    case 'curl':
    case 'wget':
    case 'tar':
    case 'unzip': {
      // Where they write: curl -o/--output, wget -O/--output-document/-P, tar/unzip -C/-d DIR.
      const opts: Record<string, string[]> = { curl: ['-o', '--output'], wget: ['-O', '--output-document', '-P', '--directory-prefix'], tar: ['-C', '--directory'], unzip: ['-d'] };
      const targets: Word[] = [];
      args.forEach((a, k) => {
        for (const o of opts[name]) {
          if (o.startsWith('--')) {
            if (a.text === o && args[k + 1]) targets.push(args[k + 1]);
            else if (a.text.startsWith(`${o}=`)) targets.push({ ...a, text: a.text.slice(o.length + 1) });
            continue;
          }
          // Short options, alone or last in a cluster (-qO FILE), or with the value attached (-OFILE).
          const letter = o[1];
          if (new RegExp(`^-[a-zA-Z]*${letter}$`).test(a.text) && args[k + 1]) targets.push(args[k + 1]);
          else if (a.text.startsWith(o) && a.text.length > 2 && name !== 'tar') targets.push({ ...a, text: a.text.slice(2) });
        }
      });
      return each(targets.filter((w) => w.text !== '-'), name);
    }
    case 'dd': {
      const of = args.find((a) => a.text.startsWith('of='));
      return of ? each([{ ...of, text: of.text.slice(3) }], 'dd of=') : null;
    }
    case 'sed':
    case 'perl': {
      if (!flags.some((f) => /^-[a-zA-Z]*i/.test(f) || f.startsWith('--in-place'))) return null;
      const files = name === 'sed' && !flags.some((f) => f === '-e' || f === '-f') ? operands.slice(1) : operands;
      return each(files, `${name} -i`);
    }
    case 'git': {
      // git may write anywhere it is pointed: -C DIR and --git-dir / --work-tree outside the vault.
      const pointed: Word[] = [];
      args.forEach((a, k) => {
        if ((a.text === '-C' || a.text === '--git-dir' || a.text === '--work-tree') && args[k + 1]) pointed.push(args[k + 1]);
        else if (/^-C./.test(a.text)) pointed.push({ ...a, text: a.text.slice(2) });
        else if (/^--(git-dir|work-tree)=/.test(a.text)) pointed.push({ ...a, text: a.text.slice(a.text.indexOf('=') + 1) });
      });
      const why = each(pointed, 'git pointed at');
      if (why) return why;
      // Its config is nightshift's (hooks it would run after the session, outside the watchdog).
      const sub = args.find((a) => !a.text.startsWith('-') && !pointed.includes(a));
      if (sub?.text === 'config' && args.some((a) => /^--(global|system)$|^core\.hookspath$|^core\.fsmonitor$|^alias\./i.test(a.text))) {
        return 'git config of hooks, aliases or the global/system config (git is nightshift\'s to run)';
      }
      if (args.some((a) => /^core\.hookspath=|^core\.fsmonitor=/i.test(a.text))) return 'git -c core.hooksPath/fsmonitor (git is nightshift\'s to run)';
      return null;
    }
  }
  return null;
}

// Flags (before `--`) and operands.
function splitArgs(args: Word[]): { flags: string[]; operands: Word[] } {
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
