// Pure: a session's text made inert for Discord. Discord renders markdown in embed descriptions
// and field values: a session could write a masked link (`[docs](http://evil)`), a heading, bold,
// a quote or a mention into its own report. A backslash before any ASCII punctuation shows the
// character itself, so each character markdown gives meaning to is escaped.
const SPECIAL = /[\\`*_~|>#[\]<@]/g;

export function markdownText(t: string): string {
  return t.replace(SPECIAL, (c) => `\\${c}`);
}
