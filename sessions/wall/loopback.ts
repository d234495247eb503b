// The supervisor's per-session endpoints listen on 127.0.0.1, on a port the OS picks.
import type http from 'node:http';
import type { AddressInfo } from 'node:net';

// Resolves with the base URL once listening; a listen error rejects.
export function listenOnLoopback(server: http.Server): Promise<string> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    });
  });
}
