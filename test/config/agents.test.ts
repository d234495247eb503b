import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { loadAgent, loadAgents, offeredTools, parseAgent, readAgents, splitFrontMatter } from '../../config/agents.js';
import { validateConfig } from '../../config/config.js';
import { ConfigError, UsageError } from '../../core/errors.js';
import { ROOT, tempDir } from '../helpers.js';

const config = validateConfig({ claude: { model: 'haiku', max_turns: 7, timeout: '15m' } }, '/cfg/nightshift.yaml').config!;

describe('agents', () => {
  test('front matter overrides config; what it leaves out falls back', () => {
    const a = parseAgent('x', '/p/x.md', '---\nmodel: opus\ntimeout: 90s\nallowed_tools: [Read]\nmax_runs_per_day: 2\n---\nDo the thing.\n', config);
    assert.equal(a.model, 'opus');
    assert.equal(a.timeoutMs, 90_000);
    assert.equal(a.maxTurns, 7);
    assert.deepEqual(a.allowedTools, ['Read']);
    assert.equal(a.maxRunsPerDay, 2);
    assert.equal(a.prompt, 'Do the thing.');
  });

  // [site claude.tools, the agent's tools:, the allow-list, what is offered]
  const OFFERED: Array<[string, string[] | 'default', string[] | 'default' | undefined, string[] | null, string[] | 'default']> = [
    ['no allow-list: the site\'s set', ['Bash', 'Read'], undefined, null, ['Bash', 'Read']],
    ['no allow-list: the agent\'s own set as written', ['Bash', 'Read'], ['Grep'], null, ['Grep']],
    ['no allow-list: `default` stays the whole set', 'default', undefined, null, 'default'],
    ['[Read, Write] offers no Bash', ['Bash', 'Read', 'Edit', 'Write', 'Glob', 'Grep'], undefined, ['Read', 'Write'], ['Read', 'Write']],
    ['a rule with a pattern names its tool once', ['Bash'], undefined, ['Bash(git:*)', 'Bash(ls:*)', 'Read'], ['Bash', 'Read']],
    ['a named tool outside the lean set is offered', ['Bash', 'Read'], undefined, ['WebFetch(domain:example.com)'], ['WebFetch']],
    ['MCP rules name no built-in tool: none offered', ['Bash', 'Read'], undefined, ['mcp__nightshift_memory__query'], []],
    ['the site\'s `default` does not widen an allow-list', 'default', undefined, ['Read'], ['Read']],
    ['the agent\'s `default` does not widen it either', ['Bash'], 'default', ['Grep'], ['Grep']],
    ['the agent\'s own list narrows, never widens', ['Bash'], ['Read', 'Bash', 'Glob'], ['Bash(echo:*)', 'Read', 'Write'], ['Bash', 'Read']],
    ['the agent\'s own list and the rules share nothing: none', ['Bash'], ['Read'], ['Bash'], []],
  ];
  for (const [what, site, own, allowed, want] of OFFERED) {
    test(`offered tools: ${what}`, () => assert.deepEqual(offeredTools(site, own, allowed), want));
  }

  test('parseAgent offers what the allow-list names: the agent\'s own, or claude.permission_mode\'s list', () => {
    assert.deepEqual(parseAgent('x', '/p/x.md', 'hi', config).tools, ['Bash', 'Read', 'Edit', 'Write', 'Glob', 'Grep']);
    assert.deepEqual(parseAgent('x', '/p/x.md', '---\nallowed_tools: [Read, Write]\n---\nhi', config).tools, ['Read', 'Write']);
    assert.deepEqual(parseAgent('x', '/p/x.md', '---\ntools: [Read, Grep]\nallowed_tools: [Bash, Read]\n---\nhi', config).tools, ['Read']);
    assert.equal(parseAgent('x', '/p/x.md', '---\ntools: default\n---\nhi', config).tools, 'default');
    assert.throws(() => parseAgent('x', '/p/x.md', '---\ntools: [Read, "rm -rf"]\n---\nhi', config), /tools\[1\]: Expected a tool name/);
    const site = validateConfig({ claude: { tools: 'default' } }, '/cfg/nightshift.yaml').config!;
    assert.equal(parseAgent('x', '/p/x.md', 'hi', site).tools, 'default');
    const listed = validateConfig({ claude: { permission_mode: ['Grep', 'Bash(git:*)'] } }, '/cfg/nightshift.yaml').config!;
    assert.deepEqual(parseAgent('x', '/p/x.md', 'hi', listed).tools, ['Grep', 'Bash']);
  });

  test('readAgents keeps the good agents and names the broken file; loadAgents (doctor\'s strict read) throws on it', (t) => {
    const dir = tempDir(t);
    const site = validateConfig({ agents_dir: './prompts' }, path.join(dir, 'nightshift.yaml')).config!;
    fs.mkdirSync(site.agents_dir);
    fs.writeFileSync(path.join(site.agents_dir, 'good.md'), 'Do the good thing.\n');
    fs.writeFileSync(path.join(site.agents_dir, 'broken.md'), '---\nmax_turns: -1\n---\nhi\n');
    const r = readAgents(site);
    assert.deepEqual(r.agents.map((a) => a.name), ['good']);
    assert.deepEqual(r.broken.map((b) => b.name), ['broken']);
    assert.match(r.broken[0].problems[0], /^max_turns: /);
    assert.throws(() => loadAgents(site), /Invalid agent file .*broken\.md/);
  });

  test('a file without front matter is all prompt', () => {
    assert.deepEqual(splitFrontMatter('just a prompt'), { data: null, body: 'just a prompt' });
    const a = parseAgent('x', '/p/x.md', 'just a prompt', config);
    assert.equal(a.model, 'haiku');
    assert.equal(a.allowedTools, null);
  });

  test('a bad field names the agent file and the field', () => {
    assert.throws(() => parseAgent('x', '/p/x.md', '---\nmax_turns: -3\n---\nhi', config), (err: unknown) => {
      assert.ok(err instanceof ConfigError);
      assert.match(err.message, /\/p\/x\.md[\s\S]*max_turns: /);
      return true;
    });
    assert.throws(() => parseAgent('x', '/p/x.md', '---\ntimeout: later\n---\nhi', config), /timeout: Expected a duration/);
    assert.throws(() => parseAgent('x', '/p/x.md', '---\nmodle: opus\n---\nhi', config), /modle: not a setting here\. Did you mean `model`\?/);
    assert.throws(() => parseAgent('x', '/p/x.md', '---\ndescription: only\n---\n\n', config), /Expected a prompt/);
  });

  test('an unknown agent is a usage error listing the known ones', (t) => {
    const dir = tempDir(t);
    fs.writeFileSync(path.join(dir, 'alpha.md'), 'hello');
    const c = { ...config, agents_dir: dir };
    assert.throws(() => loadAgent(c, 'beta'), (err: unknown) => err instanceof UsageError && /known: alpha/.test(err.message));
    assert.throws(() => loadAgent(c, '../etc/passwd'), UsageError);
  });

  test('the shipped example agents are valid', () => {
    const agents = loadAgents({ ...config, agents_dir: path.join(ROOT, 'prompts') });
    assert.ok(agents.length >= 2);
    for (const a of agents) assert.ok(a.description && a.prompt, a.name);
  });

  test('network: an agent\'s own list, open or none replaces the site\'s; absent, the site\'s holds', () => {
    const site = validateConfig({ network: ['Docs.Example.com.'] }, '/cfg/nightshift.yaml').config!;
    assert.deepEqual(site.network, ['docs.example.com']);
    assert.deepEqual(parseAgent('x', '/p/x.md', 'Go.', site).network, ['docs.example.com']);
    assert.equal(parseAgent('x', '/p/x.md', '---\nnetwork: open\n---\nGo.\n', site).network, 'open');
    assert.equal(parseAgent('x', '/p/x.md', '---\nnetwork: none\n---\nGo.\n', site).network, 'none');
    assert.equal(parseAgent('x', '/p/x.md', '---\nnetwork: []\n---\nGo.\n', site).network, 'none');
    assert.deepEqual(parseAgent('x', '/p/x.md', '---\nnetwork: [api.github.com, "*.wikipedia.org"]\n---\nGo.\n', site).network, ['api.github.com', '*.wikipedia.org']);
    assert.equal(parseAgent('x', '/p/x.md', 'Go.', config).network, 'none', 'the default: nothing');
  });

  test('a bad network: entry names the field and the entry', () => {
    assert.throws(() => parseAgent('x', '/p/x.md', '---\nnetwork: [ok.example, "*.com", "http://x.example"]\n---\nGo.\n', config), (err: ConfigError) => {
      assert.match(err.message, /network\[1\]: Expected a wildcard below a domain/);
      assert.match(err.message, /network\[2\]: Expected a host name like `example\.com`.*got `http:\/\/x\.example`/);
      return true;
    });
    assert.throws(() => parseAgent('x', '/p/x.md', '---\nnetwork: everything\n---\nGo.\n', config), /network: Expected `none`, `open` or a list of host names/);
  });
});
