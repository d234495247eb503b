// What the README and docs/ get wrong, read as Markdown: relative links to files that do not exist
// or to a heading a page does not have, `nightshift <command>` shown in code that the CLI does not
// have, and security tables whose rows name no test or a test that does not exist.
import fs from 'node:fs';
import path from 'node:path';

// The pages checked: README.md and every docs/*.md.
export function docPages(root: string): string[] {
  const docs = fs.existsSync(path.join(root, 'docs')) ? fs.readdirSync(path.join(root, 'docs')).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`) : [];
  return ['README.md', ...docs];
}

// The page's prose lines and its fenced code blocks apart (a fence's info string kept).
function split(text: string): { prose: string; blocks: Array<{ lang: string; body: string }> } {
  const prose: string[] = [];
  const blocks: Array<{ lang: string; body: string }> = [];
  let fence: { mark: string; lang: string; lines: string[] } | null = null;
  for (const line of text.split('\n')) {
    const m = /^\s*(`{3,}|~{3,})\s*([\w-]*)/.exec(line);
    if (fence) {
      if (m && m[1][0] === fence.mark[0] && m[1].length >= fence.mark.length && !m[2]) {
        blocks.push({ lang: fence.lang, body: fence.lines.join('\n') });
        fence = null;
      } else fence.lines.push(line);
    } else if (m) fence = { mark: m[1], lang: m[2], lines: [] };
    else prose.push(line);
  }
  return { prose: prose.join('\n'), blocks };
}

// GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens; a repeat gets -1, -2.
export function anchors(text: string): Set<string> {
  const out = new Set<string>();
  const count = new Map<string, number>();
  for (const line of split(text).prose.split('\n')) {
    const h = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!h) continue;
    const base = h[1].toLowerCase().replace(/<[^>]*>/g, '').replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');
    const n = count.get(base) ?? 0;
    count.set(base, n + 1);
    out.add(n ? `${base}-${n}` : base);
  }
  return out;
}

// Inline code spans of prose (a span never crosses a blank line).
const spans = (prose: string) => prose.split(/\n\s*\n/).flatMap((para) => [...para.matchAll(/(`+)([^`]+?)\1(?!`)/g)].map((m) => m[2]));

// Every relative link of the page that does not resolve, as `page: target (why)`.
export function linkProblems(root: string, page: string): string[] {
  const text = fs.readFileSync(path.join(root, page), 'utf8');
  // Links in code are text, not links.
  const prose = split(text).prose.replace(/(`+)[^`]+?\1(?!`)/g, '');
  const out: string[] = [];
  for (const m of prose.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
    const target = m[1];
    if (/^[a-z][\w+.-]*:/i.test(target)) continue; // https:, mailto:
    const [file, anchor] = target.split('#') as [string, string | undefined];
    const at = file ? path.resolve(path.dirname(path.join(root, page)), decodeURIComponent(file)) : path.join(root, page);
    if (!fs.existsSync(at)) {
      out.push(`${page}: ${target} (no such file)`);
      continue;
    }
    if (anchor === undefined) continue;
    if (!at.endsWith('.md')) out.push(`${page}: ${target} (an anchor into a file that is not Markdown)`);
    else if (!anchors(fs.readFileSync(at, 'utf8')).has(anchor.toLowerCase())) out.push(`${page}: ${target} (no heading ${path.relative(root, at)}#${anchor})`);
  }
  return out;
}

// Every `nightshift <command> [<subcommand>]` the page shows in code: fenced blocks (shell
// comments left out, since they are prose; in YAML only its inline code) and inline code.
export function shownCommands(text: string): Array<{ command: string; sub: string | null }> {
  const { prose, blocks } = split(text);
  const code = [
    ...spans(prose),
    ...blocks.flatMap((b) => (b.lang === 'yaml' || b.lang === 'yml' ? spans(b.body) : [b.body.split('\n').map((l) => l.replace(/(^|\s)#.*$/, '')).join('\n')])),
  ];
  const out: Array<{ command: string; sub: string | null }> = [];
  for (const c of code) {
    for (const m of c.matchAll(/(?<![\w/.$@=:-])nightshift[ \t]+([a-z][\w-]*)(?:[ \t]+([a-z][\w-]*)(?![\w.-]*\/))?/g)) out.push({ command: m[1], sub: m[2] ?? null });
  }
  return out;
}

// What the CLI says of a command word: its help, or null when it has none of its own.
export type CliHelp = (command: string) => string | null;

// The subcommands a command's help names: `Usage: nightshift X a|b`, `Usage: nightshift X sub`, or
// for `<command>` the words its help lists at the start of an indented line. Null: it takes none.
export function subcommands(help: string, command: string): string[] | null {
  const token = new RegExp(`^Usage: nightshift ${command} (\\S+)`, 'm').exec(help)?.[1];
  if (!token) return null;
  if (token === '<command>') return [...help.matchAll(/^ {2}([a-z][\w-]*)\b/gm)].map((m) => m[1]);
  if (/^[a-z][\w|-]*$/.test(token)) return token.split('|');
  return null;
}

// Each command the pages show that the CLI does not have, as `page: nightshift X (why)`.
export function commandProblems(root: string, pages: string[], help: CliHelp): string[] {
  const out: string[] = [];
  for (const page of pages) {
    const seen = new Set<string>();
    for (const { command, sub } of shownCommands(fs.readFileSync(path.join(root, page), 'utf8'))) {
      const shown = sub ? `${command} ${sub}` : command;
      if (seen.has(shown)) continue;
      seen.add(shown);
      const h = help(command);
      if (h === null) {
        out.push(`${page}: nightshift ${command} (the CLI has no command \`${command}\`)`);
        continue;
      }
      const subs = sub ? subcommands(h, command) : null;
      if (subs && !subs.includes(sub!)) out.push(`${page}: nightshift ${shown} (\`nightshift ${command}\` has no \`${sub}\`: ${subs.join(', ')})`);
    }
  }
  return out;
}

// Rows of a table with a `test` column whose test cell names no test, or a test file that does not
// exist (`e2e/egress` is test/e2e/egress.test.ts).
export function testColumnProblems(root: string, page: string): string[] {
  const lines = fs.readFileSync(path.join(root, page), 'utf8').split('\n');
  const out: string[] = [];
  const cells = (l: string) => l.trim().replace(/^\||\|$/g, '').split(/(?<!\\)\|/).map((c) => c.trim());
  for (let i = 0; i < lines.length; i++) {
    if (!lines[i].startsWith('|') || !/^\|[\s|:-]+\|$/.test(lines[i + 1] ?? '')) continue;
    const col = cells(lines[i]).indexOf('test');
    if (col === -1) continue;
    for (let j = i + 2; j < lines.length && lines[j].startsWith('|'); j++) {
      const names = [...(cells(lines[j])[col] ?? '').matchAll(/`([\w./-]+)`/g)].map((m) => m[1]);
      if (!names.length) out.push(`${page}:${j + 1}: a row that names no test`);
      for (const n of names) if (!fs.existsSync(path.join(root, 'test', `${n}.test.ts`))) out.push(`${page}:${j + 1}: names the test ${n}, but test/${n}.test.ts does not exist`);
    }
  }
  return out;
}
