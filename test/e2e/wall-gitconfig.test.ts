// A hostile review of the shell prefix's domain (sessions/wall/landlock.ts): the session's HOME is
// writable, and git reads ~/.gitconfig there; core.fsmonitor (and core.pager) run a program of
// the session's on every git status. Were the CLI to run git itself (outside any Bash command's
// domain) after the session planted one, that program would reach bwrap's pid 1. Measured, 2.1.197:
// its Write, Read, Edit, Grep and Glob run no git; the planted program runs only under the
// session's own git status, in a domain (pid 1's descriptor links do not read).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { NEEDS_BWRAP, configYaml, fakeApiPerFile, nightshift, workspace, writeAgent } from '../helpers.js';
import { git } from '../git-helpers.js';
import { bash, text, type Reply, type Turn } from '../fake-api.js';

const api = fakeApiPerFile();
const tool = (name: string, input: Record<string, unknown>): Reply => ({
  kind: 'message', blocks: [{ type: 'text', text: `I will call ${name}.` }, { type: 'tool_use', name, input }], stopReason: 'tool_use',
});

describe('a program planted in the session\'s ~/.gitconfig', { skip: NEEDS_BWRAP }, () => {
  test('runs only in a Bash command\'s domain, never from the CLI\'s own tools', { timeout: 3 * 60_000 }, async (t) => {
    const yaml = configYaml({ top: 'hooks:\n  enabled: false\nsandbox: bwrap\ngit:\n  enabled: false\ngemini:\n  base_url: "http://127.0.0.1:9"\n', claude: { timeout: '90s', idle_timeout: '30s' } });
    const ws = workspace(t, api.url, yaml, { base: '/var/tmp', prefix: 'nightshift-gitcfg-' });
    const V = ws.vault;
    fs.writeFileSync(path.join(V, 'a.txt'), 'hello\n');
    git(V, 'init', '-q');
    git(V, 'add', '.');
    git(V, '-c', 'user.email=a@b', '-c', 'user.name=a', 'commit', '-qm', 'x');
    const seen: string[] = [];
    const steps: Reply[] = [
      bash('echo hi; cat ~/.gitconfig; git status --short 2>&1 | head -3'),
      bash(`echo ${Buffer.from(`printf '#!/bin/sh\\nls -l /proc/1/fd > ${V}/fsm-$$$$.txt 2>&1\\nexit 1\\n' > ${V}/fsm.sh; chmod +x ${V}/fsm.sh; printf '[core]\\n\\tfsmonitor = ${V}/fsm.sh\\n\\tpager = ${V}/fsm.sh\\n' >> ~/.gitconfig && echo planted; cat ~/.gitconfig`).toString('base64')} | base64 -d | sh`),
      tool('Write', { file_path: `${V}/b.txt`, content: 'new\n' }),
      tool('Read', { file_path: `${V}/a.txt` }),
      tool('Edit', { file_path: `${V}/a.txt`, old_string: 'hello', new_string: 'bye' }),
      tool('Grep', { pattern: 'bye', path: V }),
      tool('Glob', { pattern: '*.txt', path: V }),
      bash('sleep 1; git status --short >/dev/null 2>&1; ls fsm-* 2>&1'),
    ];
    api.script('gitcfg', ({ turn, lastToolResult }: Turn) => {
      if (turn > 0) seen.push(lastToolResult ?? '');
      return steps[turn] ?? text('Done.');
    });
    writeAgent(ws, 'g', 'SCENARIO=gitcfg', { allowed_tools: ['Bash', 'Read', 'Write', 'Edit', 'Grep', 'Glob'], max_turns: 30 });
    const ran = await nightshift(['run', 'g', '--json'], ws.env, ws.dir);
    t.diagnostic(`exit ${ran.code}; ${ran.stdout.slice(0, 200)}`);
    t.diagnostic(`seen ${JSON.stringify(seen)}`);
    const runs = fs.readdirSync(V).filter((x) => x.startsWith('fsm-') && x.endsWith('.txt')).map((f) => fs.readFileSync(path.join(V, f), 'utf8'));
    t.diagnostic(`the planted program ran ${runs.length} time(s): ${JSON.stringify(runs)}`);
    assert.match(seen[1], /planted/);
    assert.ok(runs.length >= 1, 'the plant is live: the session\'s own git status ran it');
    for (const r of runs) {
      assert.match(r, /Permission denied/);
      assert.doesNotMatch(r, /\d -> /, `pid 1's descriptors did not read: ${r}`);
    }
  });
});
