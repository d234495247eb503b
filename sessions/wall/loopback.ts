// The supervisor's per-session endpoints listen on 127.0.0.1, on a port the OS picks, or, for a
// walled session, on a unix socket in the session's folder that the wall's bridge serves inside
// the session's own network namespace (sessions/wall/bridge.ts).
import fs from 'node:fs';
import type http from 'node:http';
import type { AddressInfo } from 'node:net';

// A unix socket, and the URL the session reaches it by.
export type Listen = { socket: string; url: string };
// `url`: what the session is told; `local`: how the supervisor reaches its own endpoint.
export type Listening = { url: string; local: { url: string; socketPath?: string } };

// Resolves once listening; a listen error rejects.
export function listenEndpoint(server: http.Server, at?: Listen | null): Promise<Listening> {
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
