// Each agent's built-in tool set is explicit (issue 28): the request the fake API receives carries
// exactly that set (plus the memory tools), the lean default none of the headless-useless ones,
// and `default` the CLI's whole set: the control that shows what the lean set saves.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { text } from '../fake-api.js';
import { configYaml, fakeApiPerFile, runJson, workspace, writeAgent } from '../helpers.js';

const api = fakeApiPerFile();

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
  writeAgent(ws, 'worker', `SCENARIO=${name}`, front);
  const r = await runJson(ws, 'worker');
  assert.equal(r.record.outcome, 'ok', r.ran.stderr);
  assert.ok(tools, 'the request carried tools');
  // From 2.1.332 the CLI adds a stub the model is never offered ("Reserved placeholder that keeps
  // deferred tool loading active; never call this tool.", defer_loading: true): not a tool of ours.
  const all = tools as Array<{ name: string; description?: string; defer_loading?: boolean }>;
  const offered = all.filter((x) => !(x.name === 'DeferredToolPlaceholder' && x.defer_loading === true && /^Reserved placeholder/.test(x.description ?? '')));
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
