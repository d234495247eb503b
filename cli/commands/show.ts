// `nightshift show <session-id> [--transcript]`: one session from the ledger (sessions.ts shows it).
import { positional } from '../args.js';
import type { FullContext } from '../context.js';
import { showCommand } from './sessions.js';

export const help = `Usage: nightshift show <session-id> [--transcript] [--json] [--config PATH]

One session from the ledger, shaped like \`run --json\`. A unique start of an id is enough
(\`nightshift show 20261201T0300\`); one shared by several sessions lists them.
  --transcript   the conversation: the assistant's text, each tool call and its result (shortened),
                 API retries and rate limits, and the result. With --json: the raw JSONL.`;

export const stage = 'full';

export async function run({ config, positionals, flags, io, logger }: FullContext): Promise<number> {
  return showCommand(config, positional(positionals, 'show', 'session-id'), flags, io, logger);
}
