// nightshift-alert.sh's second channel, run as the alert unit runs it (sh, curl), without systemd:
// nightshift's own command cannot load (a bundle that is not there), so the script posts a plain
// alarm to NIGHTSHIFT_WEBHOOK_URL itself, as JSON or as ntfy's text. Controls: without the
// variable nothing reaches the endpoint; when nightshift reported itself, the script sends nothing.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startFakeDiscord, webhookUrl, type FakeDiscord } from '../fake-discord.js';
import { recorderPerFile, ROOT, tempDir } from '../helpers.js';

const SCRIPT = path.join(ROOT, 'deploy', 'systemd', 'nightshift-alert.sh');
const KEY = 'sk-test-alert-script-secret';
const TOKEN = 'tk_alertscripttoken0123456789abcdef';

const endpoint = recorderPerFile('ok', { strictJson: true });
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

// mutation: alarm-json-by-gsub, caught here.
// Issue 52: a cause holding a backslash made mawk's JSON invalid (its gsub took "\\\\" for one
// backslash), and Discord and the webhook answered 400: no alarm went out. Now every byte is
// escaped one at a time, and the text made valid UTF-8 first, under every awk.
const AWKS: Array<[string, string]> = [['mawk', '/usr/bin/mawk'], ['gawk', '/usr/bin/gawk'], ['busybox awk', '/bin/busybox']];
// A backslash before a space (no JSON escape), quotes, C0 and C1 controls, an escape sequence, a
// CR, a lone continuation byte, an overlong "/", a UTF-16 surrogate, a truncated 4-byte sequence.
const HOSTILE = Buffer.concat([
  Buffer.from('Error: cannot load C:\\ nightshift "quoted" \\u0041 \\'),
  Buffer.from([0x01, 0x08, 0x0b, 0x1b]), Buffer.from('[31mred'), Buffer.from([0x0d, 0x7f, 0xc2, 0x85, 0x80, 0xc0, 0xaf, 0xed, 0xa0, 0x80, 0xf0, 0x9f, 0x98]),
  Buffer.from(' still é € 😀 `tick`\n'),
]);

describe('the alarm under every awk, a cause of any bytes', () => {
  let discord: FakeDiscord;
  before(async () => (discord = await startFakeDiscord()));
  after(() => discord.close());

  // The script with `awk` on PATH being `bin`; COMMAND prints the hostile cause and fails.
  async function hostileAlarm(t: import('node:test').TestContext, bin: string, script = SCRIPT, format = 'json') {
    const dir = tempDir(t, 'nightshift-awk-');
    fs.mkdirSync(path.join(dir, 'bin'));
    fs.symlinkSync(bin, path.join(dir, 'bin', 'awk'));
    fs.writeFileSync(path.join(dir, 'cause'), HOSTILE);
    discord.messages.length = 0;
    discord.refused.length = 0;
    endpoint.refused.length = 0;
    got.length = 0;
    return new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = spawn('sh', [script, 'alert', 'nightshift.service', 'sh', '-c', 'cat "$0" >&2; exit 1', path.join(dir, 'cause')], {
        env: {
          PATH: `${path.join(dir, 'bin')}:${process.env.PATH}`, LANG: 'C.UTF-8', ANTHROPIC_API_KEY: KEY,
          MONITOR_SERVICE_RESULT: 'exit-code', MONITOR_EXIT_CODE: 'exited', MONITOR_EXIT_STATUS: '1',
          DISCORD_WEBHOOK_URL: webhookUrl(), NIGHTSHIFT_DISCORD_API: discord.apiBase,
          NIGHTSHIFT_WEBHOOK_URL: `${endpoint.base}/hook/${TOKEN}`, NIGHTSHIFT_WEBHOOK_FORMAT: format,
        },
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let stderr = '';
      child.stderr.on('data', (d) => (stderr += d));
      child.on('exit', (code) => resolve({ code, stderr }));
    });
  }
  const strictText = (b: Buffer) => new TextDecoder('utf-8', { fatal: true }).decode(b);
  // What the cause must read as, wherever it lands: its words, no control but newline and tab.
  const checkCause = (text: string) => {
    assert.match(text, /Error: cannot load C:\\ nightshift "quoted" \\u0041 \\\[31mred\uFFFD+ still é € 😀 'tick'/);
    assert.doesNotMatch(text, /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
  };

  for (const [name, bin] of AWKS) {
    const missing = fs.existsSync(bin) ? false : `${bin} is not installed (apt-get install ${name.split(' ')[0]})`;
    test(`${name}: Discord and the JSON webhook both take the alarm`, { skip: missing && process.env.CI !== 'true' ? missing : false }, async (t) => {
      const r = await hostileAlarm(t, bin);
      assert.equal(r.code, 1, r.stderr);
      assert.deepEqual(discord.refused, [], 'Discord refused nothing');
      assert.equal(discord.messages.length, 1, r.stderr);
      checkCause(discord.messages[0].body.content);
      assert.deepEqual(endpoint.refused.map((x) => x.bytes.toString('latin1')), [], 'the webhook refused nothing');
      assert.equal(got.length, 1, r.stderr);
      checkCause(JSON.parse(strictText(got[0].bytes)).summary);
      assert.ok(!discord.messages[0].body.content.includes(KEY) && !got[0].body.includes(KEY));
    });
    test(`${name}: ntfy's text body is valid UTF-8 with the cause`, { skip: missing && process.env.CI !== 'true' ? missing : false }, async (t) => {
      const r = await hostileAlarm(t, bin, SCRIPT, 'ntfy');
      assert.equal(got.length, 1, r.stderr);
      checkCause(strictText(got[0].bytes));
    });
  }

  // The script as it was: its json() by gsub. mawk writes one backslash for "\\\\".
  test('negative control: the gsub json() under mawk sends JSON Discord and the webhook refuse', { skip: !fs.existsSync('/usr/bin/mawk') && process.env.CI !== 'true' ? 'mawk is not installed' : false }, async (t) => {
    const text = fs.readFileSync(SCRIPT, 'utf8');
    const at = text.indexOf('\njson() {');
    assert.ok(at > 0, 'the script has its json()');
    const old = `${text.slice(0, at)}\njson() {\n  awk 'BEGIN { ORS = "" } { gsub(/\\\\/, "\\\\\\\\"); gsub(/"/, "\\\\\\""); gsub(/\\t/, "\\\\t"); printf "%s%s", (NR > 1 ? "\\\\n" : ""), $0 }'\n}\n${text.slice(text.indexOf('\n}\n', at) + 3)}`;
    const file = path.join(tempDir(t, 'nightshift-oldjson-'), 'nightshift-alert.sh');
    fs.writeFileSync(file, old);
    const r = await hostileAlarm(t, '/usr/bin/mawk', file);
    assert.equal(r.code, 1);
    assert.equal(discord.messages.length, 0, 'nothing reached Discord');
    assert.equal(discord.refused.length, 1);
    assert.equal(got.length, 0, 'nothing reached the webhook');
    assert.equal(endpoint.refused.length, 1);
    assert.match(r.stderr, /post failed/);
  });
});
