// The one escape for the status page: every text that reaches its HTML (a session's words, an
// agent's name, a reason, a number) goes through here, in an element or in a quoted attribute.
const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function html(text: unknown): string {
  return String(text ?? '').replace(/[&<>"']/g, (c) => ENTITIES[c]);
}

export type Escape = (text: unknown) => string;
