// `npm run demo`: one offline session, end to end. Starts the loopback imitation of the API,
// makes a temporary vault with an example agent, runs the built `nightshift run` against it with
// the real Claude Code CLI, and prints the outcome and where the logs went.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startFakeApi } from './fake-api.js';
import { claudeTestEnv, configYaml, nightshift } from './helpers.js';

const api = await startFakeApi();
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nightshift-demo-'));
try {
  for (const d of ['vault', 'prompts']) fs.mkdirSync(path.join(dir, d));
  fs.writeFileSync(path.join(dir, 'nightshift.yaml'), configYaml());
  fs.writeFileSync(
    path.join(dir, 'prompts', 'demo.md'),
    `---\ndescription: "Writes a note into the vault (the imitation API plays the model)."\nallowed_tools: ["Bash"]\n---\nSCENARIO=write FILE=hello.md CONTENT=hello-from-nightshift\n`,
  );
  process.stderr.write(`nightshift demo: imitation API on ${api.url}, workspace ${dir}\n`);
  const ran = await nightshift(['run', 'demo', '--json'], claudeTestEnv(dir, api.url), dir);
  const r = JSON.parse(ran.stdout);
  const day = r.started_at.slice(0, 10);
  process.stdout.write(
    [
      `outcome     ${r.outcome} (exit ${ran.code})`,
      `cost        $${r.cost_usd.toFixed(4)}${r.cost_estimated ? ' (estimated)' : ''}, ${r.turns} turns, ${r.duration_ms} ms`,
      `result      ${r.result}`,
      `vault file  ${path.join(dir, 'vault', 'hello.md')}: ${fs.readFileSync(path.join(dir, 'vault', 'hello.md'), 'utf8').trim()}`,
      `daily log   ${path.join(dir, 'logs', `${day}.log`)}`,
      `transcript  ${r.transcript}`,
      `ledger      ${path.join(dir, 'state', 'ledger.db')}  (try: NIGHTSHIFT_CONFIG=${path.join(dir, 'nightshift.yaml')} node dist/daemon/bin.js sessions)`,
      '',
    ].join('\n'),
  );
  process.exitCode = ran.code ?? 1;
} finally {
  await api.close();
}
