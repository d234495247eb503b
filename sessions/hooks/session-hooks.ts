// One session's hooks: the hook server with the guardrail and the loop pre-block deciding, the
// settings file that installs it, and the signal that ends the session if the server stops
// answering. The pre-block keeps its own history of the calls the hook saw: every tool call passes
// PreToolUse before it runs, in the order the stream reports it, so it mirrors the loop detector's
// history without racing the stdout pipe.
import os from 'node:os';
import { guard } from './guardrail.js';
import { loopPreBlock } from './guardrail/loop-pre-block.js';
import type { GuardRoots, Verdict } from './guardrail/verdict.js';
import { startHookServer, hookSettings, writeSettingsFile, type HookServer, type PreToolUse } from './hook-server.js';
import { toolKey, type LoopLimits } from '../stream/loop-detector.js';
import type { Listen } from '../../core/loopback.js';
import { counted } from '../../core/words.js';
import type { TraceSpan } from '../../core/trace.js';

type Log = { warn(obj: object, msg?: string): void; debug(obj: object, msg?: string): void; error(obj: object, msg?: string): void; info(obj: object, msg?: string): void };

export type SessionHooks = {
  // Extra CLI arguments: `--settings FILE`.
  args: string[];
  server: HookServer;
  // Aborted when the hook server stopped answering: the session must end.
  dead: AbortSignal;
  close(): Promise<void>;
};

// Pure: the guardrail first, then the loop pre-block; the call joins the history either way (the
// stream reports it, blocked or not).
export function decider(roots: GuardRoots, limits: LoopLimits): (call: PreToolUse) => Verdict {
  const history: string[] = [];
  const keep = Math.max(limits.window, 4 * limits.cycleRepeats) + 1;
  return (call) => {
    const v = guard(call, roots);
    // The rule family that refused (the span's nightshift.tool.rule).
    const looped = v.allow ? loopPreBlock(history, call, limits) : v;
    const out: Verdict = looped.allow ? looped : { ...looped, rule: v.allow ? 'loop' : 'guardrail' };
    history.push(toolKey(call.tool_name, call.tool_input));
    if (history.length > keep) history.shift();
    return out;
  };
}

export async function startSessionHooks(o: {
  vault: string;
  extraDirs: string[];
  limits: LoopLimits;
  timeoutMs: number;
  logger: Log;
  redact: (text: string) => string;
  home?: string | null;
  pingMs?: number;
  // Where the settings file goes: a folder the sandboxed CLI can read (the session's own).
  dir?: string;
  listen?: Listen | null;
  trace?: TraceSpan;
}): Promise<SessionHooks> {
  const server = await startHookServer({
    listen: o.listen,
    decide: decider({ vault: o.vault, extraDirs: o.extraDirs, home: o.home ?? os.homedir() }, o.limits),
    logger: o.logger,
    // The token is a secret of this session: never in a log line.
    redact: (t) => o.redact(t),
    pingMs: o.pingMs,
    trace: o.trace,
  });
  let settings: { file: string; remove(): void };
  try {
    settings = writeSettingsFile(hookSettings(server, Math.max(1, Math.round(o.timeoutMs / 1000)), !!o.trace?.traceId), o.dir);
  } catch (err) {
    await server.close();
    throw err;
  }
  o.logger.info({ event: 'hooks_ready', url: server.url }, `hook server on ${server.url}`);
  return {
    args: ['--settings', settings.file],
    server,
    dead: server.dead,
    close: async () => {
      try {
        settings.remove();
      } finally {
        await server.close();
      }
      const s = server.stats;
      const sorted = [...s.decideMs].sort((a, b) => a - b);
      o.logger.info(
        { event: 'hooks_done', requests: s.requests, blocked: s.blocked, refused: s.refused, errors: s.errors, decide_p50_ms: sorted.length ? +sorted[Math.floor(sorted.length / 2)].toFixed(3) : null },
        `hooks: ${counted(s.requests, 'call')}, ${s.blocked} blocked`,
      );
    },
  };
}
