// A full disk of another kind: no inodes left while bytes remain (many small files, as a session
// may make). The session that ran the disk out of files ends disk_full and the next start is
// refused with the reason, exit 75, never the internal error (70) the bytes-only check gave.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { test, type TestContext } from 'node:test';
import { bash, text } from '../fake-api.js';
import { configYaml, fakeApiPerFile, nightshift, workspace, writeAgent } from '../helpers.js';

const api = fakeApiPerFile();
const SKIP = process.getuid?.() !== 0 ? 'needs root to mount a small tmpfs' : false;

// Plenty of bytes, few inodes.
function fewInodes(t: TestContext, inodes: number): string {
  const at = fs.mkdtempSync('/var/tmp/nightshift-inodes-');
  const r = spawnSync('mount', ['-t', 'tmpfs', '-o', `size=256m,nr_inodes=${inodes},mode=0755`, 'tmpfs', at], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`cannot mount a tmpfs at ${at}: ${r.stderr}`);
  t.after(() => {
    spawnSync('umount', ['-l', at]);
    fs.rmSync(at, { recursive: true, force: true });
  });
  return at;
}

// Makes empty files until the disk refuses.
const FILL = 'const fs = require("fs"); fs.mkdirSync("many", { recursive: true }); let n = 0; try { for (; n < 100000; n++) fs.writeFileSync(`many/${n}`, ""); } catch (e) { console.log("fill", e.code, n); } console.log("fill-done", n);';

async function fillThenNext(t: TestContext, diskFree: string) {
  const disk = fewInodes(t, 4000);
  const ws = workspace(t, api.url, configYaml({ top: `limits:\n  disk_free: ${diskFree}\n` }), { base: disk });
  fs.writeFileSync(`${ws.vault}/fill.js`, `${FILL}\n`);
  let filled = '';
  api.script('ifill', ({ turn, lastToolResult }) => (turn === 0 ? bash('node fill.js') : ((filled = lastToolResult ?? ''), text('Filled.'))));
  api.script('inext', ({ turn }) => (turn === 0 ? bash('echo next-ran') : text('Next done.')));
  writeAgent(ws, 'filler', 'SCENARIO=ifill', { allowed_tools: ['Bash'] });
  writeAgent(ws, 'other', 'SCENARIO=inext', { allowed_tools: ['Bash'] });
  const first = await nightshift(['run', 'filler', '--json'], ws.env, ws.dir);
  const next = await nightshift(['run', 'other', '--json'], ws.env, ws.dir);
  const df = spawnSync('df', ['-i', disk], { encoding: 'utf8' }).stdout.trim().split('\n').at(-1);
  t.diagnostic(`fill: ${filled.trim()}; first: exit ${first.code}; next: exit ${next.code}; df -i: ${df}`);
  // Walled off by the poll, the session may end before its tool's output comes back: the disk says.
  assert.ok(Number(df?.split(/\s+/)[3]) < 1024, `the session ran the disk out of inodes: ${df}`);
  return { first, next, filled };
}

test('a session that uses up the disk\'s inodes (bytes to spare) ends disk_full, and the next start is refused with the reason', { skip: SKIP, timeout: 180_000 }, async (t) => {
  const { first, next } = await fillThenNext(t, '4M');
  assert.equal(JSON.parse(first.stdout).outcome, 'disk_full', first.stderr.slice(-800));
  assert.match(JSON.parse(first.stdout).error, /files \(inodes\) free, below the 1024 nightshift keeps free/);
  assert.equal(next.code, 75, next.stderr.slice(-800));
  assert.match(next.stderr, /nightshift: Refused: the disk of vault, state_dir, log_dir .* files \(inodes\) free.*: no session starts until there is room/);
});

test('control: with limits.disk_free: 0 nothing looks at the inodes: the filler ends ok and the next session starts on the exhausted disk', { skip: SKIP, timeout: 180_000 }, async (t) => {
  const { first, next, filled } = await fillThenNext(t, '0');
  assert.match(filled, /fill ENOSPC \d+/, 'the filler ran until the disk refused a file');
  assert.equal(JSON.parse(first.stdout).outcome, 'ok');
  assert.notEqual(next.code, 75, next.stderr.slice(-800));
});
