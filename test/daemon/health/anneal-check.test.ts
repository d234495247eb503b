// A recurring failure, seen from outside the session: doctor warns of it and the Discord report of
// such a session says so; an unrelated failure does neither.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { recurringCheck, recurringNote } from '../../../daemon/health/anneal-check.js';
import { sessionReport } from '../../../report/embed.js';
import type { AnnealPass } from '../../../sessions/state/anneal.js';

const at = (h: number) => new Date(Date.UTC(2026, 11, 1, 10) - h * 3_600_000).toISOString();
const row = (id: string, outcome: string, error: string | null, h: number) => ({ id, agent: 'researcher', outcome, error, started_at: at(h) });
const pass = (id: number, session: string, h: number, symptom: string): AnnealPass => ({ id, at: at(h), agent: 'researcher', session, symptom, cause: 'c', fix: 'raised the timeout', test: 't', complete: true });
const similar = [row('S3', 'timeout', 'no result after 30m: npm test hung', 1), row('S2', 'timeout', 'no result after 30m: npm test hung', 2), row('S1', 'ok', null, 3)];
const unrelated = [row('S3', 'loop', 'repeat: Read notes/index.md x5', 1), row('S2', 'timeout', 'no result after 30m: npm test hung', 2)];

describe('recurring failures outside the session', () => {
  test('doctor warns of a recurring failure, and not of an unrelated one (the control)', () => {
    const c = recurringCheck(similar, [pass(1, 'S3', 1, 'npm test hangs')], 0.5);
    assert.equal(c.status, 'warn');
    assert.match(c.detail, /researcher: its last session S3 ended timeout like 1 earlier one after 1 anneal pass\b/);
    assert.equal(recurringCheck(unrelated, [], 0.5).status, 'ok');
  });

  test('doctor warns when a new pass has the symptom of an earlier one, though the session ended ok', () => {
    const rows = [row('S4', 'ok', null, 0), ...similar];
    const passes = [pass(1, 'S2', 2, 'npm test hangs on the watcher'), pass(2, 'S4', 0, 'npm test hangs on the watcher again')];
    assert.equal(recurringCheck(rows, passes, 0.5).status, 'warn');
    assert.equal(recurringCheck(rows, [passes[1]], 0.5).status, 'ok', 'one pass alone is not recurring');
  });

  test('the Discord report of a recurring session says so; of an unrelated one it does not', () => {
    const facts = (s: ReturnType<typeof row>, recurring: string | null) =>
      sessionReport({ ...s, model: 'sonnet', cost_usd: 0.1, cost_estimated: false, turns: 3, duration_ms: 1000, ended_at: at(0), result: null, recurring }, null, { day: '2026-12-01', sessions: 3, max_sessions: 12, cost_usd: 1, max_usd: 20 }, { redact: (x) => x });
    const note = recurringNote(similar[0], similar, [pass(1, 'S3', 1, 'npm test hangs')], 0.5);
    assert.ok(note);
    const field = facts(similar[0], note).embed.fields.find((f) => f.name === 'Recurring');
    assert.match(field?.value ?? '', /the same failure again: 1 earlier session of researcher ended timeout .*the earlier fix treated a symptom/);
    const none = recurringNote(unrelated[0], unrelated, [], 0.5);
    assert.equal(none, null);
    assert.equal(facts(unrelated[0], none).embed.fields.find((f) => f.name === 'Recurring'), undefined);
  });
});
