// What the bridge refused at the API's socket inside the wall (a peer that is not the CLI: see
// sessions/wall/bridge.ts), as the supervisor hears it: the bridge writes one line per refused
// connection on a socket of ours in the folder the wall hides, so only the bridge reaches it, and
// each is counted and logged here.
import fs from 'node:fs';
import net from 'node:net';
import type { Logger } from '../../logs/logger.js';
import { LineSplitter } from '../stream/line-splitter.js';
import { parseRefusal } from './bridge.js';

export type ApiPeerStats = { refused: number };

// A session's tool can connect tens of thousands of times a second (measured: 47118 in 4 s, each
// refused and reported): the first few are logged one by one, the rest only counted, and the
// session's end logs the total (daemon/tick/session.ts), so the supervisor's log stays bounded.
export const LOGGED_REFUSALS = 10;

export type ApiPeers = { stats: ApiPeerStats; close(): Promise<void> };

// Listens on `socket` for the bridge's reports; resolves once listening.
export async function listenApiPeers(socket: string, logger: Logger): Promise<ApiPeers> {
  const stats: ApiPeerStats = { refused: 0 };
  const open = new Set<net.Socket>();
  const server = net.createServer((c) => {
    open.add(c);
    c.on('close', () => open.delete(c));
    c.on('error', () => {});
    const lines = new LineSplitter(1024);
    c.setEncoding('utf8').on('data', (d: string) => lines.push(d, (line, truncated) => {
      // The tail of a line cut off is no line the bridge wrote (a CLI pointed here by a link).
      const r = truncated ? null : parseRefusal(line);
      if (!r) return;
      stats.refused++;
      if (stats.refused > LOGGED_REFUSALS) {
        if (stats.refused === LOGGED_REFUSALS + 1) logger.warn({ event: 'api_peer_refused_more' }, `the wall refused more than ${LOGGED_REFUSALS} API connections: further ones are counted, not logged`);
        return;
      }
      logger.warn({ event: 'api_peer_refused', pid: r.pid, comm: r.comm }, `the wall refused an API connection from pid ${r.pid} (${r.comm}): only the CLI may call the API`);
    }));
  });
  fs.rmSync(socket, { force: true });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socket, () => {
      server.off('error', reject);
      fs.chmodSync(socket, 0o600);
      resolve();
    });
  });
  return {
    stats,
    close: () => new Promise<void>((resolve) => {
      for (const c of open) c.destroy();
      server.close(() => resolve());
    }),
  };
}
