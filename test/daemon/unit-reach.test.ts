// What `systemd install` and `doctor` decide about the units' reach: a path their sandbox hides, a
// folder their user cannot enter, a site that belongs to another user. Pure, over plain facts;
// each refusal beside its control (the same facts with the one difference taken away).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ownershipProblems, reachProblems, type Node, type PathFacts, type SiteFolder, type UnitUser } from '../../daemon/unit-reach.js';

const svc: UnitUser = { name: 'nightshift', uid: 998, gid: 998, groups: [] };
const root: UnitUser = { name: 'root', uid: 0, gid: 0, groups: [] };
const dir = (p: string, mode = 0o40755, uid = 0, gid = 0): Node => ({ path: p, uid, gid, mode });
// A file and its chain of folders, all root's 0755 unless `over` says otherwise.
function facts(what: string, p: string, need: PathFacts['need'], over: Record<string, Partial<Node>> = {}, real = p): PathFacts {
  const parts = real.split('/').filter(Boolean);
  const chain = parts.map((_, i) => `/${parts.slice(0, i).join('/')}`).map((d) => ({ ...dir(d), ...over[d] }));
  chain.push({ ...dir(real, need === 'run' ? 0o100755 : 0o100644), ...over[real] });
  return { what, path: p, real, need, chain };
}

describe('reachProblems', () => {
  test('nightshift under /var/tmp: hidden by PrivateTmp=, with the fix; control: the same under /opt passes', () => {
    const [hidden] = reachProblems([facts('nightshift', '/var/tmp/ns/dist/cli/bin.js', 'read')], svc);
    assert.match(hidden, /^nightshift \/var\/tmp\/ns\/dist\/cli\/bin\.js is under \/var\/tmp, which the units' PrivateTmp= hides from them .*install it elsewhere, e.g\. under \/opt/);
    assert.deepEqual(reachProblems([facts('nightshift', '/opt/ns/dist/cli/bin.js', 'read')], svc), []);
  });

  test('a link outside /tmp into /tmp is judged by where it leads', () => {
    const [p] = reachProblems([facts('node', '/usr/local/bin/node', 'run', {}, '/tmp/n/bin/node')], svc);
    assert.match(p, /^node \/usr\/local\/bin\/node \(\/tmp\/n\/bin\/node\) is under \/tmp/);
  });

  test('/tmp and /var/tmp are hidden even from root; a missing file is said', () => {
    assert.equal(reachProblems([facts('node', '/tmp/node', 'run')], root).length, 1);
    assert.match(reachProblems([{ what: 'node', path: '/opt/gone/node', real: null, need: 'run', chain: [] }], svc)[0], /does not exist/);
  });

  test('a folder the units\' user cannot enter: named with its owner and mode; control: mode 0755 passes', () => {
    const shut = facts('nightshift', '/root/ns/dist/cli/bin.js', 'read', { '/root': { mode: 0o40700 } });
    const [p] = reachProblems([shut], svc);
    assert.match(p, /the units' user nightshift cannot enter the folder \/root \(owned by uid 0, mode 0700\)/);
    assert.deepEqual(reachProblems([facts('nightshift', '/root/ns/dist/cli/bin.js', 'read', { '/root': { mode: 0o40755 } })], svc), []);
    // Root enters any folder.
    assert.deepEqual(reachProblems([shut], root), []);
  });

  test('group and owner bits count for the user; a file it may not run is named', () => {
    const groupOnly = facts('node', '/opt/n/node', 'run', { '/opt/n': { mode: 0o40750, gid: 998 } });
    assert.deepEqual(reachProblems([groupOnly], svc), [], 'its primary group may enter');
    assert.equal(reachProblems([groupOnly], { ...svc, gid: 50 }).length, 1, 'another group may not');
    assert.deepEqual(reachProblems([groupOnly], { ...svc, gid: 50, groups: [998] }), [], 'a supplementary group may');
    const [p] = reachProblems([facts('node', '/opt/n/node', 'run', { '/opt/n/node': { mode: 0o100700 } })], svc);
    assert.match(p, /cannot run it \(owned by uid 0, mode 0700\): chmod o\+rx \/opt\/n\/node/);
  });
});

describe('ownershipProblems', () => {
  const f = (what: string, p: string, uid: number, name: string | null): SiteFolder => ({ what, path: p, owner: { uid, name } });

  test('a site of another user\'s: refused naming the owner, the install for them and runuser; never a chown', () => {
    const [p] = ownershipProblems([f('state_dir', '/srv/site/state', 1001, 'alice')], svc);
    assert.match(p, /^state_dir \/srv\/site\/state belongs to alice, not to nightshift, the user the units run as/);
    assert.match(p, /nightshift systemd install --user alice/);
    assert.match(p, /runuser -u alice -- nightshift …/);
    assert.doesNotMatch(p, /chown/);
  });

  test('control: the units\' own user\'s site passes, and a config folder of root\'s too (the units only read it)', () => {
    assert.deepEqual(ownershipProblems([f('state_dir', '/srv/site/state', 998, 'nightshift'), f('the config folder', '/etc/nightshift', 0, 'root')], svc), []);
  });

  test('a site folder root made: handed to the units\' user; a system folder never is', () => {
    assert.match(ownershipProblems([f('log_dir', '/srv/site/logs', 0, 'root')], svc)[0], /chown -R nightshift: \/srv\/site\/logs/);
    const [sys] = ownershipProblems([f('state_dir', '/var/lib', 0, 'root')], svc);
    assert.match(sys, /a folder of the system's, never to be given away/);
    assert.doesNotMatch(sys, /chown/);
  });

  test('units for root on a service user\'s site (it would fail with EPERM): install them for the owner', () => {
    const [p] = ownershipProblems([f('state_dir', '/srv/site/state', 998, 'nightshift')], root);
    assert.match(p, /belongs to nightshift, not to root.*--user nightshift/);
    assert.doesNotMatch(p, /chown/);
  });
});
