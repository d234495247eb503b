// doctor's one authenticated call: is the credential one the API takes? It asks the token counter
// (POST /v1/messages/count_tokens), which the API does not bill and which uses the path and headers
// the session's proxy forwards; a refused key then fails here, not three minutes into a session.
import { credentialFrom, upstreamHeaders, type ApiCredential } from '../../sessions/wall/api-proxy.js';
import type { CheckFacts } from '../../report/embed.js';

type Check = CheckFacts;
// Any model id does: the key is checked before the model is looked up.
const PROBE_MODEL = 'claude-haiku-4-5';
const NAMES: Record<ApiCredential['kind'], string> = { api_key: 'ANTHROPIC_API_KEY', oauth: 'CLAUDE_CODE_OAUTH_TOKEN', auth_token: 'ANTHROPIC_AUTH_TOKEN' };

export type ApiAnswer = { status: number; body: string } | { error: string };

// Pure: what to do about a refused credential. A subscription token expires (or is revoked) while
// `claude auth status` still says logged in; only a new one from `claude setup-token` helps.
export function refusedFix(kind: ApiCredential['kind'], said: string, envFile: string): string {
  if (kind === 'oauth') {
    const why = /expired/i.test(said) ? 'the subscription token has expired' : /revoked/i.test(said) ? 'the subscription token was revoked' : 'the subscription token is not one the API takes';
    return `${why}: run \`claude setup-token\` (as the operator, where a browser can open; it prints a new token valid for a year) and put CLAUDE_CODE_OAUTH_TOKEN=<the new token> in ${envFile}, then nightshift doctor again`;
  }
  if (kind === 'auth_token') return `put a valid ANTHROPIC_AUTH_TOKEN (your gateway's) in ${envFile}`;
  return `put a valid ANTHROPIC_API_KEY in ${envFile} (a new key from console.anthropic.com, or CLAUDE_CODE_OAUTH_TOKEN from \`claude setup-token\` for a subscription)`;
}

// Pure: the verdict on what the API answered.
export function apiVerdict(answer: ApiAnswer, credential: ApiCredential, base: string, envFile: string): Check {
  const name = NAMES[credential.kind];
  if ('error' in answer) return { name: 'api', status: 'warn', detail: `${base} did not answer: ${answer.error}`, fix: `check the network (and claude.api_base or ANTHROPIC_BASE_URL)` };
  let said = '';
  try {
    const e = JSON.parse(answer.body)?.error;
    if (e && typeof e === 'object') said = [e.type, e.message].filter((x) => typeof x === 'string').join(': ');
  } catch {
    // not JSON: the status says enough
  }
  const why = `${answer.status}${said ? ` ${said.slice(0, 200)}` : ''}`;
  if (answer.status === 401 || answer.status === 403) {
    return { name: 'api', status: 'fail', detail: `the API at ${base} refuses ${name} (${why}): every session would fail`, fix: refusedFix(credential.kind, said, envFile) };
  }
  // 400/404: past the key check (a model or a field it did not like), so the key is taken.
  if ((answer.status >= 200 && answer.status < 300) || answer.status === 400 || answer.status === 404) {
    return { name: 'api', status: 'ok', detail: `${base} accepts ${name} (one token count, not billed)`, fix: null };
  }
  return { name: 'api', status: 'warn', detail: `the API at ${base} answered ${why}: the key could not be checked`, fix: 'try again later; 429 and 5xx pass' };
}

// Null when there is no credential to try (the credential check says so).
export async function apiCheck(env: NodeJS.ProcessEnv, base: string, envFile: string, timeoutMs: number, fetchFn: typeof fetch = fetch): Promise<Check | null> {
  const credential = credentialFrom(env);
  if (!credential) return null;
  const url = `${base.replace(/\/+$/, '')}/v1/messages/count_tokens`;
  const headers = upstreamHeaders({ 'content-type': 'application/json', 'anthropic-version': '2023-06-01' }, credential) as Record<string, string>;
  let answer: ApiAnswer;
  try {
    const r = await fetchFn(url, { method: 'POST', headers, body: JSON.stringify({ model: PROBE_MODEL, messages: [{ role: 'user', content: 'ok' }] }), signal: AbortSignal.timeout(timeoutMs) });
    answer = { status: r.status, body: (await r.text()).slice(0, 4096) };
  } catch (err) {
    const e = err as Error & { cause?: { code?: string; message?: string } };
    answer = { error: e.cause?.code ?? e.cause?.message ?? e.message };
  }
  return apiVerdict(answer, credential, base, envFile);
}
