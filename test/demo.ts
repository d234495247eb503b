// `npm run demo`: one offline session, end to end. Starts the loopback imitations of the Anthropic
// API and of Discord, makes a temporary vault (a git clone of a bare remote) with an example agent,
// runs the built `nightshift run` against it with the real Claude Code CLI, and shows what it left:
// the note in the vault and its commit, the memory it stored, the session state the next session
// starts with, and the report Discord received.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startFakeApi } from './fake-api.js';
import { startFakeDiscord } from './fake-discord.js';
import { money } from '../core/money.js';
import { counted } from '../core/words.js';
import { git, makeRepos } from './git-helpers.js';
import { BWRAP, CLAUDE, claudeTestEnv, closedToOthers, configYaml, nightshift, PINNED_CLAUDE, SESSION_USER, SESSION_USER_MADE, shareWithSession } from './helpers.js';

// Ends the demo once nightshift's refusal is printed.
class Refused extends Error {}

const api = await startFakeApi();
const discord = await startFakeDiscord();
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nightshift-demo-'));
// The demo cleans up after itself unless asked to keep its workspace.
const KEEP = process.env.NIGHTSHIFT_DEMO_KEEP === '1';
const say = (title: string, body: string) => process.stdout.write(`\n== ${title} ==\n${body.trimEnd()}\n`);
try {
  fs.mkdirSync(path.join(dir, 'prompts'));
  makeRepos(dir, path.join(dir, 'vault'));
  // Run as root, the session runs as session_user, as `nightshift init` would set it up.
  if (SESSION_USER) {
    fs.chmodSync(dir, 0o711);
    shareWithSession(path.join(dir, 'vault'));
    process.stdout.write(`Run as root: the session runs as ${SESSION_USER.name}, which the vault's group lets write it.\n`);
    if (SESSION_USER_MADE) process.stdout.write(`That user did not exist: the demo made it, as \`nightshift systemd install\` would (${SESSION_USER_MADE}).\n`);
    const closed = closedToOthers(fs.realpathSync(PINNED_CLAUDE));
    if (closed && CLAUDE !== PINNED_CLAUDE) process.stdout.write(`This clone lies in ${closed}, which ${SESSION_USER.name} cannot pass through: the session runs a copy of the CLI, ${CLAUDE}.\n`);
  }
  fs.writeFileSync(path.join(dir, 'nightshift.yaml'), configYaml({ top: 'git:\n  enabled: true\n', discord: { api_base: `${discord.apiBase}` } }));
  // The imitation API plays the model: it writes a note, stores what it learned, and reports.
  api.script('demo', ({ turn, lastToolResult }) => {
    if (turn === 0) return { kind: 'message', blocks: [{ type: 'tool_use', name: 'Bash', input: { command: "printf '# Hello\\nWritten by the demo agent.\\n' > hello.md" } }] };
    if (turn === 1) return { kind: 'message', blocks: [{ type: 'tool_use', name: 'mcp__nightshift_memory__observe', input: { text: 'The vault greets visitors in hello.md', category: 'project' } }] };
    return {
      kind: 'message',
      blocks: [{ type: 'text', text: `Wrote hello.md and remembered it (${lastToolResult ? 'stored' : 'not stored'}).\nOBSERVE: hello.md is the vault's front page\nTHREAD: link hello.md from an index note` }],
    };
  });
  fs.writeFileSync(
    path.join(dir, 'prompts', 'demo.md'),
    `---\ndescription: "Writes a note, remembers it (the imitation API plays the model)."\nallowed_tools: ["Bash"]\n---\nSCENARIO=demo\n`,
  );
  const env = { ...claudeTestEnv(dir, api.url), DISCORD_WEBHOOK_URL: discord.webhookUrl };
  process.stderr.write(`nightshift demo: imitation API on ${api.url}, Discord on ${discord.apiBase}, workspace ${dir}\n`);
  process.stdout.write(BWRAP
    ? 'The session runs in a bubblewrap sandbox: the vault writable, state, logs, config and your home out of sight.\n'
    : 'bubblewrap cannot make a sandbox on this machine (apt-get install bubblewrap): this demo runs with `sandbox: none`.\n');
  const ran = await nightshift(['run', 'demo', '--json'], env, dir);
  if (!ran.stdout.trim()) throw new Error(`nightshift run printed nothing (exit ${ran.code}):\n${ran.stderr.slice(-3000)}`);
  const r = JSON.parse(ran.stdout);
  // nightshift refused the session (no session ran): its own words are the demo's answer.
  if (r.refused) {
    process.stderr.write(`nightshift refused the demo's session (${r.code}, exit ${ran.code}): ${r.reason}\n`);
    process.exitCode = ran.code || 1;
    throw new Refused();
  }
  const day = r.started_at.slice(0, 10);
  say('session', [
    `outcome     ${r.outcome} (exit ${ran.code})`,
    `cost        ${money(r.cost_usd)}${r.cost_estimated ? ' (estimated)' : ''}, ${counted(r.turns, 'turn')}, ${r.duration_ms} ms`,
    `result      ${r.result}`,
    `sandbox     ${BWRAP ? 'bwrap' : 'none'}`,
    `vault file  ${path.join(dir, 'vault', 'hello.md')}`,
    `commit      ${git(path.join(dir, 'vault'), 'log', '-1', '--format=%h %s')} (pushed to ${path.join(dir, 'remote.git')})`,
    `daily log   ${path.join(dir, 'logs', `${day}.log`)}`,
    `transcript  ${r.transcript}`,
  ].join('\n'));
  const memory = await nightshift(['memory', 'query', 'vault front page hello', '--limit', '5'], env, dir);
  say('memory (nightshift memory query "vault front page hello")', memory.stdout || memory.stderr);
  const state = await nightshift(['state', '--agent', 'demo'], env, dir);
  say('session state the next session starts with (nightshift state --agent demo)', state.stdout || state.stderr);
  const embed = discord.messages.at(-1)?.body?.embeds?.[0];
  say('Discord report (received by the loopback Discord)', embed ? [embed.title, embed.description ?? '', ...(embed.fields ?? []).map((f: { name: string; value: string }) => `${f.name}: ${f.value}`)].join('\n') : 'none received');
  process.stdout.write(KEEP
    ? `\nKept (NIGHTSHIFT_DEMO_KEEP=1). Try: NIGHTSHIFT_CONFIG=${path.join(dir, 'nightshift.yaml')} ${process.execPath} dist/cli/bin.js status\n`
    : `\nThe workspace ${dir} is removed now (NIGHTSHIFT_DEMO_KEEP=1 npm run demo keeps it to look around).\n`);
  process.exitCode = ran.code ?? 1;
} catch (err) {
  if (!(err instanceof Refused)) throw err;
} finally {
  await api.close();
  await discord.close();
  if (!KEEP) fs.rmSync(dir, { recursive: true, force: true });
}
