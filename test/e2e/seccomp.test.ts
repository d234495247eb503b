// Issue 37, point 7: the seccomp filter of every real session, end to end. A walled `nightshift
// run` whose scripted Bash tool makes calls that only the filter refuses: kcmp and
// process_vm_readv on its own pid (the ptrace-family checks pass for oneself, in the shell
// prefix's Landlock domain too) and keyctl on its user keyring (neither bwrap nor Landlock has a
// say in it). Walled, each is EPERM. The control is the same session walled without the filter (a
// test-only fixture; the Landlock domain, the namespaces and the session user stay): each call
// answers. Not a look at `Seccomp:` in /proc/self/status: a unit's own SystemCallFilter= makes
// that 2 whatever the session's wall does.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test, type TestContext } from 'node:test';
import { bash, text, type Turn } from '../fake-api.js';
import { FIXTURES, NEEDS_BWRAP, configYaml, fakeApiPerFile, nightshift, workspace, writeAgent, type Workspace } from '../helpers.js';

const api = fakeApiPerFile();

// The calls, by the kernel's numbers written out here (asm/unistd_64.h, asm-generic/unistd.h), not
// the filter's own table: kcmp(self, self, KCMP_FILE, 0, 0); process_vm_readv of 12 bytes of its
// own memory; keyctl(KEYCTL_GET_KEYRING_ID, KEY_SPEC_USER_KEYRING, 0). Each prints `name=ok-<ret>`
// or `name=errno-<n>`.
const PROBE = String.raw`
use POSIX ();
my %nr = (x86_64 => [312, 310, 250], aarch64 => [272, 270, 219]);
my $m = (POSIX::uname())[4];
my ($kcmp, $vmr, $keyctl) = @{$nr{$m} // die "no syscall numbers for $m\n"};
my $p = $$ + 0;
sub say { my ($name, $r) = @_; print "$name=", ($r == -1 ? "errno-" . ($! + 0) : "ok-$r"), "\n" }
$! = 0; say('kcmp', syscall($kcmp, $p, $p, 0, 0, 0));
my $src = "secret-bytes"; my $dst = "\0" x 12;
$! = 0; say('process_vm_readv', syscall($vmr, $p, pack('pQ', $dst, 12), 1, pack('pQ', $src, 12), 1, 0));
print "copied=", ($dst eq $src ? 'yes' : 'no'), "\n";
$! = 0; say('keyctl', syscall($keyctl, 0, -4, 0));
print "probe-done\n";
`;
const EPERM = 1;

type Probed = { record: any; out: string };

async function probe(t: TestContext, without: string | null): Promise<Probed> {
  const scenario = `seccomp-${without ?? 'walled'}`;
  const yaml = configYaml({ top: 'sandbox: bwrap\n', claude: { timeout: '90s', idle_timeout: '60s' } });
  const ws: Workspace = workspace(t, api.url, yaml, { prefix: `nightshift-${scenario}-` });
  const results: string[] = [];
  api.script(scenario, ({ turn, lastToolResult }: Turn) => {
    if (turn > 0) results.push(lastToolResult ?? '');
    // A file the guardrail does not read: the wall alone must hold the calls.
    return turn === 0 ? bash(`echo ${Buffer.from(PROBE).toString('base64')} | base64 -d > probe.pl && /usr/bin/perl probe.pl`) : text('Probed.');
  });
  writeAgent(ws, 'prober', `SCENARIO=${scenario}`, { allowed_tools: ['Bash'] });
  let stdout: string;
  let stderr: string;
  if (!without) ({ stdout, stderr } = await nightshift(['run', 'prober', '--json'], ws.env, ws.dir));
  else {
    ({ stdout, stderr } = await new Promise<{ stdout: string; stderr: string }>((resolve) => {
      const c = spawn(process.execPath, [path.join(FIXTURES, 'run-walled-without.mjs'), ws.config, 'prober', without], { env: ws.env, cwd: ws.dir, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      let err = '';
      c.stdout.on('data', (d: Buffer) => (out += d));
      c.stderr.on('data', (d: Buffer) => (err += d));
      c.on('close', () => resolve({ stdout: out, stderr: err }));
    }));
  }
  const record = JSON.parse(stdout.trim().split('\n').at(-1) || 'null');
  assert.ok(record, `a record: ${stderr.slice(-1500)}`);
  assert.equal(record.outcome, 'ok', `${record.error}\n${stderr.slice(-1500)}`);
  // Walled, both: the supervisor's own word for it.
  const said = fs.readdirSync(ws.logs, { recursive: true, withFileTypes: true }).filter((e) => e.isFile() && e.name.endsWith('.log'))
    .flatMap((e) => fs.readFileSync(path.join(e.parentPath, e.name), 'utf8').split('\n')).filter((l) => l.includes('"event":"sandbox"'));
  assert.equal(said.length, 1, said.join('\n'));
  assert.equal(JSON.parse(said[0]).sandboxed, true);
  const out = results.find((r) => r.includes('probe-done')) ?? '';
  assert.ok(out, `the probe ran to its end: ${JSON.stringify(results)}`);
  t.diagnostic(`${scenario}: ${out.replace(/\n/g, ' ')}`);
  return { record, out };
}

const result = (out: string, name: string) => new RegExp(`^${name}=(\\S+)$`, 'm').exec(out)?.[1] ?? null;

describe('the session\'s seccomp filter, in a real session', { skip: NEEDS_BWRAP }, () => {
  test('walled, a Bash tool\'s kcmp, process_vm_readv and keyctl are refused with EPERM', { timeout: 180_000 }, async (t) => {
    const { out } = await probe(t, null);
    for (const name of ['kcmp', 'process_vm_readv', 'keyctl']) assert.equal(result(out, name), `errno-${EPERM}`, `${name}: ${out}`);
    assert.match(out, /^copied=no$/m);
  });

  test('control: the same wall without the filter (Landlock domain, namespaces and session user kept), each call answers', { timeout: 180_000 }, async (t) => {
    const { out } = await probe(t, 'seccomp');
    assert.equal(result(out, 'kcmp'), 'ok-0', out);
    assert.equal(result(out, 'process_vm_readv'), 'ok-12', out);
    assert.match(out, /^copied=yes$/m);
    assert.match(result(out, 'keyctl') ?? '', /^ok-\d+$/, out);
  });
});
