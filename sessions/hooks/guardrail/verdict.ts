// What every rule of the guardrail decides over, and what it answers: one tool call, the roots a
// write may land in, and a verdict. Doubt blocks: a false block costs the agent one turn, a false
// allow can cost the machine.

export type ToolCall = { tool_name: string; tool_input: unknown; cwd?: string | null };
// Where writes may land. `home` is what `~` and `$HOME` mean (never a root by itself).
export type GuardRoots = { vault: string; extraDirs: string[]; home?: string | null };
// rule: the family that refused (guardrail, loop), for the call's trace span.
export type Verdict = { allow: true } | { allow: false; reason: string; rule?: string };

export const ALLOW: Verdict = { allow: true };
export const block = (reason: string): Verdict => ({ allow: false, reason: `blocked by nightshift: ${reason}` });
