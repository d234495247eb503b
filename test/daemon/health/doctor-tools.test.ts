// The example agents as shipped pass doctor on a fresh `init` site, and each tools problem gets its
// own fix: an allowed tool its `tools:` leaves out, and WebFetch without a network (WebSearch runs
// at the API and needs none).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { nightshift, ROOT, tempDir } from '../../helpers.js';

type Check = { name: string; status: string; detail: string; fix: string | null };

async function doctorOn(dir: string): Promise<Check[]> {
  const env = { PATH: process.env.PATH, HOME: dir, NIGHTSHIFT_CONFIG: path.join(dir, 'nightshift.yaml'), ANTHROPIC_API_KEY: 'test-key-doctor' };
  const ran = await nightshift(['doctor', '--json'], env, dir);
  return JSON.parse(ran.stdout).checks;
}

// control: the researcher as shipped before (WebFetch allowed, no network:) makes `tools` warn.
test('every prompts/*.md passes doctor\'s agent and tools checks on a fresh init site', async (t) => {
  const dir = path.join(tempDir(t), 'site');
  const init = await nightshift(['init', dir], { PATH: process.env.PATH, HOME: dir }, '/');
  assert.equal(init.code, 0, init.stderr);
  for (const f of fs.readdirSync(path.join(ROOT, 'prompts'))) fs.copyFileSync(path.join(ROOT, 'prompts', f), path.join(dir, 'prompts', f));
  const checks = await doctorOn(dir);
  const tools = checks.find((c) => c.name === 'tools');
  assert.equal(tools?.status, 'ok', JSON.stringify(tools));
  assert.match(tools.detail, /researcher: .*WebSearch/);
  const agents = checks.filter((c) => /agent/.test(c.name) && c.status === 'fail');
  assert.deepEqual(agents, []);
});

test('doctor gives each tools problem its own fix: tools: for an allowed tool left out, network: for WebFetch without one', async (t) => {
  const dir = path.join(tempDir(t), 'site');
  assert.equal((await nightshift(['init', dir], { PATH: process.env.PATH, HOME: dir }, '/')).code, 0);
  const agent = (name: string, front: string) => fs.writeFileSync(path.join(dir, 'prompts', `${name}.md`), `---\n${front}---\nWork.\n`);
  agent('fetcher', 'allowed_tools: [Read, WebFetch]\n');
  agent('narrow', 'allowed_tools: [Read, Write]\ntools: [Read]\n');
  agent('searcher', 'allowed_tools: [Read, WebSearch]\n');
  agent('walled', 'allowed_tools: [Read, WebFetch]\nnetwork: [en.wikipedia.org]\n');
  const tools = (await doctorOn(dir)).find((c) => c.name === 'tools');
  assert.equal(tools?.status, 'warn', JSON.stringify(tools));
  assert.match(tools.detail, /fetcher: WebFetch cannot reach the web: the agent names no network/);
  assert.match(tools.detail, /narrow: allowed_tools names Write, not in its tools/);
  assert.doesNotMatch(tools.detail, /searcher:[^;]*cannot|walled:[^;]*cannot/);
  assert.match(tools.fix ?? '', /fetcher: give it the hosts it fetches from \(`network: \[/);
  assert.match(tools.fix ?? '', /narrow: add Write to its `tools:`/);
  assert.doesNotMatch(tools.fix ?? '', /fetcher: add/);
});
