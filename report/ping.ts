// The dead-man's ping (config monitor.ping_url, healthchecks.io's convention): `<url>/start` when a
// tick begins, `<url>` when it ends well, `<url>/fail` with the reason as the body when it fails.
// The service outside the host alerts on a fail, and on silence. A ping never throws, never
// blocks a tick past `timeoutMs`, and never changes its exit; the URL is a secret: never logged.
import type { Logger } from '../logs/logger.js';

export type PingKind = 'start' | 'success' | 'fail';
export type PingDeps = { fetch: typeof fetch; logger: Logger; timeoutMs: number };

// Pure: the URL a kind of ping goes to.
export function pingTarget(url: string, kind: PingKind): string {
  const base = url.replace(/\/+$/, '');
  return kind === 'success' ? base : `${base}/${kind}`;
}

// Resolves true when the service answered 2xx; false otherwise (logged, without the URL).
export async function ping(url: string | undefined, kind: PingKind, body: string | null, deps: PingDeps): Promise<boolean> {
  if (!url) return false;
  try {
    const res = await deps.fetch(pingTarget(url, kind), {
      method: 'POST',
      body: (body ?? '').slice(0, 10_000),
      headers: { 'content-type': 'text/plain; charset=utf-8' },
      signal: AbortSignal.timeout(deps.timeoutMs),
    });
    await res.arrayBuffer().catch(() => null);
    if (res.ok) {
      deps.logger.debug({ event: 'ping', kind, status: res.status }, `monitor ping ${kind}: HTTP ${res.status}`);
      return true;
    }
    deps.logger.warn({ event: 'ping_failed', kind, status: res.status }, `monitor ping ${kind}: HTTP ${res.status} (monitor.ping_url; the tick goes on)`);
  } catch (err) {
    const e = err as Error & { cause?: { code?: string } };
    const why = e.name === 'TimeoutError' || e.name === 'AbortError' ? `no answer in ${deps.timeoutMs} ms` : (e.cause?.code ?? e.name);
    deps.logger.warn({ event: 'ping_failed', kind, error: why }, `monitor ping ${kind}: ${why} (monitor.ping_url; the tick goes on)`);
  }
  return false;
}
