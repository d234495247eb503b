// `nightshift hook pre-tool-use`: runs in an operator's own Claude Code. It needs no config and no
// env file (the config is read only for the guarded folders), and always exits 0.
import type { BareContext } from '../context.js';

export const help = `Usage: nightshift hook pre-tool-use [--config PATH]

nightshift's guardrail as a PreToolUse command hook for your own Claude Code. The payload comes on
stdin; a blocked call prints the hook's deny JSON on stdout (nothing for an allowed one). Blocked:
writes and edits outside the project folder, the config's vault and hooks.extra_dirs; rm -r of /,
~, $HOME, .. or any path with ~. A payload that is not JSON or lacks fields is logged on stderr and
allowed. Always exits 0. In .claude/settings.json:

  {"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": "nightshift hook pre-tool-use"}]}]}}

Sessions nightshift runs get the same guardrail over HTTP from the supervisor itself, with the loop
pre-block ("blocked: repeat ...") on top.`;

export const stage = 'bare';

export async function run({ positionals, flags, io, deps }: BareContext): Promise<number> {
  const { configPath, loadConfig } = await import('../../config/config.js');
  return (await import('../../sessions/hooks/hook-command.js')).hookCommand(positionals, {
    stdin: process.stdin, stdout: deps.stdout, stderr: deps.stderr, cwd: deps.cwd, redact: io.redact,
    loadRoots: async () => {
      const c = loadConfig(configPath(flags.config, deps.env, deps.cwd));
      return { vault: c.vault, extraDirs: c.hooks.extra_dirs };
    },
  });
}
