// The session's pids and memory bounds: which mechanism, from plain facts (sessions/wall/bounds.ts),
// the cgroup files read as such (sessions/wall/cgroup.ts), and the rlimits where no cgroup can be
// had, shown on a small bomb run as the session user, with its control.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { boundReached, counter, describePlan, planBounds, rlimitArgs, type BoundsFacts } from '../../../sessions/wall/bounds.js';
import { cgroupDirs, cgroupMounts, openCell } from '../../../sessions/wall/cgroup.js';
import { tempDir } from '../../helpers.js';

const wanted = { pids: 512, memory: 2 * 1024 ** 3 };
const facts = (o: Partial<BoundsFacts> = {}): BoundsFacts => ({ v2: null, v1: {}, prlimit: '/usr/bin/prlimit', ...o });
const v2 = (o: Partial<NonNullable<BoundsFacts['v2']>> = {}) => ({ dir: '/sys/fs/cgroup/system.slice/nightshift.service', controllers: ['cpu', 'memory', 'pids'], writable: true, othersInside: false, ...o });
const v1 = (writable: boolean) => ({ pids: { dir: '/sys/fs/cgroup/pids', writable }, memory: { dir: '/sys/fs/cgroup/memory/x', writable } });

describe('planBounds', () => {
  const cases: Array<[string, BoundsFacts, string, RegExp | null]> = [
    ['a delegated cgroup v2 subtree (the unit\'s Delegate=)', facts({ v2: v2() }), 'cgroup2', null],
    ['cgroup v2 not delegated: rlimits, saying so', facts({ v2: v2({ writable: false }) }), 'rlimit', /not delegated to us \(the unit's Delegate=pids memory\)/],
    ['cgroup v2 shared with a login session\'s other processes', facts({ v2: v2({ othersInside: true }) }), 'rlimit', /holds other processes than ours/],
    ['cgroup v2 without the pids controller handed down', facts({ v2: v2({ controllers: ['memory'] }) }), 'rlimit', /cannot hand down pids/],
    ['cgroup v1 hierarchies root may write (this machine)', facts({ v2: v2({ controllers: ['hugetlb'], othersInside: true }), v1: v1(true) }), 'cgroup1', null],
    ['cgroup v1 not writable (not root)', facts({ v1: v1(false) }), 'rlimit', /cannot be written \(root only\)/],
    ['no cgroup at all', facts(), 'rlimit', /no cgroup hierarchy is mounted/],
    ['no cgroup and no prlimit', facts({ prlimit: null }), 'none', /prlimit \(util-linux\) is not on PATH/],
  ];
  for (const [name, f, mechanism, why] of cases) {
    test(`${name}: ${mechanism}`, () => {
      const p = planBounds(f, wanted);
      assert.equal(p.mechanism, mechanism);
      if (why) assert.match(describePlan(p), why);
    });
  }

  test('a cgroup v2 is preferred over v1 when both could serve', () => {
    assert.equal(planBounds(facts({ v2: v2(), v1: v1(true) }), wanted).mechanism, 'cgroup2');
  });

  test('with both bounds off nothing is made, and doctor says why', () => {
    const p = planBounds(facts({ v2: v2() }), { pids: 'off', memory: 'off' });
    assert.equal(p.mechanism, 'none');
    assert.match(describePlan(p), /limits.pids and limits.memory are off/);
  });

  test('only the controllers wanted are needed: memory off, a pids hierarchy alone serves', () => {
    const p = planBounds(facts({ v1: { pids: { dir: '/sys/fs/cgroup/pids', writable: true } } }), { pids: 64, memory: 'off' });
    assert.deepEqual(p.mechanism === 'cgroup1' && p.dirs, { pids: '/sys/fs/cgroup/pids' });
  });

  test('the rlimit plan says what it does not do', () => {
    assert.match(describePlan(planBounds(facts(), wanted)), /512 processes for the session's user as a whole, 2G of data per process, a fork or an allocation past them fails, the session goes on/);
    assert.deepEqual(rlimitArgs(wanted), ['--nproc=512', `--data=${2 * 1024 ** 3}`, '--']);
    assert.deepEqual(rlimitArgs({ pids: 'off', memory: 64 }), ['--data=64', '--']);
  });
});

describe('the cgroup files', () => {
  const mountinfo = [
    '30 24 0:26 / /sys/fs/cgroup ro,nosuid - tmpfs tmpfs ro,mode=755',
    '35 30 0:31 / /sys/fs/cgroup/pids rw,relatime shared:15 - cgroup cgroup rw,pids',
    '36 30 0:32 / /sys/fs/cgroup/memory rw,relatime shared:16 - cgroup cgroup rw,memory',
    '37 30 0:33 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw',
  ].join('\n');

  test('our own cgroup in each hierarchy, as this machine has them (v1 with an unused v2)', () => {
    const d = cgroupDirs('8:pids:/\n4:memory:/process_api/abc\n0::/\n', cgroupMounts(mountinfo));
    assert.deepEqual(d, { v2: '/sys/fs/cgroup/unified', v1: { pids: '/sys/fs/cgroup/pids', memory: '/sys/fs/cgroup/memory/process_api/abc' } });
  });

  test('cgroup v2 alone, as systemd sets it up; our own leaf counts as its parent', () => {
    const m = cgroupMounts('29 23 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate');
    assert.equal(cgroupDirs('0::/system.slice/nightshift.service\n', m).v2, '/sys/fs/cgroup/system.slice/nightshift.service');
    assert.equal(cgroupDirs('0::/system.slice/nightshift.service/nightshift-supervisor\n', m).v2, '/sys/fs/cgroup/system.slice/nightshift.service');
    // Where we are, for the lock's prime: the leaf itself (moving us to its parent would be a move).
    assert.equal(cgroupDirs('0::/system.slice/nightshift.service/nightshift-supervisor\n', m, false).v2, '/sys/fs/cgroup/system.slice/nightshift.service/nightshift-supervisor');
  });

  test('a hierarchy mounted from below its root (a container) maps the path under it', () => {
    const m = cgroupMounts('29 23 0:26 /machine.slice/c1 /sys/fs/cgroup rw - cgroup2 cgroup2 rw');
    assert.equal(cgroupDirs('0::/machine.slice/c1/init.scope\n', m).v2, '/sys/fs/cgroup/init.scope');
    assert.equal(cgroupDirs('0::/elsewhere\n', m).v2, null);
  });

  test('the counters that say a bound was reached', () => {
    assert.equal(counter('max 3\n', 'max'), 3);
    assert.equal(counter('low 0\nhigh 0\nmax 9\noom 1\noom_kill 2\n', 'oom_kill'), 2);
    assert.equal(counter('oom_kill_disable 0\nunder_oom 0\noom_kill 0\n', 'oom_kill'), 0);
    assert.equal(counter(null, 'max'), 0);
    assert.equal(boundReached({ pidsMax: 0, oomKills: 0 }, wanted), null);
    assert.match(boundReached({ pidsMax: 4, oomKills: 0 }, wanted)!, /^limits\.pids: the session reached its 512 processes bound \(4 forks refused\)/);
    assert.match(boundReached({ pidsMax: 4, oomKills: 1 }, wanted)!, /^limits\.memory: the session reached its 2G memory bound/);
  });
});

// Where no cgroup can be had: prlimit's RLIMIT_NPROC counts the processes of the session's user. A
// small bomb (60 sleeps, each counted in a file) run as a uid of its own (no other process of it
// runs, so the count is the bomb's alone) stops short of 20; without the wrap (the control) it
// reaches all 60.
const LONE_UID = 64_000 + Math.floor(Math.random() * 1000);
// The bomb's sleeps outlive a shell that could not fork: each ended by its pid, found by its uid.
function endUid(uid: number): void {
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (new RegExp(`^Uid:\\s+${uid}\\s`, 'm').test(fs.readFileSync(`/proc/${name}/status`, 'utf8'))) process.kill(Number(name), 'SIGKILL');
    } catch {
      // gone
    }
  }
}
test('rlimits bound a small fork bomb of one user where no cgroup can be had; unwrapped it reaches all', { skip: process.getuid?.() === 0 ? false : 'needs root to run as a uid of its own' }, (t) => {
  const dir = tempDir(t).replace(/^\/tmp\//, '/var/tmp/');
  fs.mkdirSync(dir, { recursive: true });
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  fs.chownSync(dir, LONE_UID, LONE_UID);
  const bomb = 'n=0; p=""; while [ $n -lt 60 ]; do sleep 30 > /dev/null 2>&1 & p="$p $!"; n=$((n+1)); echo $n > count; done; kill $p; wait';
  const run = (bounded: boolean) => {
    const cell = openCell(planBounds(facts({ prlimit: '/usr/bin/prlimit' }), { pids: 20, memory: 'off' }), 'rlimit-test');
    const { command, args } = bounded ? cell.wrap('/bin/sh', ['-c', bomb]) : { command: '/bin/sh', args: ['-c', bomb] };
    spawnSync(command, args, { cwd: dir, uid: LONE_UID, gid: LONE_UID, timeout: 20_000, stdio: 'ignore' });
    endUid(LONE_UID);
    return Number(fs.readFileSync(path.join(dir, 'count'), 'utf8'));
  };
  const bounded = run(true);
  assert.ok(bounded > 0 && bounded < 20, `stopped short of 20: ${bounded}`);
  assert.equal(run(false), 60, 'control: unwrapped, all 60');
});
