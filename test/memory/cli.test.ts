// `nightshift memory ...` through the built binary: the round trip, import's bad lines, and a
// memory database that is not ours.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { test, type TestContext } from 'node:test';
import Database from 'better-sqlite3';
import { BIN, configYaml, nightshift, tempDir, type Ran } from '../helpers.js';
import { zipfLines } from './zipf-lines.js';

type Ws = { dir: string; db: string; env: NodeJS.ProcessEnv };

function memoryWorkspace(t: TestContext): Ws {
  const dir = tempDir(t, 'nightshift-memcli-');
  for (const d of ['vault', 'prompts', 'state']) fs.mkdirSync(path.join(dir, d));
  fs.writeFileSync(path.join(dir, 'nightshift.yaml'), configYaml());
  return { dir, db: path.join(dir, 'state', 'memory.db'), env: { PATH: process.env.PATH, HOME: dir, NIGHTSHIFT_CONFIG: path.join(dir, 'nightshift.yaml') } };
}

const mem = (ws: Ws, ...args: string[]) => nightshift(['memory', ...args], ws.env, ws.dir);

// With something on stdin (nightshift's helper gives the child none).
function memWithStdin(ws: Ws, input: string, ...args: string[]): Promise<Ran> {
  const child = spawn(process.execPath, [BIN, 'memory', ...args], { env: ws.env, cwd: ws.dir, stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c) => (stdout += c));
  child.stderr.on('data', (c) => (stderr += c));
  child.stdin.end(input);
  return new Promise((resolve) => child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr })));
}

function json(r: Ran): any {
  assert.equal(r.code, 0, `exit ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

test('observe, query, recall, stats, export and import round trip with --json', async (t) => {
  const ws = memoryWorkspace(t);
  const a = json(await mem(ws, 'observe', 'The release train leaves every second Tuesday.', '--source', 'meeting-2026-03-02', '--category', 'pattern', '--tags', 'release, process', '--json'));
  assert.equal(a.decision, 'novel');
  const b = json(await mem(ws, 'observe', 'Grafana dashboards live in the ops-dashboards repository.', '--json'));

  const results = json(await mem(ws, 'query', 'when does the release train leave', '--limit', '3', '--json'));
  assert.ok(Array.isArray(results) && results.length >= 1 && results.length <= 3);
  assert.deepEqual(Object.keys(results[0]).sort(), ['category', 'faded', 'id', 'score', 'sources', 'superseded', 'text']);
  assert.equal(results[0].id, a.memory_id);
  assert.deepEqual(results[0].sources, ['meeting-2026-03-02']);
  const explained = json(await mem(ws, 'query', 'release train', '--explain', '--json'));
  assert.deepEqual(Object.keys(explained[0].explain).sort(), ['activation', 'fused', 'lexical', 'recency', 'salience', 'vector']);

  const rec = json(await mem(ws, 'recall', String(b.memory_id), '--json'));
  assert.equal(rec.text, 'Grafana dashboards live in the ops-dashboards repository.');
  assert.deepEqual(rec.sources, ['cli']);
  const recA = json(await mem(ws, 'recall', String(a.memory_id), '--json'));
  assert.deepEqual(recA.tags, ['release', 'process']);
  assert.equal(recA.category, 'pattern');

  const stats = json(await mem(ws, 'stats', '--json'));
  assert.equal(stats.memories, 2);
  assert.equal(stats.observations, 2);
  assert.equal(stats.file, ws.db);

  const human = await mem(ws, 'query', 'Grafana');
  assert.equal(human.code, 0);
  assert.match(human.stdout, new RegExp(`#${b.memory_id} .*Grafana dashboards`));

  // Export to a file, import into a fresh store, and the same observations come back.
  const file = path.join(ws.dir, 'export.jsonl');
  assert.deepEqual(json(await mem(ws, 'export', file, '--json')), { file, lines: 2 });
  const lines = fs.readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  assert.equal(lines.length, 2);
  assert.equal(lines[0].source, 'meeting-2026-03-02');
  const toStdout = await mem(ws, 'export');
  assert.equal(toStdout.stdout, fs.readFileSync(file, 'utf8'));

  const other = memoryWorkspace(t);
  const imported = json(await mem(other, 'import', file, '--json'));
  assert.equal(imported.observed, 2);
  assert.deepEqual(imported.bad, []);
  const again = json(await mem(other, 'query', 'release train', '--json'));
  assert.equal(again[0].text, 'The release train leaves every second Tuesday.');
  assert.deepEqual(again[0].sources, ['meeting-2026-03-02']);
  const viaStdin = memoryWorkspace(t);
  const piped = await memWithStdin(viaStdin, fs.readFileSync(file, 'utf8'), 'import', '-', '--json');
  assert.equal(json(piped).observed, 2);
  assert.equal(piped.stderr.includes('\r'), false, 'no progress line when stderr is not a terminal');
});

test('import reports each bad line by number and field and keeps the good ones', async (t) => {
  const ws = memoryWorkspace(t);
  const file = path.join(ws.dir, 'in.jsonl');
  fs.writeFileSync(file, [
    JSON.stringify({ text: 'The VPN endpoint moved to vpn2.example.test.', source: 'wiki' }),
    '{"text": "broken json",',
    JSON.stringify({ text: 'A line without a source.' }),
    '',
    JSON.stringify({ text: 'Wrong category.', source: 'wiki', category: 'gossip' }),
    JSON.stringify({ text: 'Bad time.', source: 'wiki', created_at: 'last tuesday' }),
    JSON.stringify({ text: 'On-call rotates on Mondays at 09:00 UTC.', source: 'wiki', created_at: '2026-01-05T09:00:00Z', tags: ['oncall'] }),
  ].join('\n'));
  const r = await mem(ws, 'import', file, '--json');
  assert.equal(r.code, 1, r.stderr);
  const report = JSON.parse(r.stdout);
  assert.equal(report.observed, 2);
  assert.deepEqual(report.bad.map((b: any) => [b.line, b.field]), [[2, '(line)'], [3, 'source'], [5, 'category'], [6, 'created_at']]);
  assert.match(r.stderr, new RegExp(`${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:3: source: Expected \`source\` to be a non-empty string`));
  const stats = JSON.parse((await mem(ws, 'stats', '--json')).stdout);
  assert.equal(stats.observations, 2);
  const rec = JSON.parse((await mem(ws, 'query', 'on-call rotation Mondays', '--json')).stdout);
  assert.equal(rec[0].text, 'On-call rotates on Mondays at 09:00 UTC.');
});

test('usage errors exit 64 and say what was expected', async (t) => {
  const ws = memoryWorkspace(t);
  for (const args of [[], ['frobnicate'], ['query'], ['query', 'x', '--source', 's'], ['query', 'x', '--limit', 'lots'], ['recall', 'abc'], ['observe', 'x', '--category', 'gossip']]) {
    const r = await mem(ws, ...args);
    assert.equal(r.code, 64, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, /Expected|does not take/);
  }
  const missing = await mem(ws, 'recall', '42');
  assert.equal(missing.code, 64);
  assert.match(missing.stderr, /No memory with id 42/);
  const help = await mem(ws, '--help');
  assert.equal(help.code, 0);
  assert.match(help.stdout, /import FILE\|-/);
});

const sha = (file: string) => crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex');

test('a corrupt or foreign memory.db is refused naming the file, left byte-identical, and nothing starts', async (t) => {
  const corrupt = memoryWorkspace(t);
  fs.writeFileSync(corrupt.db, Buffer.concat([Buffer.from('SQLite format 3\0'), crypto.randomBytes(8192)]));
  const foreign = memoryWorkspace(t);
  const db = new Database(foreign.db);
  db.exec("CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('someone else''s data')");
  db.close();
  const text = memoryWorkspace(t);
  fs.writeFileSync(text.db, 'just some text, not a database at all\n'.repeat(20));

  for (const ws of [corrupt, foreign, text]) {
    const before = sha(ws.db);
    // The store's own files (state_dir also keeps the validated config: config/validated-cache.ts).
    const storeFiles = () => fs.readdirSync(path.dirname(ws.db)).filter((f) => f.startsWith(path.basename(ws.db))).sort();
    const files = storeFiles();
    for (const args of [['stats'], ['observe', 'hello', '--json'], ['import', '-']]) {
      const r = await mem(ws, ...args);
      assert.equal(r.code, 70, `${args[0]}: ${r.stderr}`);
      assert.ok(r.stderr.includes(ws.db), `the message names the file: ${r.stderr}`);
      assert.match(r.stderr, /left as it is/);
      assert.equal(r.stdout, '');
    }
    const served = await nightshift(['mcp'], ws.env, ws.dir);
    assert.equal(served.code, 70, served.stderr);
    assert.equal(served.stdout, '', 'no protocol served');
    assert.ok(served.stderr.includes(ws.db));
    assert.equal(sha(ws.db), before, 'byte-identical');
    assert.deepEqual(storeFiles(), files, 'no -wal or -shm left beside it');
  }
});

// Its speed (the goal: well under a minute) is `npm run bench memory-import`, as a ratio.
test('imports 10k lines through the gate', { timeout: 600_000 }, async (t) => {
  const ws = memoryWorkspace(t);
  const file = path.join(ws.dir, '10k.jsonl');
  fs.writeFileSync(file, zipfLines(10_000));
  const report = json(await mem(ws, 'import', file, '--json'));
  assert.equal(report.lines, 10_000);
  assert.equal(report.observed, 10_000);
  assert.equal(report.novel + report.link + report.merge, 10_000, JSON.stringify(report));
  t.diagnostic(`10k lines imported: ${report.novel} new, ${report.link} linked, ${report.merge} merged`);
});

test('a memory a session wrote is data at the terminal: bidi and invisible characters print escaped (io.out), JSON means the same', async (t) => {
  const ws = memoryWorkspace(t);
  const content = 'Rotate the key in invoice\u202egnp.exe before \u2066Friday\u2069, not pay\u200bpal.';
  const a = json(await mem(ws, 'observe', content, '--json'));
  const human = await mem(ws, 'query', 'rotate the key invoice');
  assert.equal(human.code, 0, human.stderr);
  assert.ok(human.stdout.includes(`#${a.memory_id}`), human.stdout);
  assert.doesNotMatch(human.stdout, /[\u202a-\u202e\u2066-\u2069\u200b]/, JSON.stringify(human.stdout));
  assert.ok(human.stdout.includes('invoice\\u202egnp.exe before \\u2066Friday\\u2069, not pay\\u200bpal'), human.stdout);
  const asJson = await mem(ws, 'query', 'rotate the key invoice', '--json');
  assert.doesNotMatch(asJson.stdout, /[\u202a-\u202e\u2066-\u2069\u200b]/, 'escaped in the JSON text too');
  assert.equal(json(asJson)[0].text, content, 'and the JSON parses to what was stored');
  // Negative control: the store holds the characters raw.
  const db = new Database(ws.db, { readonly: true });
  t.after(() => db.close());
  assert.ok((db.prepare('SELECT text FROM memories WHERE id = ?').get(a.memory_id) as { text: string }).text.includes('\u202e'));
});
