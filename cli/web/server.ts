// The status page's server: node:http on 127.0.0.1 only (the host's loopback; a session runs in a
// network namespace of its own and cannot reach it), a random token as the path's first segment
// (so relative links keep it), compared in constant time. Read-only: GET and HEAD, nothing else.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export function newToken(): string {
  return randomBytes(24).toString('base64url');
}

// Both sides hashed first: equal lengths for timingSafeEqual, and no early exit on a length.
export function tokenMatches(given: string, token: string): boolean {
  const h = (s: string) => createHash('sha256').update(s).digest();
  return timingSafeEqual(h(given), h(token));
}

export type Route = { status: 200; page: 'main' } | { status: 200; page: 'session'; id: string } | { status: 403 | 404 | 405 };

// Pure: what a request gets. The method first (nothing here changes anything), then the token.
export function route(method: string | undefined, url: string | undefined, token: string): Route {
  if (method !== 'GET' && method !== 'HEAD') return { status: 405 };
  const path = (url ?? '/').split('?')[0];
  const [, first = '', ...rest] = path.split('/');
  if (!tokenMatches(first, token)) return { status: 403 };
  if (rest.length === 0) return { status: 404 };
  if (rest.length === 1 && rest[0] === '') return { status: 200, page: 'main' };
  if (rest.length === 2 && rest[0] === 'session' && rest[1]) {
    try {
      return { status: 200, page: 'session', id: decodeURIComponent(rest[1]) };
    } catch {
      return { status: 404 };
    }
  }
  return { status: 404 };
}

export type Pages = { main: () => Promise<string>; session: (id: string) => Promise<string | null> };

const HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  // No script runs on this page at all, whatever the text holds; nothing leaves it.
  'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
};

const TEXT: Record<number, string> = { 403: 'forbidden: the URL nightshift web printed holds the token', 404: 'not found', 405: 'only GET and HEAD: this page changes nothing', 500: 'the page cannot be made (see nightshift web\'s output)' };

export async function startWebServer(o: { token: string; port: number; pages: Pages; onError?: (err: unknown) => void }): Promise<{ url: string; server: http.Server; close: () => Promise<void> }> {
  const server = http.createServer((req, res) => {
    const r = route(req.method, req.url, o.token);
    const send = (status: number, body: string) => {
      res.writeHead(status, { ...HEADERS, ...(status === 405 ? { allow: 'GET, HEAD' } : {}), 'content-length': Buffer.byteLength(body) });
      res.end(req.method === 'HEAD' ? undefined : body);
    };
    if (r.status !== 200) return send(r.status, `${TEXT[r.status]}\n`);
    const made = r.page === 'main' ? o.pages.main() : o.pages.session(r.id);
    made.then((body) => (body === null ? send(404, `${TEXT[404]}\n`) : send(200, body)), (err) => {
      o.onError?.(err);
      send(500, `${TEXT[500]}\n`);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/${o.token}/`,
    server,
    close: () => new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
