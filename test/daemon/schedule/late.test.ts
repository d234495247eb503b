import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { lateness } from '../../../daemon/schedule/late.js';
import { backoffReport, sessionReport } from '../../../report/embed.js';

const at = (iso: string) => new Date(iso);
const id = (t: string) => t;

describe('late runs and backoff reports', () => {
  test('a run that starts well after its slot is late; on time (within 10 minutes) it is not', () => {
    assert.equal(lateness({ slot: at('2026-12-01T06:00:00Z'), startedAt: at('2026-12-01T09:10:00Z'), uptimeMs: null, byTimer: false }), 'late: started 190 min after its 2026-12-01T06:00:00Z slot');
    assert.equal(lateness({ slot: at('2026-12-01T06:00:00Z'), startedAt: at('2026-12-01T06:02:00Z'), uptimeMs: null, byTimer: false }), null);
  });

  test('a timer firing within minutes of boot is a catch-up; the same uptime without a timer is not', () => {
    assert.match(lateness({ slot: null, startedAt: at('2026-12-01T09:00:00Z'), uptimeMs: 40_000, byTimer: true }) ?? '', /^late: the timer caught up/);
    assert.equal(lateness({ slot: null, startedAt: at('2026-12-01T09:00:00Z'), uptimeMs: 40_000, byTimer: false }), null);
    assert.equal(lateness({ slot: null, startedAt: at('2026-12-01T09:00:00Z'), uptimeMs: 3_600_000, byTimer: true }), null);
  });

  test('the session report says late in its title and a field', () => {
    const s = { id: 's1', agent: 'a', outcome: 'ok', model: 'sonnet', cost_usd: 0.0135, cost_estimated: false, turns: 2, duration_ms: 1000, ended_at: null, result: null, error: null };
    const day = { day: '2026-12-01', sessions: 1, max_sessions: 12, cost_usd: 0.0135, max_usd: 20 };
    const late = sessionReport(s, null, day, { redact: id, late: 'late: started 190 min after its slot' });
    assert.equal(late.embed.title, 'a: ok (late)');
    assert.ok(late.embed.fields.some((f) => f.name === 'Late'));
    assert.equal(sessionReport(s, null, day, { redact: id }).embed.title, 'a: ok');
    assert.ok(late.embed.fields.some((f) => f.value.startsWith('$0.01')), 'money as money');
  });

  test('backoff start and recovery each make one report with its own key', () => {
    const started = backoffReport({ agent: 'a', change: 'started', failures: 3, until: '2026-12-01T10:00:00Z', session: 's3' }, { redact: id, at: at('2026-12-01T09:00:00Z') });
    const recovered = backoffReport({ agent: 'a', change: 'recovered', failures: 4, until: null, session: 's5' }, { redact: id, at: at('2026-12-01T12:00:00Z') });
    assert.equal(started.embed.title, 'a: backed off');
    assert.match(started.embed.description!, /3 failures in a row: a waits until 2026-12-01T10:00:00Z/);
    assert.equal(recovered.embed.title, 'a: recovered');
    assert.notEqual(started.key, recovered.key);
  });
});
