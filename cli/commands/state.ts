// `nightshift state [--agent NAME]`: the session state a session would start with now.
import type { FullContext } from '../context.js';

export const help = `Usage: nightshift state [--agent NAME] [--json] [--config PATH]

The session state every session gets (with --append-system-prompt-file, and in
<vault>/.nightshift/session-state.md, and beside its transcript as <id>.state.md): the time, the
agent and the budget left today; identity (beliefs and values by salience x retrievability); open
threads; surprises and contradictions since the agent's last session; overdue memories and a wander
seeded by the date; the last sessions; git; health warnings. At most state.max_chars (default
12000) characters: a cut section says how much was left out. Faded and superseded memories are
never in it. When the agent's last session did not end ok, an ATTENTION section comes right after
Now (outcome, error, last tool calls, transcript, the anneal rule; marked recurring when the same
failure came back) and is never cut.
--json: {text, chars, max_chars, cut: [{section, lines, chars}], data}`;

export const stage = 'full';

export async function run({ config, flags, io, logger }: FullContext): Promise<number> {
  return (await import('../../daemon/tick/state-command.js')).stateCommand(config, flags, io, logger);
}
