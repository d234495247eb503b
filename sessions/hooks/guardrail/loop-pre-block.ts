// The loop pre-block: a call the loop detector would flag, or whose next repeat it would, is
// refused with the reason, so the agent is told before the supervisor ends the session as a loop.
import { LoopDetector, toolKey, type LoopLimits } from '../../stream/loop-detector.js';
import { ALLOW, type Verdict } from './verdict.js';

// The loop pre-block: this call is refused when the loop detector would flag it, or would flag the
// call that continues it (the same call again, or the next step of a cycle), so the agent is told
// before the supervisor ends the session. `history` is the keys of the calls before this one.
export function loopPreBlock(history: readonly string[], call: { tool_name: string; tool_input: unknown }, limits: LoopLimits): Verdict {
  const key = toolKey(call.tool_name, call.tool_input);
  const keep = Math.max(limits.window, 4 * limits.cycleRepeats) + 1;
  const seq = [...history.slice(-keep), key];
  const flagsAfter = (next: string | null) => {
    const d = new LoopDetector(limits);
    let v = null;
    for (const k of seq) v = pushKey(d, k);
    if (v) return v;
    return next === null ? null : pushKey(d, next);
  };
  const now = flagsAfter(null);
  const nextCandidates = new Set([key, ...[2, 3, 4].map((p) => seq[seq.length - p]).filter((k): k is string => k !== undefined)]);
  let verdict = now;
  for (const next of nextCandidates) {
    if (verdict) break;
    verdict = flagsAfter(next);
  }
  if (!verdict) return ALLOW;
  const shown = key.length > 160 ? `${key.slice(0, 160)}…` : key;
  const count = seq.slice(-limits.window).filter((k) => k === key).length;
  const what = verdict.kind === 'cycle' ? `your last calls repeat a cycle of ${verdict.period} (this is one step of it: ${shown})` : `you made this exact call (${shown}) ${count} times in the last ${limits.window} tool calls`;
  return { allow: false, reason: `blocked: repeat: ${what}. One more repeat and nightshift ends this session as a loop. Do something different, or finish.` };
}

// LoopDetector keys by (name, input); a key is already that pair joined, so split it back.
function pushKey(d: LoopDetector, key: string) {
  const i = key.indexOf(' ');
  return d.push(key.slice(0, i), { k: key.slice(i + 1) });
}
