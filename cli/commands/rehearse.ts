// `nightshift rehearse`: the loopback imitation of the Anthropic API the tests use, served until
// Ctrl-C, with the two lines that point a site at it. A site rehearses offline: real CLI, real wall,
// real ledger, nothing billed.
import { randomBytes } from 'node:crypto';
import { EXIT, UsageError } from '../../core/errors.js';
import type { BareContext } from '../context.js';
import { noun } from '../../core/words.js';

export const help = `Usage: nightshift rehearse [--port N]

Serves an imitation of the Anthropic Messages API on 127.0.0.1 (an OS-chosen port, or --port) until
Ctrl-C, and prints the two lines to put in nightshift.env: ANTHROPIC_BASE_URL (its URL) and
ANTHROPIC_API_KEY (a key made for this run; the imitation refuses any other with a 401). Every
session then runs the real CLI in the real wall against it, offline and unbilled: a prompt gets a
short text answer (a prompt with SCENARIO=<name> picks one of the test scenarios). Take the two
lines out again for real use.`;

export const stage = 'bare';

const STOPS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

export async function run({ flags, io }: BareContext): Promise<number> {
  const port = flags.port === undefined ? 0 : Number(flags.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError(`Expected --port as a port number 0-65535, got \`${flags.port}\``);
  const { startFakeApi } = await import('../../rehearsal/fake-api.js');
  const key = `sk-rehearsal-${randomBytes(12).toString('hex')}`;
  const api = await startFakeApi({ keys: [key], port }).catch((err: NodeJS.ErrnoException) => {
    throw new UsageError(`Expected a free port, got ${port}: ${err.code ?? err.message}`);
  });
  io.out([
    `The API imitation listens on ${api.url} (loopback only; nothing is billed).`,
    'Put these two lines in nightshift.env (and take them out for real use):',
    `ANTHROPIC_BASE_URL=${api.url}`,
    `ANTHROPIC_API_KEY=${key}`,
    'Then: nightshift doctor; nightshift run <agent>. Ctrl-C stops it.',
  ].join('\n'));
  let stop: (s: NodeJS.Signals) => void = () => {};
  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    stop = resolve;
    for (const s of STOPS) process.on(s, stop);
  });
  for (const s of STOPS) process.off(s, stop);
  await api.close();
  io.out(`stopped (${signal}): ${api.requests.length} message ${noun(api.requests.length, 'request')} answered, ${api.unauthorized} refused`);
  return EXIT.OK;
}
