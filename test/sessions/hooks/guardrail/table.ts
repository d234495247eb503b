// The guardrail's tables, one per rule family: every dangerous call is blocked (zero false allows),
// every harmless one allowed, and any false block is reported by name. Each row goes through
// guard(), the composed guardrail, as the hook calls it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { guard } from '../../../../sessions/hooks/guardrail.js';

export type Call = { tool_name: string; tool_input: unknown; cwd?: string };
export type Row = [string, Call];

export const roots = { vault: '/srv/vault', extraDirs: ['/srv/shared'], home: '/home/ns' };
export const bash = (command: string): Call => ({ tool_name: 'Bash', tool_input: { command }, cwd: '/srv/vault' });

export function guardTable(dangerous: Row[], harmless: Row[]): void {
  test(`blocks every one of ${dangerous.length} dangerous calls and allows ${harmless.length} harmless ones`, (t) => {
    const falseAllows = dangerous.filter(([, c]) => guard(c, roots).allow).map(([n]) => n);
    const falseBlocks = harmless.filter(([, c]) => !guard(c, roots).allow).map(([n, c]) => `${n}: ${(guard(c, roots) as { reason: string }).reason}`);
    t.diagnostic(`${dangerous.length + harmless.length} cases: ${falseAllows.length} false allows, ${falseBlocks.length} false blocks`);
    for (const b of falseBlocks) t.diagnostic(`false block: ${b}`);
    assert.ok(dangerous.length > 0 && harmless.length > 0, 'the table has both kinds of rows');
    assert.deepEqual(falseAllows, [], 'zero false allows');
    assert.deepEqual(falseBlocks, []);
  });
}
