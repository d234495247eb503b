// Replays what the real CLI 2.1.197 wrote (saved samples) through the tracker and classifier.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { LineSplitter } from '../../../sessions/stream/line-splitter.js';
import { classify } from '../../../sessions/run/outcome.js';
import { StreamTracker, type TrackerEvent } from '../../../sessions/stream/stream-tracker.js';
import { FIXTURES } from '../../helpers.js';

const limits = { maxRepeats: 5, window: 20, cycleRepeats: 3 };

// Every event the tracker returned is pushed to `events`, for the tests that count them.
function replay(name: string, model: string | null = null, events: TrackerEvent[] = []): StreamTracker {
  const tracker = new StreamTracker(limits, model);
  const text = fs.readFileSync(path.join(FIXTURES, 'claude-cli', name), 'utf8');
  const splitter = new LineSplitter();
  const feed = (l: string) => events.push(...tracker.feedLine(l));
  // In odd-sized chunks, as a pipe delivers them.
  for (let i = 0; i < text.length; i += 777) splitter.push(text.slice(i, i + 777), feed);
  splitter.end(feed);
  return tracker;
}

// The fixture's `result` lines, read without the tracker.
const resultLines = (name: string) =>
  fs.readFileSync(path.join(FIXTURES, 'claude-cli', name), 'utf8').split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l)).filter((m) => m.type === 'result');

const outcomeOf = (t: StreamTracker, exitCode = 0) => classify({ spawnError: null, stopReason: null, result: t.result, exitCode, signal: null }).outcome;

describe('stream tracker on recorded CLI output', () => {
  test('a tool session: cost and turns from the result, one tool call', () => {
    const t = replay('stream-sample.jsonl');
    assert.equal(outcomeOf(t), 'ok');
    assert.deepEqual(t.cost(), { usd: 0.015, estimated: false });
    assert.equal(t.turns(), 2);
    assert.equal(t.toolCalls, 1);
    assert.equal(t.garbage, 0);
    assert.equal(t.result?.result, 'Tool said: "hi". Done.');
  });

  test('without partial messages each new answer is a cost event (the ledger\'s progress, the ceiling\'s check), once per message', () => {
    const events: TrackerEvent[] = [];
    const t = replay('stream-sample.jsonl', null, events);
    assert.equal(fs.readFileSync(path.join(FIXTURES, 'claude-cli', 'stream-sample.jsonl'), 'utf8').includes('stream_event'), false, 'a sample without partial messages');
    const ids = new Set(fs.readFileSync(path.join(FIXTURES, 'claude-cli', 'stream-sample.jsonl'), 'utf8').split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l)).filter((m) => m.type === 'assistant' && m.message?.usage).map((m) => m.message.id));
    assert.ok(ids.size >= 1);
    assert.equal(events.filter((e) => e.type === 'cost').length, ids.size);
    assert.ok(t.estimatedCost() > 0);
    // With partial messages the stream's own events are the news: no second event per answer.
    const partial: TrackerEvent[] = [];
    replay('stream-include-partial-messages.jsonl', null, partial);
    const lines = fs.readFileSync(path.join(FIXTURES, 'claude-cli', 'stream-include-partial-messages.jsonl'), 'utf8').split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l));
    const usageEvents = lines.filter((m) => m.type === 'stream_event' && (m.event?.type === 'message_start' || m.event?.type === 'message_delta')).length;
    assert.equal(partial.filter((e) => e.type === 'cost').length, usageEvents);
  });

  test('partial messages give a running estimate that matches the CLI\'s own total', () => {
    const t = replay('stream-include-partial-messages.jsonl');
    // The init line says claude-opus-4-8[1m]: $5/$25, 1000 in + 100 out.
    assert.equal(t.estimatedCost().toFixed(6), '0.007500');
    assert.equal(t.cost().usd, 0.0075);
  });

  test('max turns, a max budget and an interrupted tool classify as they should', () => {
    assert.equal(outcomeOf(replay('stream-error-max-turns.jsonl'), 1), 'max_turns');
    // The CLI's num_turns (2) counts the turn it refused to take: one message was answered.
    assert.equal(replay('stream-error-max-turns.jsonl').turns(), 1);
    assert.equal(outcomeOf(replay('stream-sigint-during-tool.jsonl'), 1), 'error');
  });

  test('an API error after retries is not ok although its subtype is success (a 429 and a 500: error, on the stream\'s word alone)', () => {
    const t = replay('stream-api-error-429-retries.jsonl');
    assert.equal(t.result?.subtype, 'success');
    // rate_limited only with the proxy's relay of the 429 beside it (test/sessions/run/outcome.test.ts).
    assert.equal(outcomeOf(t, 1), 'error');
    // No call was answered: no turn, though the CLI's num_turns says 1 (control: uncapped, 1).
    assert.equal(t.result?.num_turns, 1);
    assert.equal(t.turns(), 0);
    const r = JSON.parse(fs.readFileSync(path.join(FIXTURES, 'claude-cli', 'json-api-error-500.json'), 'utf8'));
    const c = classify({ spawnError: null, stopReason: null, result: r, exitCode: 1, signal: null });
    assert.equal(c.outcome, 'error');
    assert.match(c.error!, /API error 500/);
    const budget = JSON.parse(fs.readFileSync(path.join(FIXTURES, 'claude-cli', 'json-error-max-budget.json'), 'utf8'));
    assert.equal(classify({ spawnError: null, stopReason: null, result: budget, exitCode: 1, signal: null }).outcome, 'budget');
  });

  test('a stop asked for is interrupted, whatever the CLI said after it; a run lock taken from us is an error', () => {
    const ended = (stopDetail: string) => classify({ spawnError: null, stopReason: 'canceled', stopDetail, result: null, exitCode: 130, signal: null });
    assert.deepEqual(ended('SIGINT'), { outcome: 'interrupted', error: 'ended because nightshift was asked to stop (SIGINT)' });
    assert.equal(ended('daemon shutdown').outcome, 'interrupted');
    assert.deepEqual(ended('lock /srv/state/run lost'), { outcome: 'error', error: "ended because nightshift's lock /srv/state/run lost" });
  });

  test('after a non-streaming fallback, tokens come from modelUsage, not the zeroed usage', () => {
    const t = replay('stream-nonstreaming-fallback.jsonl');
    assert.equal(outcomeOf(t), 'ok');
    assert.deepEqual(t.tokens(), { input: 1000, output: 100, cacheRead: 0, cacheWrite: 0 });
  });

  test('every recorded sample parses with no garbage and yields its one result line as exactly one result event', () => {
    const files = fs.readdirSync(path.join(FIXTURES, 'claude-cli')).filter((f) => f.endsWith('.jsonl'));
    assert.ok(files.length >= 13, `Expected the recorded samples, got ${files.length}`);
    for (const f of files) {
      const events: TrackerEvent[] = [];
      const t = replay(f, null, events);
      assert.equal(t.garbage, 0, f);
      // Every sample the CLI recorded ends with a result line (the no-result endings are tested below).
      const lines = resultLines(f);
      assert.equal(lines.length, 1, `${f}: Expected one result line in the sample, got ${lines.length}`);
      const results = events.flatMap((e) => (e.type === 'result' ? [e.result] : []));
      assert.equal(results.length, 1, `${f}: Expected exactly one result event, got ${results.length}`);
      assert.deepEqual(results[0], lines[0], f);
      assert.deepEqual(t.result, lines[0], f);
    }
  });

  test('a stream that stalled 300 s and fell back to non-streaming still ends ok with the CLI\'s own cost and tokens', () => {
    const t = replay('stream-stall-300s-fallback.jsonl');
    assert.equal(outcomeOf(t), 'ok');
    assert.equal(t.result?.result, 'hi from the fake API');
    assert.deepEqual(t.cost(), { usd: 0.0075, estimated: false });
    assert.deepEqual(t.tokens(), { input: 1000, output: 100, cacheRead: 0, cacheWrite: 0 });
    assert.equal(t.turns(), 1);
    assert.equal(t.lastText, 'hi from the fake API');
  });

  test('garbage lines are counted, never fatal, and the session still classifies', () => {
    const t = new StreamTracker(limits);
    const lines = fs.readFileSync(path.join(FIXTURES, 'claude-cli', 'stream-sample.jsonl'), 'utf8').trim().split('\n');
    const noisy = ['Warning: something odd', lines[0], '{"truncated": ', '[1,2,3]', '42', '{"no":"type"}', ...lines.slice(1, -1), '\u0000\u0001binary', lines.at(-1)!];
    for (const l of noisy) t.feedLine(l);
    assert.equal(t.garbage, 6);
    assert.equal(outcomeOf(t), 'ok');
  });

  test('a stream that ends with no result line is a failure even with exit code 0', () => {
    // As SIGINT while a request is in flight ends the CLI: init, then nothing, exit code 0.
    const t = new StreamTracker(limits);
    const [init] = fs.readFileSync(path.join(FIXTURES, 'claude-cli', 'stream-sigint-during-retry.jsonl'), 'utf8').split('\n');
    assert.deepEqual(t.feedLine(init), []);
    assert.equal(t.result, null);
    const c = classify({ spawnError: null, stopReason: null, result: t.result, exitCode: 0, signal: null });
    assert.equal(c.outcome, 'error');
    assert.equal(c.error, 'the CLI ended (exit code 0) without a result line');
    assert.deepEqual(t.cost(), { usd: 0, estimated: true });
  });

  test('SIGINT during a retry backoff writes an error_during_execution result with exit code 0: an error', () => {
    const events: TrackerEvent[] = [];
    const t = replay('stream-sigint-during-retry.jsonl', null, events);
    assert.equal(t.result?.subtype, 'error_during_execution');
    assert.equal(t.result?.is_error, true);
    assert.equal(t.result?.terminal_reason, 'aborted_streaming');
    assert.deepEqual(events.map((e) => e.type), ['result']);
    const c = classify({ spawnError: null, stopReason: null, result: t.result, exitCode: 0, signal: null });
    assert.deepEqual(c, { outcome: 'error', error: '[ede_diagnostic] result_type=user last_content_type=n/a stop_reason=null' });
    assert.deepEqual(t.cost(), { usd: 0, estimated: false });
    // The CLI's num_turns says 2; no call was ever answered, so no turn (as the proxy would say).
    assert.equal(t.result?.num_turns, 2);
    assert.equal(t.turns(), 0);
    assert.equal(t.apiCalls, 0);
  });

  test('without partial messages the estimate uses assistant usage once per message id', () => {
    const t = replay('stream-sample.jsonl', 'claude-sonnet-5');
    t.result = null;
    // Two API messages, each 1000 in / 1 out as seen on assistant lines (not final).
    assert.equal(t.cost().estimated, true);
    assert.equal(t.cost().usd.toFixed(6), ((2 * 1000 * 5 + 2 * 1 * 25) / 1e6).toFixed(6));
  });
});

describe('line splitter', () => {
  test('an over-long line is cut and flagged instead of held', () => {
    const s = new LineSplitter(10);
    const out: Array<[string, boolean]> = [];
    s.push('x'.repeat(25), (l, tr) => out.push([l, tr]));
    s.push('tail\nok\n', (l, tr) => out.push([l, tr]));
    assert.deepEqual(out, [['tail', true], ['ok', false]]);
  });
});

test('the CLI retrying the API shows on the live line, and a call that answers clears it', async () => {
  const { liveText } = await import('../../../logs/live-line.js');
  const t = replay('stream-api-error-429-retries.jsonl');
  assert.deepEqual(t.retry, { attempt: 2, max: 2, status: 429 });
  const line = liveText({ agent: 'gardener', startedAt: 0, turns: 0, usd: 0, lastTool: null, retry: t.retry }, 5000, 200);
  assert.match(line, /API retry 2\/2 \(429\)/);
  t.feed({ type: 'stream_event', event: { type: 'message_start', message: { usage: { input_tokens: 1 } } } });
  assert.equal(t.retry, null);
  // Without partial messages (nightshift's own runs) the answer's assistant line clears it; the
  // CLI's own `<synthetic>` one (its "API Error" text, as in the replay above) does not.
  const plain = replay('stream-api-error-429-retries.jsonl');
  plain.feed({ type: 'assistant', message: { id: 'msg_synthetic_2', model: '<synthetic>', content: [{ type: 'text', text: 'API Error: 429' }] } });
  assert.deepEqual(plain.retry, { attempt: 2, max: 2, status: 429 });
  plain.feed({ type: 'assistant', message: { id: 'msg_answered', model: 'claude-sonnet-5', content: [{ type: 'text', text: 'hi' }], usage: { input_tokens: 1, output_tokens: 1 } } });
  assert.equal(plain.retry, null);
  assert.doesNotMatch(liveText({ agent: 'gardener', startedAt: 0, turns: 1, usd: 0, lastTool: null, retry: t.retry }, 5000, 200), /retry/);
});
