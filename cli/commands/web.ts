// `nightshift web [--port N]`: the status page, read-only, on 127.0.0.1 with a token in its URL.
import { EXIT, UsageError } from '../../core/errors.js';
import type { FullContext } from '../context.js';

export const help = `Usage: nightshift web [--port N] [--prefix DIR] [--config PATH]

Serves a read-only status page on 127.0.0.1 (an OS-chosen port, or --port) until Ctrl-C, and
prints its URL, which holds a random token made for this run: a request without it gets 403, so
another user of the host cannot read the page. Only GET and HEAD are answered (405 otherwise):
the page changes nothing. It needs no JavaScript and reloads itself each minute.
  now       each agent's next due time, hold or invalid file; the day's sessions and spend, and
            each subscription window, as bars (status --json)
  fires     the last 48 hours as a timeline coloured by what each fire did, and the expected
            ticks that left no fire (fires --json, status --json's tick_gaps)
  spend     cost per day for 30 days by agent, stacked, against max_usd_per_day, and the
            month's total (budget --days N --json)
  sessions  the last 50 (sessions --json), each opening its record and transcript (show)
  memory    the store's counts, open threads and contradiction candidates (memory stats --json)
Session text is shown as text, never as markup. --prefix DIR: where the timer is installed (as
for status).`;

export const stage = 'full';

const STOPS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

export async function run({ config, flags, io, logger, env }: FullContext): Promise<number> {
  const port = flags.port === undefined ? 0 : Number(flags.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError(`Expected --port as a port number 0-65535, got \`${flags.port}\``);
  const [{ startWebServer, newToken }, { pageData, sessionData }, { renderPage, renderSession }] = await Promise.all([
    import('../web/server.js'), import('../web/page-data.js'), import('../web/page.js'),
  ]);
  const web = await startWebServer({
    token: newToken(),
    port,
    pages: {
      main: async () => renderPage(await pageData(config, { logger, env, redact: io.redact, prefix: flags.prefix })),
      session: async (id) => {
        const s = await sessionData(config, id, logger);
        return s && renderSession(s.record, s.transcript);
      },
    },
    onError: (err) => logger.error({ event: 'web_page_failed', err }, `the status page could not be made: ${(err as Error).message}`),
  }).catch((err: NodeJS.ErrnoException) => {
    throw new UsageError(`Expected a free port, got ${port}: ${err.code ?? err.message}`);
  });
  io.out(`The status page (read-only, loopback only) is at ${web.url}\nThe URL holds its token: keep it to yourself. Ctrl-C stops it.`);
  let stop: (s: NodeJS.Signals) => void = () => {};
  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    stop = resolve;
    for (const s of STOPS) process.on(s, stop);
  });
  for (const s of STOPS) process.off(s, stop);
  await web.close();
  io.out(`stopped (${signal})`);
  return EXIT.OK;
}
