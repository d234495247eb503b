// `nightshift web` in a real browser (Debian's Chromium, driven by playwright-core): a site with a
// week of sessions and fires written through the ledger's and the fires' own modules, and one
// session the real CLI made against the fake API. Each section's numbers are read from the page
// and checked against what the test wrote (not against the page's code); a session's `<script>`
// shows as text and never runs; no token, 403; only 127.0.0.1 answers, and a walled session
// (the real CLI in bwrap) cannot reach it. A screenshot of the page
// goes to docs/status-page.png with NIGHTSHIFT_SCREENSHOT=1.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import { Ledger } from '../../budget/ledger.js';
import { Fires, type FireAction } from '../../budget/fires.js';
import { bash, text } from '../fake-api.js';
import { BWRAP, configYaml, fakeApiPerFile, ledgerRows, nightshift, ROOT, runJson, startNightshift, tempDir, waitFor, workspace, writeAgent } from '../helpers.js';

const CHROMIUM = '/usr/bin/chromium';
const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const EVIL = '<script>window.__pwned = 1</script> & "quoted"';
const api = fakeApiPerFile();
const DAY = 86_400_000;
const dayOf = (t: number) => new Date(t).toISOString().slice(0, 10);

if (!fs.existsSync(CHROMIUM) && process.env.CI === 'true') throw new Error(`CI=true but ${CHROMIUM} is missing: .ci/run installs it`);

describe('nightshift web in a browser', { skip: fs.existsSync(CHROMIUM) ? false : `no ${CHROMIUM} (apt-get install -y --no-install-recommends chromium)` }, () => {
  test('each section shows the site\'s numbers; a session\'s <script> is text; 403 without the token; loopback only', async (t) => {
    const { chromium } = await import('playwright-core');
    const ws = workspace(t, api.url, configYaml({ top: 'git:\n  enabled: false\ndispatch:\n  - agent: gardener\n', budget: { timezone: 'UTC', max_usd_per_day: 5 } }));
    writeAgent(ws, 'gardener', 'SCENARIO=text');
    fs.writeFileSync(path.join(ws.prompts, 'broken.md'), '---\nmax_turns: lots\n---\nhi\n');
    // One session by the real CLI, today.
    const { ran, record } = await runJson(ws, 'gardener');
    assert.equal(ran.code, 0, ran.stderr);
    const now = Date.now();
    const today = dayOf(now);

    // A week of sessions, written through the ledger's own module: two agents, one a day each.
    const ledger = Ledger.open(path.join(ws.state, 'ledger.db'));
    const written: Array<{ id: string; day: string; agent: string; cost: number }> = [];
    const transcript = path.join(ws.dir, 'evil.jsonl');
    fs.writeFileSync(transcript, `${JSON.stringify({ type: 'assistant', message: { content: [{ type: 'text', text: EVIL }] } })}\n`);
    for (let i = 1; i <= 7; i++) {
      for (const [agent, cost] of [['gardener', 0.25 * i], ['scout', 0.1 * i]] as const) {
        const start = now - i * DAY;
        const open = { id: `w-${agent}-${i}`, agent, day: dayOf(start), started_at: new Date(start).toISOString(), transcript: i === 1 && agent === 'scout' ? transcript : null, model: 'sonnet', supervisor_pid: process.pid, supervisor_start: null };
        ledger.open(open);
        ledger.settle(open, { outcome: 'ok', ended_at: new Date(start + 60_000).toISOString(), duration_ms: 60_000, cost_usd: cost, turns: i, exit_code: 0, result: i === 1 && agent === 'scout' ? EVIL : 'done', error: null, input_tokens: 1, output_tokens: 1, cost_estimated: false });
        written.push({ id: open.id, day: open.day, agent, cost });
      }
    }
    ledger.close();
    // A week of fires through the fires' own module: one every 3 hours, by turns a skip and a dream.
    const fires = Fires.open(path.join(ws.state, 'fires.db'));
    const actions: FireAction[] = ['skip', 'dream', 'skip', 'refused'];
    let within48 = 0;
    for (let k = 1; k <= 7 * 8; k++) {
      const at = new Date(now - k * 3 * 3_600_000 + 60_000).toISOString();
      const id = fires.begin({ at, kind: 'tick', trigger: 'timer', slot: null, late: null, supervisor_pid: process.pid, supervisor_start: null });
      fires.settle(id, { action: actions[k % 4], agent: null, rule: null, session: null, outcome: null, reason: `fire ${k}`, passed_over: [], exit_code: 0, ended_at: at });
      if (now - Date.parse(at) <= 48 * 3_600_000) within48++;
    }
    fires.close();
    // The memory store: two observations through the real command.
    for (const text of ['the gardener waters the roses on tuesdays', 'postgres backups run at 03:00 from cron'])
      assert.equal((await nightshift(['memory', 'observe', text], ws.env, ws.dir)).code, 0);
    // A dream, so the page has its metrics to show.
    assert.equal((await nightshift(['memory', 'dream'], ws.env, ws.dir)).code, 0);
    const memoryStats = JSON.parse((await nightshift(['memory', 'stats', '--json'], ws.env, ws.dir)).stdout);

    const web = startNightshift(['web', '--port', '0'], ws.env, ws.dir, t);
    let url = '';
    web.child.stdout!.on('data', (c) => (url ||= /(http:\/\/127\.0\.0\.1:\d+\/[A-Za-z0-9_-]+\/)/.exec(String(c))?.[1] ?? ''));
    await waitFor(() => url !== '', 20_000, 'nightshift web to print its URL');
    t.after(() => web.child.kill('SIGTERM'));

    const userDataDir = tempDir(t, 'chromium-');
    const browser = await chromium.launchPersistentContext(userDataDir, { executablePath: CHROMIUM, headless: true, args: FLAGS, viewport: { width: 1200, height: 900 } });
    t.after(() => browser.close());
    const page = browser.pages()[0] ?? (await browser.newPage());
    const res = await page.goto(url);
    assert.equal(res?.status(), 200);

    // now: today's one session (the CLI's), of the day's cap.
    assert.match((await page.textContent('#budget-sessions')) ?? '', /^1 of \d+$/);
    // Each agent's state: gardener's next due time, broken's invalid file.
    const status = JSON.parse((await nightshift(['status', '--json'], ws.env, ws.dir)).stdout);
    assert.ok(status.next.next_due.gardener);
    assert.match((await page.textContent('#now tr[data-agent="gardener"]')) ?? '', /^gardener\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC(ready|held)/);
    assert.match((await page.textContent('#now tr[data-agent="broken"]')) ?? '', /invalid: .*broken\.md: .*max_turns/);
    // The timer's next ticks, read from the page: no timer here, so the default hourly, six of them,
    // an hour apart from the next whole hour on.
    const shownTicks = (await page.locator('#next-ticks span.tick').allTextContents()).map((x) => Date.parse(x.replace(' UTC', ':00Z').replace(' ', 'T')));
    assert.equal(shownTicks.length, 6);
    assert.equal(shownTicks[0] % 3_600_000, 0);
    assert.ok(shownTicks[0] > now && shownTicks[0] <= Date.now() + 3_600_000, `the first tick ${new Date(shownTicks[0]).toISOString()} is the next whole hour`);
    shownTicks.forEach((x, i) => i && assert.equal(x - shownTicks[i - 1], 3_600_000));
    // spend: 30 bars, one per day; each written day's cost read from its bar.
    assert.equal(await page.locator('svg.spend g.day').count(), 30);
    const cli = ledgerRows(ws.dir).find((r) => r.id === record.id);
    const byDay = new Map<string, number>([[today, cli.cost_usd]]);
    for (const w of written) byDay.set(w.day, (byDay.get(w.day) ?? 0) + w.cost);
    for (const [d, cost] of byDay) {
      const shown = Number(await page.getAttribute(`svg.spend g.day[data-date="${d}"]`, 'data-cost'));
      assert.ok(Math.abs(shown - cost) < 1e-6, `${d}: ${shown} vs ${cost}`);
    }
    const month = [...byDay].filter(([d]) => d.slice(0, 7) === today.slice(0, 7)).reduce((n, [, c]) => n + c, 0);
    assert.equal(await page.textContent('#month-total'), `$${month.toFixed(2)}`);
    assert.equal(await page.textContent('#cap'), '$5.00');
    // fires: what was written within 48 hours, and the CLI's run.
    assert.equal(Number(await page.getAttribute('#fire-count', 'data-total')), within48 + 1);
    assert.equal(await page.locator('svg.timeline rect.fire').count(), within48 + 1);
    // The CLI's session is marked by its outcome, ok, and ok alone is green (test/cli/web/page.test.ts has each outcome).
    assert.equal(await page.getAttribute('svg.timeline rect.fire[data-outcome="ok"]', 'fill'), '#2e7d32');
    // No timer is installed here: the page claims nothing about missed ticks.
    assert.match((await page.textContent('#gaps')) ?? '', /not checked: no timer installed at /);
    // sessions: every one (15 < 50), the CLI's among them.
    assert.equal(await page.locator('#sessions tr.session').count(), written.length + 1);
    assert.equal(await page.locator(`#sessions tr.session[data-id="${record.id}"]`).count(), 1);
    // memory: what memory stats --json says.
    assert.equal(Number(await page.textContent('[data-key="memories"]')), memoryStats.memories);
    assert.ok(memoryStats.memories >= 1);
    assert.equal(Number(await page.textContent('[data-key="threads_open"]')), memoryStats.threads_open);
    // The last dream: the first one saw every observation the store holds.
    assert.ok(memoryStats.observations >= 2);
    assert.equal(Number(await page.textContent('[data-dream="observations"]')), memoryStats.observations);
    assert.equal(await page.getAttribute('#last-dream', 'data-at'), memoryStats.last_dream.at);
    // The <script> session: shown as text in the list and on its own page, and never run.
    assert.ok(((await page.textContent('#sessions tr.session[data-id="w-scout-1"] .result')) ?? '').includes(EVIL));
    await page.click('a[href="session/w-scout-1"]');
    assert.ok(((await page.textContent('#transcript')) ?? '').includes(EVIL));
    assert.equal(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned ?? 0), 0);
    assert.equal(await page.evaluate(() => document.scripts.length), 0);
    // The CLI's session opens too, with its transcript.
    await page.goto(`${url}session/${record.id}`);
    assert.match((await page.textContent('#transcript')) ?? '', /hi from the fake API/);

    // No token: 403, in the browser too; another method: 405.
    const base = url.replace(/[A-Za-z0-9_-]+\/$/, '');
    assert.equal((await page.goto(base))?.status(), 403);
    assert.equal((await page.goto(`${base}x${url.slice(base.length)}`))?.status(), 403);
    assert.equal((await fetch(url, { method: 'POST' })).status, 405);
    // Loopback only: the host's other addresses do not answer (control: 127.0.0.1 does).
    const port = new URL(url).port;
    const others = Object.values(os.networkInterfaces()).flat().filter((a) => a && !a.internal && a.family === 'IPv4').map((a) => a!.address);
    for (const ip of others) await assert.rejects(fetch(`http://${ip}:${port}${new URL(url).pathname}`), `${ip} must not answer`);
    assert.equal((await fetch(url)).status, 200);

    await page.goto(url);
    // The README's picture is refreshed only when asked (NIGHTSHIFT_SCREENSHOT=1): a test run leaves the tree as it was.
    const shot = process.env.NIGHTSHIFT_SCREENSHOT === '1' ? path.join(ROOT, 'docs', 'status-page.png') : path.join(userDataDir, 'page.png');
    await page.screenshot({ path: shot, fullPage: true });
    assert.ok(fs.statSync(shot).size > 10_000);

    // A walled session cannot reach the page: it runs in its own network namespace (control: the
    // host, the same URL, 200 above; test/e2e/network.test.ts holds the unwalled session's control).
    if (BWRAP) {
      const probe = `node -e "fetch(process.argv[1]).then(r => console.log('WEB', r.status), e => console.log('WEB', e.cause?.code ?? e.message))" ${url}`;
      api.script('probe-web', ({ turn }) => (turn === 0 ? bash(probe) : text('Probed.')));
      writeAgent(ws, 'prober', 'SCENARIO=probe-web', { allowed_tools: ['Bash'] });
      const r = await runJson(ws, 'prober');
      assert.equal(r.record.outcome, 'ok', r.ran.stderr);
      const seen = api.requests.filter((q) => q.scenario === 'probe-web').map((q) => q.toolResult ?? '').find((x) => x.includes('WEB '));
      assert.ok(seen, 'the probe ran');
      assert.match(seen, /WEB (ECONNREFUSED|ENETUNREACH|EADDRNOTAVAIL|EHOSTUNREACH|fetch failed)/);
      assert.doesNotMatch(seen, /WEB 200/);
    }
  });
});
