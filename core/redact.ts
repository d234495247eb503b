// Secret values from the environment, replaced wherever text leaves the process (log lines,
// transcripts, printed output, the ledger, commits). Redaction is by value, not by field path: a
// key can turn up in any string, a tool's output or an error message included. Text is always
// redacted before it is cut: a cut can split a secret so that no redactor finds it.
export const REDACTED = '[redacted]';

// The secrets nightshift itself knows by name (the logger also redacts fields so named).
export const SECRET_NAMES = ['ANTHROPIC_API_KEY', 'ANTHROPIC_AUTH_TOKEN', 'DISCORD_WEBHOOK_URL', 'NIGHTSHIFT_WEBHOOK_URL', 'GEMINI_API_KEY', 'NIGHTSHIFT_OTLP_HEADERS', 'NIGHTSHIFT_DATABASE_URL'] as const;
const NAMED = new Set<string>(SECRET_NAMES);
const PATTERN = /(_KEY|_TOKEN|_SECRET|_PASSWORD|_PASSWD|_PAT)$/;
// A URL in `*_URL` is a secret when it carries credentials: user info, a token-like query value,
// or a long token-like path segment (a Discord webhook's token).
const URL_NAME = /_URL$/;
const CREDENTIAL_PARAM = /key|token|secret|pass|sig|auth|credential/i;
const TOKEN_SEGMENT = /^[A-Za-z0-9_\-.~%]{20,}$/;
// Shorter values would redact ordinary words and numbers.
const MIN_LENGTH = 6;

export function isSecretName(name: string): boolean {
  return NAMED.has(name) || PATTERN.test(name);
}

// The credential parts of a URL value (empty when it carries none).
export function urlCredentials(value: string): string[] {
  let u: URL;
  try {
    u = new URL(value);
  } catch {
    return [];
  }
  const out: string[] = [];
  if (u.password) out.push(u.password, decodeSafe(u.password));
  if (u.username && u.password) out.push(`${u.username}:${u.password}`);
  for (const [k, v] of u.searchParams) if (CREDENTIAL_PARAM.test(k) && v.length >= MIN_LENGTH) out.push(v);
  for (const seg of u.pathname.split('/')) if (TOKEN_SEGMENT.test(seg)) out.push(seg, decodeSafe(seg));
  return out;
}

function decodeSafe(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

export function secretValues(env: NodeJS.ProcessEnv): string[] {
  const out = new Set<string>();
  for (const [name, value] of Object.entries(env)) {
    if (!value || value.length < MIN_LENGTH) continue;
    const creds = URL_NAME.test(name) || NAMED.has(name) ? urlCredentials(value) : [];
    if (!isSecretName(name) && !creds.length) continue;
    out.add(value);
    for (const c of creds) out.add(c);
    // A collector's headers (`name=value,...`): each value can appear on its own.
    if (name === 'NIGHTSHIFT_OTLP_HEADERS') for (const part of value.split(',')) out.add(decodeSafe(part.slice(part.indexOf('=') + 1).trim()));
    // A webhook URL's token part can appear on its own.
    const tail = /\/([^/]{20,})\/?$/.exec(value);
    if (tail) out.add(tail[1]);
  }
  return [...out].filter((s) => s.length >= MIN_LENGTH);
}

export type Redactor = (text: string) => string;

// Each secret is matched raw, as it appears inside a JSON string, and URL-encoded (both the
// component and the form encoding), whichever way a tool or a log happens to write it.
export function makeRedactor(secrets: string[]): Redactor {
  const forms = new Set<string>();
  for (const s of secrets) {
    for (const f of [s, encodeURIComponent(s), encodeURIComponent(s).replace(/%20/g, '+'), encodeURI(s)]) {
      forms.add(f);
      forms.add(JSON.stringify(f).slice(1, -1));
    }
  }
  const list = [...forms].filter((s) => s.length >= MIN_LENGTH).sort((a, b) => b.length - a.length);
  if (!list.length) return (t) => t;
  const re = new RegExp(list.map((s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|'), 'g');
  return (text) => text.replace(re, REDACTED);
}
