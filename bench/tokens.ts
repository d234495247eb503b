// `npm run bench tokens`: the bytes of a session's first request, the bare CLI against `nightshift
// run` with the default agent, split as the operator pays for them: system prompt, built-in tool
// definitions, memory tools, first message (issue 28). The prefix is written to the cache at each
// session's first call (sessions are hours apart: the cache is always cold), then read every turn.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { startFakeApi, text } from '../test/fake-api.js';
import { CLAUDE, claudeTestEnv, configYaml, nightshift, SESSION_USER, shareWithSession } from '../test/helpers.js';

type Split = { total: number; system: number; builtIn: number; memory: number; message: number; tools: number };

// Sonnet's rates per million tokens, and ~4 bytes a token: a rough price of the prefix.
const SONNET = { input: 3, cacheWrite: 3.75, cacheRead: 0.3 };
const TOKEN_BYTES = 4;

function split(body: any): Split {
  const tools: any[] = Array.isArray(body.tools) ? body.tools : [];
  const size = (x: unknown) => (x === undefined ? 0 : JSON.stringify(x).length);
  const mcp = tools.filter((t) => String(t.name).startsWith('mcp__'));
  const builtIn = tools.filter((t) => !String(t.name).startsWith('mcp__'));
  return { total: size(body), system: size(body.system), builtIn: size(builtIn), memory: size(mcp), message: size(body.messages?.[0]), tools: builtIn.length };
}

export async function tokensBench(): Promise<Record<string, unknown>> {
  const api = await startFakeApi();
  // Under /var/tmp: the wall's private /tmp would hide the vault; the session user passes through.
  const dir = fs.mkdtempSync(path.join('/var/tmp', 'nightshift-bench-tokens-'));
  try {
    if (SESSION_USER) fs.chmodSync(dir, 0o711);
    const first = new Map<string, any>();
    api.script('tokens', ({ body, prompt }) => {
      const who = prompt.includes('WHO=bare') ? 'bare' : 'nightshift';
      if (!first.has(who)) first.set(who, body);
      return text('Done.');
    });
    fs.mkdirSync(path.join(dir, 'vault'));
    shareWithSession(path.join(dir, 'vault'));
    fs.mkdirSync(path.join(dir, 'prompts'));
    fs.writeFileSync(path.join(dir, 'nightshift.yaml'), configYaml({ budget: { max_sessions_per_day: 1000 } }));
    // The default agent: no tools: of its own (an allowed_tools list: the CLI refuses bypassPermissions as root).
    fs.writeFileSync(path.join(dir, 'prompts', 'bench.md'), '---\nallowed_tools: ["Bash(echo:*)"]\n---\nSCENARIO=tokens WHO=nightshift\n');
    const env = claudeTestEnv(dir, api.url);
    await new Promise<void>((resolve, reject) => {
      const c = spawn(CLAUDE, ['-p', 'SCENARIO=tokens WHO=bare', '--output-format', 'stream-json', '--verbose', '--max-turns', '2', '--model', 'sonnet'], { env, cwd: path.join(dir, 'vault'), stdio: 'ignore' });
      c.on('error', reject);
      c.on('close', () => resolve());
    });
    const r = await nightshift(['run', 'bench', '--json'], env, dir);
    if (r.code !== 0) throw new Error(`nightshift run failed: ${r.stderr}`);
    const bare = split(first.get('bare'));
    const ours = split(first.get('nightshift'));
    const prefixUsd = (s: Split) => ((s.system + s.builtIn + s.memory) / TOKEN_BYTES / 1e6) * SONNET.cacheWrite;
    const row = (name: string, s: Split) => `| ${name} | ${s.total.toLocaleString('en')} | ${s.system.toLocaleString('en')} | ${s.builtIn.toLocaleString('en')} (${s.tools}) | ${s.memory.toLocaleString('en')} | ${s.message.toLocaleString('en')} | $${prefixUsd(s).toFixed(3)} |`;
    console.log('first request, JSON bytes:');
    console.log('| | total | system prompt | built-in tools | memory tools | first message | prefix written to the cache |');
    console.log('|---|---:|---:|---:|---:|---:|---:|');
    console.log(row('bare CLI', bare));
    console.log(row('nightshift run', ours));
    console.log(`ratio nightshift / bare: ${(ours.total / bare.total).toFixed(3)} (goal 0.5)`);
    return { bare, nightshift: ours, ratio: +(ours.total / bare.total).toFixed(3), prefix_usd: { bare: +prefixUsd(bare).toFixed(4), nightshift: +prefixUsd(ours).toFixed(4) } };
  } finally {
    await api.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
