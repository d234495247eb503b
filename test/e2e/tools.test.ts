// Each agent's built-in tool set is explicit (issue 28): the request the fake API receives carries
// exactly that set (plus the memory tools), the lean default none of the headless-useless ones,
// and `default` the CLI's whole set: the control that shows what the lean set saves.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { bash, text } from '../fake-api.js';
import { configYaml, fakeApiPerFile, runJson, workspace, writeAgent } from '../helpers.js';

const api = fakeApiPerFile();

// From 2.1.332 the CLI adds a stub the model is never offered ("Reserved placeholder that keeps
// deferred tool loading active; never call this tool.", defer_loading: true): not a tool of ours.
type Tool = { name: string; description?: string; defer_loading?: boolean };
const withoutPlaceholder = (tools: unknown): Tool[] => ((tools ?? []) as Tool[]).filter((x) => !(x.name === 'DeferredToolPlaceholder' && x.defer_loading === true && /^Reserved placeholder/.test(x.description ?? '')));

async function firstRequestTools(t: Parameters<typeof workspace>[0], front: Record<string, unknown>, name: string) {
  const ws = workspace(t, api.url, configYaml());
  let tools: Array<{ name: string; description?: string; defer_loading?: boolean }> | null = null;
  let bytes = 0;
  api.script(name, ({ body }) => {
    if (!tools && Array.isArray(body.tools)) {
      tools = body.tools;
      bytes = JSON.stringify(body.tools).length;
    }
    return text('Done.');
  });
  // Without allowed_tools in `front`, none at all (writeAgent's own would bound the set).
  if ('allowed_tools' in front) writeAgent(ws, 'worker', `SCENARIO=${name}`, front);
  else fs.writeFileSync(path.join(ws.prompts, 'worker.md'), `---\n${Object.entries(front).map(([k, v]) => `${k}: ${JSON.stringify(v)}`).join('\n')}\n---\nSCENARIO=${name}\n`);
  const r = await runJson(ws, 'worker');
  assert.equal(r.record.outcome, 'ok', r.ran.stderr);
  assert.ok(tools, 'the request carried tools');
  const offered = withoutPlaceholder(tools);
  const names = offered.map((x) => x.name);
  // A deferred tool reaches the model only through ToolSearch: ours must be offered outright.
  const deferred = offered.filter((x) => x.defer_loading).map((x) => x.name);
  return { builtIn: names.filter((n) => !n.startsWith('mcp__')).sort(), mcp: names.filter((n) => n.startsWith('mcp__')), deferred, bytes };
}

test('an agent with tools: [Read] sends exactly that built-in set, and the memory tools', async (t) => {
  const r = await firstRequestTools(t, { tools: ['Read'], allowed_tools: ['Read'] }, 'tools-read');
  assert.deepEqual(r.builtIn, ['Read']);
  assert.ok(r.mcp.includes('mcp__nightshift_memory__observe'), r.mcp.join(','));
  assert.deepEqual(r.deferred, [], 'every tool is offered outright, none behind ToolSearch');
});

test('the lean default sends no tool a headless session cannot use, and is far smaller than `default`', async (t) => {
  const lean = await firstRequestTools(t, {}, 'tools-lean');
  assert.deepEqual(lean.builtIn, ['Bash', 'Edit', 'Glob', 'Grep', 'Read', 'Write']);
  assert.deepEqual(lean.deferred, []);
  const all = await firstRequestTools(t, { tools: 'default' }, 'tools-default');
  // 2.1.197 sent its 24 built-ins outright (CronCreate, EnterWorktree, ...); 2.1.332 sends 11 and
  // defers the rest behind ToolSearch. ScheduleWakeup, useless headless, is in both.
  assert.ok(all.builtIn.includes('ScheduleWakeup'), `the whole set has ScheduleWakeup: ${all.builtIn.join(',')}`);
  assert.ok(all.builtIn.length > lean.builtIn.length + 4, all.builtIn.join(','));
  // Under half of 2.1.197's whole set; 2.1.332's deferred loading already trims its own (measured:
  // lean 17516 bytes, default 31058), so the bar is 60%.
  assert.ok(lean.bytes < all.bytes * 0.6, `lean ${lean.bytes} bytes, default ${all.bytes}`);
});

// An allow-list bounds what is offered (issue 37): an agent given [Read, Write] is not offered Bash,
// so its scripted Bash calls run nothing. Controls: Bash named, the same calls run; no allow-list
// under the CLI's `default` mode, Bash is offered and the CLI runs a "read-only" command no rule allows.
async function bashCalls(t: Parameters<typeof workspace>[0], name: string, front: Record<string, unknown> | null, claude: Record<string, unknown> = {}) {
  const ws = workspace(t, api.url, configYaml({ claude }));
  const calls = ['id -u', `echo ran > ${ws.vault}/marker.txt; echo wrote-marker`];
  const results: string[] = [];
  let offered: string[] = [];
  api.script(name, ({ turn, lastToolResult, body }) => {
    if (turn === 0) offered = withoutPlaceholder(body.tools).map((x) => x.name);
    else results.push(lastToolResult ?? '');
    return turn < calls.length ? bash(calls[turn]) : text('Done.');
  });
  // null: no allow-list at all (writeAgent would give one).
  if (front === null) fs.writeFileSync(path.join(ws.prompts, 'worker.md'), `SCENARIO=${name}\n`);
  else writeAgent(ws, 'worker', `SCENARIO=${name}`, front);
  const r = await runJson(ws, 'worker');
  assert.equal(r.record.outcome, 'ok', r.ran.stderr);
  t.diagnostic(`${name}: offered ${offered.filter((n) => !n.startsWith('mcp__')).join(',')}; results ${JSON.stringify(results)}`);
  return { offered, results, marker: fs.existsSync(path.join(ws.vault, 'marker.txt')) };
}

test('an agent with allowed_tools [Read, Write] is not offered Bash: its Bash calls run nothing', async (t) => {
  const r = await bashCalls(t, 'bounded', { allowed_tools: ['Read', 'Write'] });
  assert.deepEqual(r.offered.filter((n) => !n.startsWith('mcp__')).sort(), ['Read', 'Write']);
  assert.equal(r.results.length, 2);
  for (const x of r.results) assert.match(x, /No such tool available: Bash/);
  assert.doesNotMatch(r.results.join('\n'), /^\d+$/m, 'id -u printed nothing');
  assert.equal(r.marker, false, 'the marker was not written');
});

// An allow-list of memory tools alone names no built-in tool: the CLI gets `--tools ""`, not its
// default set (Bash and WebFetch included) that it would offer were the flag left out.
// mutation: `--tools` omitted for an empty set (sessions/run/command.ts), caught here.
test('an agent whose allow-list names no built-in tool is offered none: its Bash calls run nothing', async (t) => {
  const r = await bashCalls(t, 'mcp-only', { allowed_tools: ['mcp__nightshift_memory__query'] });
  assert.deepEqual(r.offered.filter((n) => !n.startsWith('mcp__')), []);
  assert.ok(r.offered.includes('mcp__nightshift_memory__query'), r.offered.join(','));
  assert.equal(r.results.length, 2);
  for (const x of r.results) assert.match(x, /No such tool available: Bash/);
  assert.equal(r.marker, false, 'the marker was not written');
});

test('control: with Bash named, the same calls run', async (t) => {
  const r = await bashCalls(t, 'bash-named', { allowed_tools: ['Read', 'Write', 'Bash'] });
  assert.ok(r.offered.includes('Bash'));
  assert.match(r.results[0], /^\d+$/m, `id -u ran: ${r.results[0]}`);
  assert.match(r.results[1], /wrote-marker/);
  assert.equal(r.marker, true);
});

test('control: Bash offered without any rule allowing it, the CLI runs a "read-only" command itself', async (t) => {
  const r = await bashCalls(t, 'bash-unruled', null, { permission_mode: 'default' });
  assert.ok(r.offered.includes('Bash'));
  assert.match(r.results[0], /^\d+$/m, `id -u ran with no allow rule: ${r.results[0]}`);
});
