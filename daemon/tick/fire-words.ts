// Pure: what a fire did, in words and an exit code, from what the tick saw (plain data). The tick's
// exit code is the one recorded: a due rule passed over because its agent file is invalid exits
// 78 (config) when nothing else failed, so OnFailure= fires; a skip (nothing due, a hold, a limit,
// locked) exits 0; `run` refuses what a tick skips (75).
import { EXIT } from '../../core/errors.js';
import type { FireAction, FireEnd, FireKind, PassedOver } from '../../budget/fires.js';
import type { RuleVerdict } from '../schedule/dispatch.js';

// How the start ended: what supervise returned, or what it threw.
export type FireEnding =
  | {
      result: {
        action: 'session' | 'skip' | 'dream';
        reason: string;
        limit: string | null;
        session: { id: string; outcome: string } | null;
        dream: { id: string; ok: boolean } | null;
        // The exit code of what ran (supervise.ts exitCodeOf).
        exit: number;
      };
    }
  | { error: { message: string; exitCode: number } };

export type FireFacts = {
  kind: FireKind;
  // The due rules dispatch passed over (dispatchPassedOver below).
  dispatch: PassedOver[];
  // The agent chosen (by dispatch, or the operator), and the session charged, when they were.
  chosen: { agent: string; rule: number | null } | null;
  charged: string | null;
} & FireEnding;

export type FireWords = Omit<FireEnd, 'ended_at'>;

// The exit codes that mean the start was refused before anything was charged (a limit, a lock, a
// full disk; a config, an agent file or a sandbox that cannot be used; a permission).
const REFUSALS: number[] = [EXIT.REFUSED, EXIT.CONFIG, EXIT.NOPERM];

// The rules dispatch passed over though their own terms (days, hours, runs, interval) held: a hold
// or an invalid agent file. A rule after the winner was never looked at and is not among them.
export function dispatchPassedOver(rules: RuleVerdict[]): PassedOver[] {
  return rules.filter((r) => r.passed).map((r) => ({ rule: r.index, agent: r.agent, cause: r.passed!, why: r.why }));
}

export function fireWords(f: FireFacts): FireWords {
  const invalid = f.dispatch.filter((p) => p.cause === 'invalid');
  const withInvalid = (exit: number) => (exit === EXIT.OK && invalid.length && f.kind === 'tick' ? EXIT.CONFIG : exit);
  const invalidNote = (exit: number) => (exit === EXIT.CONFIG && invalid.length && f.kind === 'tick' ? ` (exit 78: a due rule was passed over for an invalid agent file: ${invalid.map((p) => p.agent).join(', ')})` : '');
  const base = { agent: f.chosen?.agent ?? null, rule: f.chosen?.rule ?? null, session: f.charged, outcome: null as string | null };
  if ('error' in f) {
    const e = f.error;
    const action: FireAction = f.charged ? 'session' : REFUSALS.includes(e.exitCode) ? 'refused' : 'failed to start';
    const reason = f.charged ? `the session ${f.charged} was charged, then the ${f.kind} failed: ${e.message}` : e.message;
    return { ...base, action, reason, passed_over: f.dispatch, exit_code: e.exitCode };
  }
  const r = f.result;
  if (r.action === 'skip') {
    // The agent chosen and then refused (the day's budget, a usage window, a stop request).
    const refused: PassedOver[] = f.chosen && r.limit && r.limit !== 'lock'
      ? [{ rule: f.chosen.rule, agent: f.chosen.agent, cause: r.limit === 'max_window_utilization' ? 'window' : r.limit === 'stopped' ? 'stopped' : r.limit === 'busy' ? 'busy' : 'budget', why: r.reason }]
      : [];
    const passed = [...f.dispatch, ...refused];
    if (r.limit === 'lock') {
      const exit = f.kind === 'run' ? EXIT.REFUSED : withInvalid(EXIT.OK);
      return { ...base, action: 'locked', reason: r.reason + invalidNote(exit), passed_over: passed, exit_code: exit };
    }
    if (f.kind === 'run') return { ...base, action: 'refused', reason: r.reason, passed_over: passed, exit_code: EXIT.REFUSED };
    // Dispatch's reason already names the invalid file and the exit.
    const exit = withInvalid(EXIT.OK);
    return { ...base, action: 'skip', reason: r.reason, passed_over: passed, exit_code: exit };
  }
  const exit = withInvalid(r.exit);
  if (r.action === 'dream') {
    return { ...base, action: 'dream', session: r.dream?.id ?? null, outcome: r.dream ? (r.dream.ok ? 'ok' : 'failed') : null, reason: `dream ${r.dream?.ok ? 'ok' : 'failed'}: ${r.reason}${invalidNote(exit)}`, passed_over: f.dispatch, exit_code: exit };
  }
  const s = r.session;
  return { ...base, action: 'session', session: s?.id ?? f.charged, outcome: s?.outcome ?? null, reason: `${r.reason}: session ${s?.id ?? '?'} ended ${s?.outcome ?? 'unknown'}${invalidNote(exit)}`, passed_over: f.dispatch, exit_code: exit };
}
