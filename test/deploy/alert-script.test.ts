// nightshift-alert.sh's second channel, run as the alert unit runs it (sh, curl), without systemd:
// nightshift's own command cannot load (a bundle that is not there), so the script posts a plain
// alarm to NIGHTSHIFT_WEBHOOK_URL itself, as JSON or as ntfy's text. Controls: without the
// variable nothing reaches the endpoint; when nightshift reported itself, the script sends nothing.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { test } from 'node:test';
import { recorderPerFile, ROOT } from '../helpers.js';

const SCRIPT = path.join(ROOT, 'deploy', 'systemd', 'nightshift-alert.sh');
const KEY = 'sk-test-alert-script-secret';
const TOKEN = 'tk_alertscripttoken0123456789abcdef';

const endpoint = recorderPerFile('ok');
const got = endpoint.got;

// The script as the alert unit starts it: COMMAND is node with a bundle that cannot be loaded.
function alarm(env: NodeJS.ProcessEnv, command = [process.execPath, '/opt/nightshift-gone/dist/cli/bin.js', 'alert', '--unit', 'nightshift.service']): Promise<{ code: number | null; stderr: string }> {
  got.length = 0;
  return new Promise((resolve) => {
    const child = spawn('sh', [SCRIPT, 'alert', 'nightshift.service', ...command], {
      env: { PATH: process.env.PATH, ANTHROPIC_API_KEY: KEY, MONITOR_SERVICE_RESULT: 'exit-code', MONITOR_EXIT_CODE: 'exited', MONITOR_EXIT_STATUS: '1', ...env },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    child.on('exit', (code) => resolve({ code, stderr }));
  });
}

test('nightshift cannot load: the script posts a plain JSON alarm to the webhook, the cause in it, no secret', async () => {
  const r = await alarm({ NIGHTSHIFT_WEBHOOK_URL: `${endpoint.base}/hook/${TOKEN}` });
  assert.equal(r.code, 1, r.stderr);
  assert.match(r.stderr, /nightshift-alert\.sh: nightshift could not report \(nightshift\.service, exit 1\): sent a plain alarm to the webhook/);
  assert.equal(got.length, 1, r.stderr);
  assert.equal(got[0].url, `/hook/${TOKEN}`);
  assert.equal(got[0].headers['content-type'], 'application/json');
  const body = JSON.parse(got[0].body);
  assert.deepEqual([body.source, body.event, body.plain, body.unit, body.mode, body.exit], ['nightshift', 'alarm', true, 'nightshift.service', 'alert', 1]);
  assert.match(body.title, /^nightshift alarm on .+: nightshift\.service$/);
  assert.match(body.summary, /^unit nightshift\.service failed: result=exit-code code=exited status=1\nnightshift itself could not report it \(exit 1\):\n[\s\S]*Cannot find module/);
  assert.ok(!got[0].body.includes(KEY) && !r.stderr.includes(TOKEN), 'no secret in the alarm, the URL in no line');
});

// The monitor outside the host hears of it too, as a failure.
// mutation: the script pings success (NIGHTSHIFT_PING_URL without /fail), caught here.
test('nightshift cannot load: the script pings the monitor\'s /fail with the cause; control: without the URL, no ping', async () => {
  const r = await alarm({ NIGHTSHIFT_PING_URL: `${endpoint.base}/ping/${TOKEN}` });
  assert.equal(r.code, 1, r.stderr);
  assert.match(r.stderr, /pinged the monitor: fail/);
  assert.deepEqual(got.map((g) => g.url), [`/ping/${TOKEN}/fail`]);
  assert.match(got[0].body, /^unit nightshift\.service failed: result=exit-code code=exited status=1\nnightshift itself could not report it \(exit 1\):\n[\s\S]*Cannot find module/);
  assert.ok(!got[0].body.includes(KEY), 'no secret in the ping');
  assert.doesNotMatch((await alarm({})).stderr, /pinged the monitor/);
  assert.equal(got.length, 0);
});

test('ntfy: the cause as plain text with Title, Priority and Tags', async () => {
  const r = await alarm({ NIGHTSHIFT_WEBHOOK_URL: `${endpoint.base}/topic-${TOKEN}`, NIGHTSHIFT_WEBHOOK_FORMAT: 'ntfy' });
  assert.equal(got.length, 1, r.stderr);
  assert.match(got[0].headers['content-type'] ?? '', /^text\/plain/);
  assert.match(String(got[0].headers.title), /^nightshift alarm on .+: nightshift\.service$/);
  assert.equal(got[0].headers.priority, '5');
  assert.equal(got[0].headers.tags, 'rotating_light,alert');
  assert.match(got[0].body, /^unit nightshift\.service failed: [\s\S]*Cannot find module[\s\S]*\(plain: nightshift could not send its own report\)$/);
});

test('control: without NIGHTSHIFT_WEBHOOK_URL nothing reaches the endpoint, and the script says there is no channel', async () => {
  const r = await alarm({});
  assert.equal(r.code, 1);
  assert.equal(got.length, 0);
  assert.match(r.stderr, /no channel to send on \(DISCORD_WEBHOOK_URL, NIGHTSHIFT_WEBHOOK_URL\): the journal is all there is/);
});

test('control: when nightshift reported itself (its mark made), the script posts nothing of its own', async () => {
  const r = await alarm({ NIGHTSHIFT_WEBHOOK_URL: `${endpoint.base}/hook/${TOKEN}` }, ['sh', '-c', ': > "$NIGHTSHIFT_REPORTED"']);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(got.length, 0);
});
