// A small shell lexer: a Bash command line as the simple commands it runs, each with its words
// (quotes removed, marked where a variable, a substitution or a glob leaves them unresolved), its
// redirects and the text of the substitutions inside it. What it cannot resolve is marked, never
// guessed: the rules treat a dynamic word as outside.

export type Word = { text: string; dynamic: boolean; glob: boolean };
export type Redirect = { op: string; target: Word };
export type Simple = { words: Word[]; redirects: Redirect[]; subs: string[] };

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
