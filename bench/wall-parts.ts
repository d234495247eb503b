// The wall's parts measured apart, each added on top of the one before, around /bin/true as the
// session's command and through the runner as `nightshift run` starts it (issue 26: the
// namespace, the bridges and the cgroup together at most 50 ms):
//   wall      bwrap with the session's mounts and seccomp filter, the host's network
//   netns     the same with a network namespace of its own (--unshare-net, bwrap brings lo up)
//   bridges   the same with the perl bridge listening for the endpoints (three TCP routes, the API's
//             socket with its peer check), running the command
//   cgroup    the same in a cell of its own (made, the child gated and moved in, removed)
import fs from 'node:fs';
import path from 'node:path';
import { bwrapArgs, SECCOMP_FD } from '../sessions/wall/sandbox.js';
import { seccompProgram } from '../sessions/wall/seccomp.js';
import { bridged, WALL_PORTS } from '../sessions/wall/bridge.js';
import { findPerl } from '../sessions/run/reaper.js';
import { runClaude } from '../sessions/run/runner.js';
import { StreamTracker } from '../sessions/stream/stream-tracker.js';
import { cellFor } from '../sessions/wall/cgroup.js';
import { BWRAP, SESSION_USER } from '../test/helpers.js';
import { median } from './timing.js';

export async function wallPartsBench(runs = 30): Promise<Record<string, unknown> | null> {
  if (!BWRAP) {
    console.log('wall parts: skipped (bwrap cannot make a sandbox here)');
    return null;
  }
  const dir = fs.mkdtempSync(path.join('/var/tmp', 'nightshift-bench-'));
  fs.chmodSync(dir, 0o755);
  try {
    const vault = path.join(dir, 'vault');
    const home = path.join(dir, 'home');
    const sockets = path.join(dir, 's');
    for (const d of [vault, home, sockets]) fs.mkdirSync(d);
    if (SESSION_USER) for (const d of [vault, home]) fs.chownSync(d, SESSION_USER.uid, SESSION_USER.gid);
    const layout = { vault, writable: [], hidden: [path.join(dir, 'state'), '/run'], hiddenFiles: [], readable: [], sessionDir: home, home };
    const perl = findPerl(process.env.PATH ?? '')!;
    const routes = Object.entries(WALL_PORTS).filter(([n]) => n !== 'api').map(([n, port]) => ({ socket: path.join(sockets, n), port }));
    const inner = bridged(perl, { routes, api: { path: '/tmp/nightshift-api.sock', socket: path.join(sockets, 'api'), onlyCli: true } }, '/bin/true', []);
    const variants = {
      wall: bwrapArgs({ ...layout, network: 'host' }, '/bin/true', []),
      netns: bwrapArgs({ ...layout, network: 'private' }, '/bin/true', []),
      bridges: bwrapArgs({ ...layout, network: 'private' }, inner.command, inner.args),
    };
    const limits = { pids: 512, memory: 2 * 1024 ** 3 };
    let n = 0;
    const once = async (args: string[], withCell: boolean) => {
      const id = `bench-wall-${process.pid}-${n++}`;
      const t0 = performance.now();
      const cell = withCell ? cellFor(limits, id, process.env.PATH ?? '', (m) => console.warn(m)) : null;
      const r = await runClaude({
        command: 'bwrap', args, cwd: vault, env: { PATH: process.env.PATH }, sessionId: id, timeoutMs: 20_000, idleTimeoutMs: 20_000, killGraceMs: 500,
        maxUsd: null, tracker: new StreamTracker({ maxRepeats: 5, window: 20, cycleRepeats: 3 }), subreaper: false, inputs: [seccompProgram()],
        user: SESSION_USER ? { uid: SESSION_USER.uid, gid: SESSION_USER.gid } : null, cell,
      });
      await cell?.close();
      if (r.exitCode !== 0) throw new Error(`bench wall run exited ${r.exitCode ?? r.signal}: ${r.stderrTail}`);
      return { ms: performance.now() - t0, mechanism: cell?.plan.mechanism ?? null };
    };
    const times: Record<string, number[]> = { wall: [], netns: [], bridges: [], cgroup: [] };
    let mechanism: string | null = null;
    // Interleaved, so drift on the machine hits every variant alike.
    for (let i = 0; i < runs; i++) {
      times.wall.push((await once(variants.wall, false)).ms);
      times.netns.push((await once(variants.netns, false)).ms);
      times.bridges.push((await once(variants.bridges, false)).ms);
      const c = await once(variants.bridges, true);
      times.cgroup.push(c.ms);
      mechanism = c.mechanism;
    }
    const m = Object.fromEntries(Object.entries(times).map(([k, v]) => [k, median(v)])) as Record<string, number>;
    const added = { netns_ms: m.netns - m.wall, bridges_ms: m.bridges - m.netns, cgroup_ms: m.cgroup - m.bridges };
    const together = added.netns_ms + added.bridges_ms + added.cgroup_ms;
    const r = {
      runs, as_session_user: !!SESSION_USER, cgroup_mechanism: mechanism,
      wall_median_ms: +m.wall.toFixed(1), netns_added_ms: +added.netns_ms.toFixed(1), bridges_added_ms: +added.bridges_ms.toFixed(1), cgroup_added_ms: +added.cgroup_ms.toFixed(1), together_ms: +together.toFixed(1), goal_ms: 50,
    };
    console.log(`wall parts (median of ${runs}, through the runner, around /bin/true): wall ${m.wall.toFixed(1)} ms; + own network namespace ${added.netns_ms.toFixed(1)} ms; + bridges ${added.bridges_ms.toFixed(1)} ms; + cgroup (${mechanism}) ${added.cgroup_ms.toFixed(1)} ms; together +${together.toFixed(1)} ms (goal 50)`);
    return r;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
