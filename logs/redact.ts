// Secret values from the environment, replaced wherever text leaves the process (log lines,
// transcripts, printed output). Redaction is by value, not by field path: a key can turn up in
// any string, a tool's output or an error message included.
export const REDACTED = '[redacted]';

const NAMED = new Set(['ANTHROPIC_API_KEY', 'ANTHROPIC_AUTH_TOKEN', 'DISCORD_WEBHOOK_URL', 'GEMINI_API_KEY']);
const PATTERN = /(_KEY|_TOKEN|_SECRET)$/;
// Shorter values would redact ordinary words and numbers.
const MIN_LENGTH = 6;

export function isSecretName(name: string): boolean {
  return NAMED.has(name) || PATTERN.test(name);
}

export function secretValues(env: NodeJS.ProcessEnv): string[] {
  const out = new Set<string>();
  for (const [name, value] of Object.entries(env)) {
    if (!value || value.length < MIN_LENGTH || !isSecretName(name)) continue;
    out.add(value);
    // A webhook URL's token part can appear on its own.
    const tail = /\/([^/]{20,})\/?$/.exec(value);
    if (tail) out.add(tail[1]);
  }
  return [...out];
}

export type Redactor = (text: string) => string;

// Each secret is matched raw and as it appears inside a JSON string.
export function makeRedactor(secrets: string[]): Redactor {
  const forms = new Set<string>();
  for (const s of secrets) {
    forms.add(s);
    forms.add(JSON.stringify(s).slice(1, -1));
  }
  const list = [...forms].filter((s) => s.length >= MIN_LENGTH).sort((a, b) => b.length - a.length);
  if (!list.length) return (t) => t;
  const re = new RegExp(list.map((s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|'), 'g');
  return (text) => text.replace(re, REDACTED);
}
