// Free space on the disks nightshift writes (config/disk-space.ts), and the ending of a session
// that left one full (daemon/tick/session.ts diskFullEnding): pure over plain facts.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { MIN_FREE_FILES, diskFacts, diskFullReason, isDiskFull, lowDisks, type DiskFact } from '../../config/disk-space.js';
import { diskFullEnding } from '../../daemon/tick/session.js';
import { classify } from '../../sessions/run/outcome.js';

const M = 1024 * 1024;
const fact = (what: string, dev: number, free: number): DiskFact => ({ what, path: `/${what}`, dev, free, total: 100 * M });

describe('lowDisks', () => {
  test('one disk below the limit is named once, with every folder on it', () => {
    const low = lowDisks([fact('vault', 1, 2 * M), fact('state_dir', 1, 2 * M), fact('log_dir', 2, 80 * M)], 64 * M);
    assert.deepEqual(low, [{ what: ['vault', 'state_dir'], path: '/vault', free: 2 * M, total: 100 * M }]);
    assert.equal(diskFullReason(low, 64 * M), 'the disk of vault, state_dir (/vault) has 2M free of 100M, below limits.disk_free (64M)');
  });

  test('a disk with bytes to spare but its inodes nearly gone is low, said as such; one that counts no inodes (btrfs) is not', () => {
    const few = { ...fact('vault', 1, 80 * M), files: 4000, filesFree: MIN_FREE_FILES - 1 };
    const low = lowDisks([few], 64 * M);
    assert.equal(low.length, 1);
    assert.equal(diskFullReason(low, 64 * M), `the disk of vault (/vault) has ${MIN_FREE_FILES - 1} of 4000 files (inodes) free, below the ${MIN_FREE_FILES} nightshift keeps free`);
    assert.deepEqual(lowDisks([{ ...few, filesFree: MIN_FREE_FILES }], 64 * M), [], 'enough inodes left: no finding');
    assert.deepEqual(lowDisks([{ ...few, files: 0, filesFree: 0 }], 64 * M), [], 'no inode count at all');
    assert.deepEqual(lowDisks([few], 0), [], 'limits.disk_free: 0 turns this off too');
  });

  test('room on every disk, or a limit of 0, is no finding', () => {
    assert.deepEqual(lowDisks([fact('vault', 1, 70 * M)], 64 * M), []);
    assert.deepEqual(lowDisks([fact('vault', 1, 0)], 0), []);
  });

  test("the facts of this machine are read, a folder not made yet on its parent's disk", () => {
    const f = diskFacts({ vault: '/', state_dir: '/var/tmp/nightshift-not-made-yet/state', log_dir: '/var/tmp' });
    assert.equal(f.length, 3);
    assert.ok(f.every((x) => x.total > 0 && x.free >= 0));
  });
});

describe('a full disk as an ending', () => {
  test('a full disk error of ours is known by its code or its words', () => {
    assert.ok(isDiskFull(Object.assign(new Error('x'), { code: 'ENOSPC' })));
    assert.ok(isDiskFull(Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' })));
    assert.ok(isDiskFull('writing the transcript: ENOSPC: no space left on device, write'));
    assert.ok(!isDiskFull(new Error('EACCES: permission denied')));
  });

  test('our own write failing on a full disk mid-session ends it disk_full, not as an internal error', () => {
    const c = classify({ spawnError: null, stopReason: 'internal', stopDetail: 'writing the transcript: ENOSPC: no space left on device, write', result: null, exitCode: null, signal: 'SIGKILL' });
    assert.equal(c.outcome, 'disk_full');
    assert.equal(classify({ spawnError: null, stopReason: 'internal', stopDetail: 'the hook server stopped', result: null, exitCode: null, signal: null }).outcome, 'error');
    assert.equal(classify({ spawnError: null, stopReason: 'disk_full', stopDetail: 'the disk of vault ...', result: null, exitCode: 0, signal: null }).outcome, 'disk_full');
  });

  const low = [{ what: ['vault'], path: '/v', free: 0, total: 24 * M }];
  for (const [name, ended, l, internal, outcome] of [
    ['an error with the disk left full', { outcome: 'error', error: 'API error 400: disk is full' }, low, null, 'disk_full'],
    ['an ok session that left the disk full', { outcome: 'ok', error: null }, low, null, 'disk_full'],
    ['an internal failure on a full disk, the limit off', { outcome: 'error', error: 'internal: x' }, [], Object.assign(new Error('no space'), { code: 'ENOSPC' }), 'disk_full'],
    ['a loop stays a loop', { outcome: 'loop', error: 'x' }, low, null, 'loop'],
    ['an error with room left stays an error', { outcome: 'error', error: 'x' }, [], null, 'error'],
  ] as const) {
    test(`${name}: ${outcome}`, () => {
      const r = diskFullEnding({ outcome: ended.outcome, error: ended.error }, [...l] as never, 4 * M, internal);
      assert.equal(r.outcome, outcome);
      if (outcome === 'disk_full' && l.length) assert.match(r.error!, /^the disk of vault \(\/v\) has 0 bytes free of 24M, below limits\.disk_free \(4M\)/);
    });
  }
});
