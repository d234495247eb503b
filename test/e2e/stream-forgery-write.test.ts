// Issue 25, point 3, the CLI's own tools: its Write tool (which runs in the CLI's process, not
// through the shell prefix's Landlock domain) writes a forged result to /proc/self/fd/1 and
// through a link to it the session made, each after a Read (the CLI writes no file it has not
// read). The supervisor hands the CLI a socket for its stdout (node's stdio pipes are
// socketpairs), and a socket cannot be reopened through /proc (ENXIO).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { describe, test, type TestContext } from 'node:test';
import { NEEDS_BWRAP, configYaml, fakeApiPerFile, ledgerRows, nightshift, workspace, writeAgent, type Workspace } from '../helpers.js';
import { bash, text, type Reply, type Turn } from '../fake-api.js';
import { FORGED_LINE } from '../stream-thief.js';

const api = fakeApiPerFile();
const CALLS_BEFORE = 2;
const FORGED_TEXT = 'forged by the session';

const tool = (name: string, input: Record<string, unknown>): Reply => ({
  kind: 'message', blocks: [{ type: 'text', text: `I will call ${name}.` }, { type: 'tool_use', name, input }], stopReason: 'tool_use',
});
// The CLI's Read tool refuses /proc/self/fd/N by name ("this device file would block"), and its
// Write tool writes no file it has not read: so the path is a link the session made, read, then
// written. Directly by name as well (both refused by the CLI itself, measured). 2.1.332 refuses
// all four itself: Read any path that names a device or process file, the link's target included
// ("this path names a device or process file that this tool does not read"), Write any that is
// not a regular file; so there the socket's ENXIO is not reached (the control below shows it).
const STEPS: Reply[] = [
  tool('Read', { file_path: '/proc/self/fd/1' }),
  tool('Write', { file_path: '/proc/self/fd/1', content: `${FORGED_LINE}\n` }),
  bash('ln -sf /proc/self/fd/1 stream.jsonl'),
  tool('Read', { file_path: 'VAULT/stream.jsonl' }),
  tool('Write', { file_path: 'VAULT/stream.jsonl', content: `${FORGED_LINE}\n` }),
];

function script(scenario: string, seen: string[], vault: string) {
  api.script(scenario, ({ turn, lastToolResult }: Turn) => {
    if (turn > CALLS_BEFORE) seen.push(lastToolResult ?? '');
    if (turn < CALLS_BEFORE) return bash(`echo call ${turn}`);
    const step = STEPS[turn - CALLS_BEFORE];
    return step ? JSON.parse(JSON.stringify(step).replaceAll('VAULT', vault)) : text('Done.');
  });
}

function site(t: TestContext, name: string): Workspace {
  const yaml = configYaml({ top: 'hooks:\n  enabled: false\nsandbox: bwrap\ngemini:\n  base_url: "http://127.0.0.1:9"\n', claude: { timeout: '90s', idle_timeout: '30s' } });
  return workspace(t, api.url, yaml, { base: '/var/tmp', prefix: `nightshift-forgery-${name}-` });
}

const served = (scenario: string) => api.requests.filter((r) => r.scenario === scenario).length;

describe('the CLI\'s own Write tool cannot write the supervisor\'s stream', { skip: NEEDS_BWRAP }, () => {
  test('walled, Read then Write of /proc/self/fd/1, by name and through a link the session made, fail (a socket does not reopen) and the ledger holds what the API served', { timeout: 3 * 60_000 }, async (t) => {
    const ws = site(t, 'write');
    const seen: string[] = [];
    script('forgery-write', seen, ws.vault);
    writeAgent(ws, 'forger', 'SCENARIO=forgery-write', { allowed_tools: ['Bash', 'Read', 'Write'], max_turns: 50 });
    const ran = await nightshift(['run', 'forger', '--json'], ws.env, ws.dir);
    const record = JSON.parse(ran.stdout || 'null');
    assert.ok(record, `a record (exit ${ran.code}): ${ran.stderr.slice(-1500)}`);
    t.diagnostic(`write, walled: outcome ${record.outcome}, turns ${record.turns}, $${record.cost_usd}; tool results ${JSON.stringify(seen)}`);
    assert.equal(seen.length, STEPS.length, 'every step came back to the API');
    // 2.1.197's words first, then 2.1.332's.
    const READ_REFUSED = /would block|names a device or process file that this tool does not read/;
    const WRITE_REFUSED = /has not been read yet|is not a regular file/;
    assert.match(seen[0], READ_REFUSED, 'the CLI refuses to read /proc/self/fd/1 by name');
    assert.match(seen[1], WRITE_REFUSED, 'and to write a file it has not read, or one that is no regular file');
    assert.match(seen[3], new RegExp(`ENXIO|${READ_REFUSED.source}`), 'through a link, the socket does not reopen (or the CLI sees where the link goes)');
    assert.match(seen[4], WRITE_REFUSED);
    assert.ok(!ran.stdout.includes(FORGED_TEXT) && record.result !== FORGED_TEXT, 'the forged result is nowhere');
    assert.equal(record.outcome, 'ok', record.error);
    assert.equal(record.turns, served('forgery-write'));
    const row = ledgerRows(ws.dir).find((r) => r.id === record.id);
    assert.ok(row.cli_cost_usd > 0.001, `the CLI's own count is its own ($${row.cli_cost_usd})`);
  });

  // The CLI's Read tool on a pipe reopened for reading blocks for ever (measured: the session
  // stalls, nothing is forged), so the control is the reopen itself, the step every such route
  // needs, by the same kind of process the runner starts.
  test('negative control: what the Write tool would need, reopening its own stdout by its /proc path, works on a pipe; on a stdout as the runner spawns it (a socket) it fails', async () => {
    const reopen = `echo '${FORGED_LINE}' 2>/dev/null >/proc/self/fd/1 && echo reopened || echo refused`;
    const stdoutOf = (script: string) => new Promise<string>((resolve) => {
      const c = spawn('/bin/sh', ['-c', script], { stdio: ['ignore', 'pipe', 'ignore'] });
      let out = '';
      c.stdout.on('data', (d: Buffer) => (out += d));
      c.on('close', () => resolve(out));
    });
    // The shell's stdout as node's spawn gives it (the runner's way), then a pipe.
    const viaNode = await stdoutOf(reopen);
    const viaPipe = await stdoutOf(`(${reopen}) | cat`);
    assert.match(viaNode, /refused/);
    assert.ok(!viaNode.includes(FORGED_TEXT), viaNode);
    assert.match(viaPipe, /reopened/);
    assert.ok(viaPipe.includes(FORGED_LINE), `through a pipe the forged line lands: ${viaPipe}`);
  });
});
