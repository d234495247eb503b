// The self-annealing loop: a failed session gives the next state an ATTENTION section first (never
// cut), ANNEAL: lines of the session's own words land in the log, and the same failure coming back
// is marked recurring with the earlier passes and their fixes.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test, type TestContext } from 'node:test';
import Database from 'better-sqlite3';
import { Ledger } from '../../../budget/ledger.js';
import { validateConfig } from '../../../config/config.js';
import type { Config } from '../../../config/schema.js';
import { memoryDbPath } from '../../../memory/store/db-path.js';
import { openDatabase } from '../../../memory/store/schema.js';
import { MemoryStore } from '../../../memory/store.js';
import { parseAnneal, passFromRow, type AnnealPass } from '../../../sessions/state/anneal.js';
import { attentionOf, lastToolCalls, type AttentionRow } from '../../../sessions/state/attention.js';
import { leaveBehind } from '../../../sessions/capture/capture.js';
import { prepareSessionState } from '../../../sessions/state/session-state.js';
import { readPasses } from '../../../sessions/state/state-data.js';
import { renderState, stateSections, type StateData } from '../../../sessions/state/state.js';
import { nightshift, tempDir } from '../../helpers.js';

const NOW = new Date('2026-12-01T10:00:00Z');
const at = (h: number) => new Date(NOW.getTime() - h * 3_600_000).toISOString();
const THRESHOLD = 0.5;

function data(attention: StateData['attention'], extra: Partial<StateData> = {}): StateData {
  const none = { ok: true as const, items: [] };
  return {
    now: NOW.toISOString(), timezone: 'UTC', agent: 'researcher', sessionId: 'S-NEXT', unattended: true, budget: null, since: null,
    identity: none, threads: none, surprises: none, contradictions: none, overdue: none, wander: none,
    sessions: none, lastOkAt: null, git: { ok: false, why: 'off' }, attention, ...extra,
  };
}
const row = (id: string, outcome: string, error: string | null, h: number): AttentionRow => ({ id, outcome, error, started_at: at(h), transcript: `/logs/transcripts/${id}.jsonl` });
const pass = (id: number, session: string, h: number, symptom: string, fix: string, cause: string | null = 'the cause', test: string | null = 'a test'): AnnealPass =>
  ({ id, at: at(h), agent: 'researcher', session, symptom, cause, fix, test, complete: cause !== null && test !== null });
const keys = (d: StateData) => stateSections(d).map((s) => s.key);

describe('ATTENTION in the state', () => {
  for (const [outcome, error] of [['loop', 'repeat: Bash {"command":"npm test"} x5'], ['timeout', 'no result after 30m'], ['error', 'API error 500: overloaded']] as const) {
    test(`a session that ended ${outcome} gives the next state an ATTENTION section right after Now, with the outcome and the error`, () => {
      const a = attentionOf([row('S1', outcome, error, 1)], [], ['Bash {"command":"npm test"}'], THRESHOLD);
      assert.ok(a);
      const d = data(a);
      assert.deepEqual(keys(d).slice(0, 2), ['now', 'attention']);
      const text = renderState(d, 12000).text;
      const body = text.slice(text.indexOf('## ATTENTION'));
      assert.match(text, /## Now[\s\S]*\n## ATTENTION\n/);
      assert.ok(body.includes(`ended \`${outcome}\``), body);
      assert.ok(body.includes(`- error: ${JSON.stringify(error)}`), 'the error, quoted as a JSON string');
      assert.ok(body.includes(`  - ${JSON.stringify('Bash {"command":"npm test"}')}`), 'the last tool call, quoted');
      assert.ok(body.includes('- transcript: /logs/transcripts/S1.jsonl'));
      assert.ok(body.includes('1. Diagnose the root cause') && body.includes('5. Only then recover'), 'the standing rule');
      assert.doesNotMatch(body, /recurring/);
    });
  }

  test('a session that ended ok gives none (the control), nor one still running', () => {
    assert.equal(attentionOf([row('S1', 'ok', null, 1), row('S0', 'timeout', 'x', 2)], [], [], THRESHOLD), null);
    assert.equal(attentionOf([row('S1', 'running', null, 1)], [], [], THRESHOLD), null);
    const text = renderState(data(null), 12000).text;
    assert.doesNotMatch(text, /ATTENTION/);
  });

  test('ATTENTION survives a tiny max_chars whole, while a section holding the same lines is cut', () => {
    const a = attentionOf([row('S1', 'timeout', `no result after 30m ${'while the build ran '.repeat(12)}`, 1)], [], Array.from({ length: 6 }, (_, i) => `Bash {"command":"step ${i} ${'x'.repeat(80)}"}`), THRESHOLD)!;
    const many = Array.from({ length: 40 }, (_, i) => ({ id: i, text: `thread ${i} ${'with words '.repeat(8)}`, solo: true }));
    const d = data(a, { threads: { ok: true, items: many } });
    const attention = stateSections(d).find((s) => s.key === 'attention')!;
    for (const max of [500, 1000, 2000, 4000]) {
      const r = renderState(d, max);
      for (const l of attention.lines) assert.ok(r.text.includes(l), `at ${max}: ${l}`);
      assert.ok(!r.cut.some((c) => c.section === 'attention'), 'never named as cut');
      assert.ok(r.cut.some((c) => c.section === 'threads'), `threads are cut at ${max}`);
    }
    // Control: the same lines as an ordinary section (threads) are cut at the same bound.
    const plain = data(null, { threads: { ok: true, items: attention.lines.map((l, i) => ({ id: i, text: l, solo: true })) } });
    assert.ok(renderState(plain, 500).cut.some((c) => c.section === 'threads'));
    // Below the bound the rest of the state still never passes it.
    assert.ok(renderState(data(null, { threads: { ok: true, items: many } }), 500).text.length <= 500);
  });
});

describe('the same failure again', () => {
  const error = (n: number) => `no output for 10m while npm test ran the integration suite (attempt ${n})`;

  test('three similar failures: the third state is marked recurring and lists the earlier passes and their fixes', () => {
    // S1 timed out; S2 annealed it and timed out the same way; S3 annealed again and timed out again.
    const rows = [row('S3', 'timeout', error(3), 1), row('S2', 'timeout', error(2), 2), row('S1', 'timeout', error(1), 3)];
    const passes = [
      pass(11, 'S2', 2, 'npm test hangs', 'raised the idle timeout to 20m', 'slow suite'),
      pass(12, 'S3', 1, 'the test run stalls', 'skipped the slow test', null, null),
    ];
    const a = attentionOf(rows, passes, [], THRESHOLD)!;
    assert.ok(a.recurring);
    assert.deepEqual(a.recurring.earlier.map((e) => e.session), ['S2', 'S1']);
    assert.deepEqual(a.recurring.passes.map((p) => p.id), [11, 12]);
    const text = renderState(data(a), 12000).text;
    assert.match(text, /\n## ATTENTION: recurring\n/);
    assert.ok(text.includes(JSON.stringify('raised the idle timeout to 20m')) && text.includes(JSON.stringify('skipped the slow test')), 'the earlier fixes');
    assert.ok(text.includes('(#12, ') && text.includes('incomplete'), 'the incomplete pass is listed as such');
    assert.match(text, /the earlier fix treated a symptom/);
    // The second state (after two of them) already says so: the same failure once again.
    assert.ok(attentionOf(rows.slice(1), passes.slice(0, 1), [], THRESHOLD)!.recurring);
  });

  test('two unrelated failures are not recurring (the control), nor the same outcome with an unlike error', () => {
    const unrelated = attentionOf([row('S2', 'loop', 'repeat: Read {"file_path":"notes/index.md"} x5', 1), row('S1', 'timeout', error(1), 2)], [pass(11, 'S2', 1, 'the suite hangs', 'more time')], [], THRESHOLD)!;
    assert.equal(unrelated.recurring, null);
    assert.doesNotMatch(renderState(data(unrelated), 12000).text, /recurring|treated a symptom/);
    const unlike = attentionOf([row('S2', 'error', 'API error 401: invalid x-api-key', 1), row('S1', 'error', 'the CLI ended (exit code 1) without a result line', 2)], [], [], THRESHOLD)!;
    assert.equal(unlike.recurring, null);
  });
});

describe('the anneal log', () => {
  test('a pass is read field by field, in any order; one missing a cause or a test is incomplete', () => {
    assert.deepEqual(parseAnneal('symptom: notes lost | cause: git add . missed ignored dirs | fix: add -A | test: test/git.test.ts'), {
      symptom: 'notes lost', cause: 'git add . missed ignored dirs', fix: 'add -A', test: 'test/git.test.ts', complete: true,
    });
    assert.deepEqual(parseAnneal('TEST: none | Symptom: build fails | fix: pinned tsc'), { symptom: 'build fails', cause: null, fix: 'pinned tsc', test: null, complete: false });
    assert.equal(parseAnneal('symptom: a | cause: unknown | fix: b | test: c').complete, false);
    assert.equal(parseAnneal('just a sentence').symptom, 'just a sentence');
  });

  function capture(t: TestContext) {
    const dir = tempDir(t);
    const config = validateConfig({ state_dir: './state' }, path.join(dir, 'nightshift.yaml')).config!;
    const transcript = path.join(dir, 'S2.jsonl');
    const own = [
      'The last run timed out. Annealing first.',
      'ANNEAL: symptom: npm test hangs | cause: a watcher left open | fix: close it in teardown | test: test/watch.test.ts',
      '- ANNEAL: symptom: stale index | fix: rebuilt it',
      'The page I read said:',
      '> ANNEAL: symptom: QUOTEDWORD | cause: c | fix: f | test: t',
      '```',
      'ANNEAL: symptom: FENCEDWORD | cause: c | fix: f | test: t',
      '```',
    ].join('\n');
    const lines = [
      { type: 'assistant', message: { id: 'm1', content: [{ type: 'text', text: own }] }, parent_tool_use_id: null },
      // A tool result carrying a marker is someone else's text.
      { type: 'user', message: { content: [{ type: 'tool_result', content: 'ANNEAL: symptom: TOOLWORD | cause: c | fix: f | test: t' }] } },
    ];
    fs.writeFileSync(transcript, `${lines.map((l) => JSON.stringify(l)).join('\n')}\n`);
    const session = { id: 'S2', agent: 'researcher', outcome: 'ok', turns: 3, cost_usd: 0.01, result: 'done', error: null };
    return { config, transcript, session, run: () => leaveBehind({ config, env: {}, session, transcript, logger: { warn: () => {}, info: () => {} }, redact: (x) => x, openStore: async () => MemoryStore.open(memoryDbPath(config)) }) };
  }

  test("ANNEAL: lines of the session's own text land in the log with their fields; quoted ones do not", async (t) => {
    const c = capture(t);
    await c.run();
    const passes = readPasses(memoryDbPath(c.config));
    assert.deepEqual(passes.map(({ id, at, ...p }) => p), [
      { agent: 'researcher', session: 'S2', symptom: 'npm test hangs', cause: 'a watcher left open', fix: 'close it in teardown', test: 'test/watch.test.ts', complete: true },
      { agent: 'researcher', session: 'S2', symptom: 'stale index', cause: null, fix: 'rebuilt it', test: null, complete: false },
    ]);
    const db = new Database(memoryDbPath(c.config), { readonly: true });
    const all = (db.prepare('SELECT text FROM memories').pluck().all() as string[]).join('\n');
    db.close();
    for (const w of ['QUOTEDWORD', 'FENCEDWORD', 'TOOLWORD']) assert.ok(!all.includes(w), `${w} is not stored`);
    // Control: the same quoted line as the session's own words is taken.
    fs.writeFileSync(c.transcript, `${JSON.stringify({ type: 'assistant', message: { id: 'm2', content: [{ type: 'text', text: 'ANNEAL: symptom: QUOTEDWORD | cause: c | fix: f | test: t' }] }, parent_tool_use_id: null })}\n`);
    await c.run();
    assert.ok(readPasses(memoryDbPath(c.config)).some((p) => p.symptom === 'QUOTEDWORD'));
  });

  test('a pass is a memory of category anneal: searchable, never merged into an earlier pass', async (t) => {
    const c = capture(t);
    await c.run();
    await c.run(); // the same session's passes again (a spool replay would skip them; a new session would not)
    const store = MemoryStore.open(memoryDbPath(c.config));
    try {
      const hits = await store.query('watcher left open teardown');
      assert.equal(hits[0]?.category, 'anneal');
      assert.equal(store.stats().by_category.anneal, 4, 'each pass its own memory');
    } finally {
      store.close();
    }
  });

  test('a store made before the anneal category takes anneal passes after its migration; unmigrated it refuses them (the control)', (t) => {
    const file = path.join(tempDir(t), 'memory.db');
    const old = openDatabase(file, 6);
    const insert = () => old.prepare("INSERT INTO memories (text, category, created_at, updated_at) VALUES ('p', 'anneal', ?, ?)").run(NOW.toISOString(), NOW.toISOString());
    assert.throws(insert, /CHECK constraint failed/);
    old.close();
    const store = MemoryStore.open(file);
    store.close();
    const db = new Database(file);
    try {
      db.prepare("INSERT INTO memories (text, category, created_at, updated_at) VALUES ('p', 'anneal', ?, ?)").run(NOW.toISOString(), NOW.toISOString());
      assert.throws(() => db.prepare("INSERT INTO memories (text, category, created_at, updated_at) VALUES ('p', 'bogus', ?, ?)").run('x', 'x'), /CHECK constraint failed/);
      assert.equal(db.pragma('integrity_check', { simple: true }), 'ok');
    } finally {
      db.close();
    }
  });

  test('a stored pass reads back as the log shape', () => {
    const p = passFromRow({ id: 3, text: 'symptom: a | fix: b', tags: ['anneal', 'agent:gardener', 'incomplete'], created_at: at(1), source: 'S9' });
    assert.deepEqual(p, { id: 3, at: at(1), agent: 'gardener', session: 'S9', symptom: 'a', cause: null, fix: 'b', test: null, complete: false });
  });
});

describe('ATTENTION from a real ledger', () => {
  function ledgerWith(t: TestContext, sessions: Array<[string, string, string | null, number]>): { config: Config; ledger: Ledger } {
    const dir = tempDir(t);
    const config = validateConfig({ vault: './vault', state_dir: './state', log_dir: './logs', git: { enabled: false } }, path.join(dir, 'nightshift.yaml')).config!;
    fs.mkdirSync(config.vault, { recursive: true });
    const ledger = Ledger.open(path.join(config.state_dir, 'ledger.db'));
    t.after(() => ledger.close());
    for (const [id, outcome, error, h] of sessions) {
      const transcript = path.join(config.log_dir, 'transcripts', `${id}.jsonl`);
      fs.mkdirSync(path.dirname(transcript), { recursive: true });
      const call = (n: number) => JSON.stringify({ type: 'assistant', message: { id: `m${n}`, content: [{ type: 'tool_use', id: `t${n}`, name: 'Bash', input: { command: `npm test -- --shard ${n}` } }] }, parent_tool_use_id: null });
      fs.writeFileSync(transcript, `${Array.from({ length: 9 }, (_, n) => call(n)).join('\n')}\n`);
      const open = { id, agent: 'researcher', day: at(h).slice(0, 10), started_at: at(h), transcript, model: 'sonnet', supervisor_pid: 1, supervisor_start: null };
      ledger.open(open);
      ledger.settle(open, { outcome, ended_at: at(h), duration_ms: 1, cost_usd: 0.1, cost_estimated: false, turns: 2, exit_code: outcome === 'ok' ? 0 : 1, result: null, error, input_tokens: 1, output_tokens: 1 });
    }
    return { config, ledger };
  }
  const prepare = (config: Config, ledger: Ledger, max = 12000) =>
    prepareSessionState({ config: { ...config, state: { max_chars: max } }, agent: { name: 'researcher', maxRunsPerDay: null }, sessionId: 'S-NEXT', ledger, now: NOW, transcript: path.join(config.log_dir, 'transcripts', 'S-NEXT.jsonl'), redact: (x) => x.replaceAll('shard 8', 'shard [REDACTED]'), logger: { warn: () => {}, info: () => {} } });

  test('prepareSessionState opens with ATTENTION after a failed session: outcome, error, the last tool calls redacted, the transcript', async (t) => {
    const { config, ledger } = ledgerWith(t, [['S1', 'timeout', 'no result after 30m', 1]]);
    const state = await prepare(config, ledger, 500);
    assert.ok(state);
    const text = state.text;
    assert.match(text, /^# Session state[^]*?\n## ATTENTION\n- your last session S1 [^\n]*ended `timeout`/);
    assert.ok(text.indexOf('## ATTENTION') < text.indexOf('(cut'), 'first, before anything cut');
    assert.ok(text.includes(`- error: "no result after 30m"`));
    assert.ok(text.includes('shard [REDACTED]') && !text.includes('shard 8'), 'redacted');
    assert.ok(text.includes('shard 3') && !text.includes('shard 2'), 'the last six calls only');
    assert.ok(text.includes(`- transcript: ${path.join(config.log_dir, 'transcripts', 'S1.jsonl')}`));
    assert.deepEqual(lastToolCalls(null), null);
  });

  test('prepareSessionState after an ok session has no ATTENTION (the control)', async (t) => {
    const { config, ledger } = ledgerWith(t, [['S0', 'timeout', 'no result after 30m', 2], ['S1', 'ok', null, 1]]);
    const state = await prepare(config, ledger);
    assert.ok(state);
    assert.doesNotMatch(state.text, /ATTENTION/);
  });

  test('three similar failures in the ledger with passes in the store: the third state is marked recurring', async (t) => {
    const { config, ledger } = ledgerWith(t, [['S1', 'timeout', 'no result after 30m: npm test hung', 3], ['S2', 'timeout', 'no result after 30m: npm test hung again', 2], ['S3', 'timeout', 'no result after 30m: npm test hung', 1]]);
    const store = MemoryStore.open(memoryDbPath(config), { now: () => new Date(at(2)) });
    await store.recordAnneal({ text: 'symptom: npm test hangs | cause: open handle | fix: raised the timeout | test: none yet', source: 'S2', tags: ['anneal', 'agent:researcher'] }, { surface: 'session', sessionId: 'S2' });
    store.close();
    const state = await prepare(config, ledger);
    assert.ok(state);
    assert.match(state.text, /\n## ATTENTION: recurring\n/);
    assert.ok(state.text.includes(JSON.stringify('raised the timeout')));
    assert.ok(state.injected?.some((m) => m.text.includes('raised the timeout')), 'the pass shown is graded like other memories');
  });
});

describe('nightshift anneal', () => {
  test('lists the log oldest first, by agent, as JSON and as text with incomplete passes marked', async (t) => {
    const dir = tempDir(t);
    fs.mkdirSync(path.join(dir, 'prompts'));
    fs.writeFileSync(path.join(dir, 'nightshift.yaml'), 'vault: ./vault\nstate_dir: ./state\nlog_dir: ./logs\nagents_dir: ./prompts\n');
    const store = MemoryStore.open(path.join(dir, 'state', 'memory.db'), { now: () => NOW });
    await store.recordAnneal({ text: 'symptom: npm test hangs | cause: open handle | fix: close it | test: test/a.test.ts', source: 'S1', tags: ['anneal', 'agent:researcher'] }, { surface: 'session', sessionId: 'S1' });
    await store.recordAnneal({ text: 'symptom: lost notes | fix: add -A', source: 'S2', tags: ['anneal', 'agent:gardener', 'incomplete'] }, { surface: 'session', sessionId: 'S2' });
    store.close();
    const env = { PATH: process.env.PATH, HOME: dir, NIGHTSHIFT_CONFIG: path.join(dir, 'nightshift.yaml') };
    const json = await nightshift(['anneal', '--json'], env, dir);
    assert.equal(json.code, 0, json.stderr);
    assert.deepEqual(JSON.parse(json.stdout).map((p: any) => [p.at, p.agent, p.session, p.symptom, p.cause, p.fix, p.test, p.complete]), [
      [NOW.toISOString(), 'researcher', 'S1', 'npm test hangs', 'open handle', 'close it', 'test/a.test.ts', true],
      [NOW.toISOString(), 'gardener', 'S2', 'lost notes', null, 'add -A', null, false],
    ]);
    const one = await nightshift(['anneal', '--agent', 'gardener'], env, dir);
    assert.equal(one.code, 0, one.stderr);
    assert.match(one.stdout, /gardener {2}S2 {2}#\d+ {2}\(incomplete\)\n {2}symptom {2}lost notes\n {2}cause {4}\(missing\)/);
    assert.doesNotMatch(one.stdout, /researcher/);
  });
});
