// `nightshift logs [ID] [-f]`: today's log or a session's transcript (logs-view.ts reads them).
import type { FullContext } from '../context.js';
import { withStopSignal } from '../stop-signal.js';

export const help = `Usage: nightshift logs [SESSION-ID] [-f|--follow] [--config PATH]

Today's daily log (<log_dir>/YYYY-MM-DD.log, the day in budget.timezone): short human lines when
stdout is a terminal, the JSON lines otherwise. With a session id: its transcript as a
conversation (as \`show --transcript\`). -f follows: new lines as they come (the daily log moves on
to the next day's file at midnight) until Ctrl-C; a session is followed until it ends.`;

export const stage = 'full';
// A reader: what it logs (a Ctrl-C) must not land in the log it follows.
export const noLogFile = true;

export async function run({ config, positionals, flags, io, logger, deps }: FullContext): Promise<number> {
  const { logsCommand } = await import('./logs-view.js');
  const human = !!deps.stdoutIsTTY;
  const color = human && !deps.env.NO_COLOR;
  // Coloured lines carry our own escapes, so they bypass io.out's; humanLine escaped their text.
  const out = color && io.outPainted ? io.outPainted : io.out;
  return withStopSignal(logger, 'stopping', (signal) => logsCommand(config, positionals, flags, { out, human, color, logger, signal }));
}
