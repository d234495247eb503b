// The supervisor's per-session endpoints listen on 127.0.0.1, on a port the OS picks, or, for a
// walled session, on a unix socket in the session's folder that the wall's bridge serves inside
// the session's own network namespace (sessions/wall/bridge.ts).
import fs from 'node:fs';
import type http from 'node:http';
import type { AddressInfo } from 'node:net';

// A unix socket, the URL the session reaches it by, and how many connections it may hold open at
// once (limits.endpoint_requests): each buffers a body, so their number bounds the memory a
// session can pin in the supervisor.
export type Listen = { socket: string; url: string; maxConnections?: number };
// The bound where the session's config gives none (an endpoint on 127.0.0.1, unwalled).
export const DEFAULT_MAX_CONNECTIONS = 8;
// `url`: what the session is told; `local`: how the supervisor reaches its own endpoint.
export type Listening = { url: string; local: { url: string; socketPath?: string } };

// Resolves once listening; a listen error rejects.
export function listenEndpoint(server: http.Server, at?: Listen | null): Promise<Listening> {
  // Past it, a new connection is closed at once; the ones open are served.
  server.maxConnections = at?.maxConnections ?? DEFAULT_MAX_CONNECTIONS;
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    const done = (l: Listening) => {
      server.off('error', reject);
      resolve(l);
    };
    if (at) {
      fs.rmSync(at.socket, { force: true });
      server.listen(at.socket, () => {
        // Only the supervisor's own user (and the session it runs as) may connect.
        fs.chmodSync(at.socket, 0o600);
        done({ url: at.url, local: { url: at.url, socketPath: at.socket } });
      });
    } else {
      server.listen(0, '127.0.0.1', () => {
        const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
        done({ url, local: { url } });
      });
    }
  });
}
