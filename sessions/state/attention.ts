// The ATTENTION section's data: the agent's last session when it did not end ok, the tool calls it
// made last (read back from its transcript), and whether it is the same failure again. Reading the
// transcript's tail is the only I/O; the rest is pure over plain rows.
import fs from 'node:fs';
import { recurrenceOf, type AnnealPass, type FailureFacts } from './anneal.js';
import type { StateAttention } from './state.js';

export const TOOL_CALLS = 6;
const CALL_CHARS = 160;
// A transcript can be large: only its end is read for the last calls.
const TAIL_BYTES = 512 * 1024;

// Pure: the tool calls in stream-json lines, oldest first, each `Name {input}` cut to a glance.
export function toolCallsIn(lines: string[]): string[] {
  const out: string[] = [];
  for (const line of lines) {
    if (!line.includes('"tool_use"')) continue;
    let msg: any;
    try {
      msg = JSON.parse(line);
    } catch {
      continue;
    }
    if (msg?.type !== 'assistant' || !Array.isArray(msg.message?.content)) continue;
    for (const b of msg.message.content) {
      if (b?.type !== 'tool_use' || typeof b.name !== 'string') continue;
      const call = `${b.name} ${JSON.stringify(b.input ?? {})}`.replace(/\s+/g, ' ');
      out.push(call.length > CALL_CHARS ? `${call.slice(0, CALL_CHARS - 1)}…` : call);
    }
  }
  return out;
}

// The last `n` tool calls of a transcript; null when there is none to read.
export function lastToolCalls(file: string | null, n = TOOL_CALLS): string[] | null {
  if (!file) return null;
  let fd: number | null = null;
  try {
    fd = fs.openSync(file, 'r');
    const size = fs.fstatSync(fd).size;
    const start = Math.max(0, size - TAIL_BYTES);
    const buf = Buffer.alloc(size - start);
    fs.readSync(fd, buf, 0, buf.length, start);
    const lines = buf.toString('utf8').split('\n');
    // A tail that begins mid-line: its first line is a fragment.
    if (start > 0) lines.shift();
    return toolCallsIn(lines).slice(-n);
  } catch {
    return null;
  } finally {
    if (fd !== null) fs.closeSync(fd);
  }
}

export type AttentionRow = FailureFacts & { transcript: string | null; status?: string };

/**
 * Pure: the ATTENTION data for an agent whose sessions are `rowsNewestFirst` (the session about to
 * start left out), or null when its last session ended ok, is still running, or there is none.
 */
export function attentionOf(rowsNewestFirst: AttentionRow[], passes: AnnealPass[], toolCalls: string[] | null, threshold: number): StateAttention | null {
  const last = rowsNewestFirst[0];
  // An interrupted session asked for no root cause: the operator stopped it.
  if (!last || last.outcome === 'ok' || last.outcome === 'interrupted' || last.outcome === 'running' || last.status === 'running') return null;
  const r = recurrenceOf(last, rowsNewestFirst, passes, threshold);
  return {
    session: last.id,
    outcome: last.outcome,
    error: last.error,
    startedAt: last.started_at,
    transcript: last.transcript,
    toolCalls,
    recurring: r.recurring
      ? {
          earlier: r.earlier.map((s) => ({ session: s.id, startedAt: s.started_at, outcome: s.outcome, error: s.error })),
          passes: r.passes.map((p) => ({ id: p.id, at: p.at, session: p.session, symptom: p.symptom, cause: p.cause, fix: p.fix, test: p.test, complete: p.complete })),
        }
      : null,
  };
}
