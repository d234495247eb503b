// The PreToolUse guardrail, a pure decision over one tool call: writes and edits stay inside the
// vault and the configured extra dirs, and recursive deletes of `/`, `~`, `$HOME`, `..` or any path
// with `~` never run. A Bash command is read by a small shell lexer; what it cannot resolve (a
// variable, a substitution, a `cd` it cannot follow) counts as outside. Doubt blocks: a false block
// costs the agent one turn, a false allow can cost the machine. The rules live by family in
// guardrail/: where a write may land (write-paths.ts), the shell (shell.ts, shell-lexer.ts), deletes,
// the commands that write, git; the loop pre-block beside them (loop-pre-block.ts).
import path from 'node:path';
import { checkShell } from './guardrail/shell.js';
import { ALLOW, block, type GuardRoots, type ToolCall, type Verdict } from './guardrail/verdict.js';
import { outside } from './guardrail/write-paths.js';

// Tools that write a file named in their input.
const FILE_WRITERS: Record<string, string> = { Write: 'file_path', Edit: 'file_path', MultiEdit: 'file_path', NotebookEdit: 'notebook_path' };

// The guardrail's verdict on one call.
export function guard(call: ToolCall, roots: GuardRoots): Verdict {
  const cwd = typeof call.cwd === 'string' && path.isAbsolute(call.cwd) ? path.resolve(call.cwd) : path.resolve(roots.vault);
  const input = (call.tool_input ?? {}) as Record<string, unknown>;
  const field = FILE_WRITERS[call.tool_name];
  if (field) {
    const p = input[field];
    if (typeof p !== 'string' || !p) return block(`${call.tool_name} without a \`${field}\``);
    const why = outside(p, cwd, roots);
    return why ? block(`${call.tool_name} to ${JSON.stringify(p)}: ${why}`) : ALLOW;
  }
  if (call.tool_name === 'Bash') {
    const command = input.command;
    if (typeof command !== 'string') return block('Bash without a `command`');
    const why = checkShell(command, { cwd, roots }, 0);
    return why ? block(why) : ALLOW;
  }
  return ALLOW;
}
