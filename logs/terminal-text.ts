// Text a session wrote (its result, tool calls, error text, branch and file names, stream garbage)
// is data, not instructions to the operator's terminal: every character a terminal could act on,
// or that disguises what is read, is shown as its escape instead of being emitted.
//
// Escaped: C0 controls (U+0000-U+001F; `\n` and `\t` kept in a block), DEL, C1 controls
// (U+0080-U+009F: 8-bit CSI, OSC, ST...), the bidi embeddings, overrides, marks and isolates
// (U+061C, U+200E-U+200F, U+202A-U+202E, U+2066-U+2069), the invisible format and separator
// characters (U+200B-U+200D, U+2028-U+2029, U+2060-U+2064, U+FEFF, U+FFF9-U+FFFB) and lone
// surrogates. Each is written `\u001b`, the form JSON and JavaScript read back as the character,
// so JSON text stays JSON with the same meaning after it passes through here.

// Everything above, with `\n` and `\t` (a block keeps those two).
const UNSAFE_LINE = /[\u0000-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u2069\ufeff\ufff9-\ufffb]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const UNSAFE_BLOCK = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u2069\ufeff\ufff9-\ufffb]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const ALL_LINE = new RegExp(UNSAFE_LINE.source, 'g');
const ALL_BLOCK = new RegExp(UNSAFE_BLOCK.source, 'g');

const escapeChar = (c: string) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;

export type TerminalTextOptions = {
  // A multi-line block (a result, a transcript): `\n` and `\t` are kept, and `\r\n` is a line
  // break; a bare `\r` is still escaped (it would let a line overwrite itself). Off: one line,
  // where `\n` and `\t` show escaped too.
  block?: boolean;
};

// Pure: `text` as a terminal may show it. Text with nothing to escape is returned as it is.
export function terminalText(text: string, o: TerminalTextOptions = {}): string {
  if (o.block) {
    if (!UNSAFE_BLOCK.test(text)) return text;
    return text.replace(/\r\n/g, '\n').replace(ALL_BLOCK, escapeChar);
  }
  if (!UNSAFE_LINE.test(text)) return text;
  return text.replace(ALL_LINE, escapeChar);
}
