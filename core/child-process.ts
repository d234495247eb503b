// A child process and its whole output, on node's own child_process: on the path of every session
// start (the sandbox probe, git), where execa's ~130 ms import would be paid before the spawn.
import { spawn, type ChildProcess } from 'node:child_process';

export type ChildResult = {
  // null when the process never ran (then `error` says why) or ended by a signal.
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  // Why it could not start (ENOENT, EACCES...), or a stdin write that failed.
  error: NodeJS.ErrnoException | null;
};

export type ChildOptions = {
  cwd?: string;
  // The whole environment of the child; nothing is inherited that is not here.
  env: NodeJS.ProcessEnv;
  // Written to stdin, which is then closed; without it stdin is /dev/null.
  input?: string;
  // Its own process group, so a caller can end the child and everything it started at once.
  detached?: boolean;
  // SIGKILL after this long.
  timeoutMs?: number;
  // The child's fds 3, 4, ...: bytes, each a pipe closed once written (bwrap's --seccomp 3), or a
  // descriptor of ours passed as it is.
  inputs?: ChildInput[];
  // Run as this user and group, every other group cleared (node's spawn does setgroups(0)): a
  // root supervisor's session user.
  uid?: number;
  gid?: number;
  // The child's umask from ours (node has no spawn option: set around the synchronous spawn).
  umask?: (ours: number) => number;
};

// Starts `command` and collects its output as text; never rejects.
export function startChild(command: string, args: string[], o: ChildOptions): { child: ChildProcess; done: Promise<ChildResult> } {
  const child = withUmask(o.umask, () => spawn(command, args, {
    cwd: o.cwd,
    env: o.env,
    detached: o.detached ?? false,
    stdio: [o.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe', ...inputStdio(o.inputs)],
    ...(o.uid === undefined ? {} : { uid: o.uid }),
    ...(o.gid === undefined ? {} : { gid: o.gid }),
  }));
  writeInputs(child, o.inputs);
  const done = new Promise<ChildResult>((resolve) => {
    let stdout = '';
    let stderr = '';
    let error: NodeJS.ErrnoException | null = null;
    child.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = o.timeoutMs ? setTimeout(() => child.kill('SIGKILL'), o.timeoutMs) : null;
    const finish = (exitCode: number | null, signal: NodeJS.Signals | null) => {
      if (timer) clearTimeout(timer);
      resolve({ exitCode, signal, stdout, stderr, error });
    };
    // A spawn failure may or may not be followed by 'close': whichever comes first settles it.
    child.on('error', (err: NodeJS.ErrnoException) => {
      error ??= err;
      if (child.pid === undefined) finish(null, null);
    });
    child.on('close', (code, signal) => finish(code, signal));
    if (o.input !== undefined) {
      // A child that exits without reading its input is not an error of ours.
      child.stdin!.on('error', () => {});
      child.stdin!.end(o.input);
    }
  });
  return { child, done };
}

// `startChild` for a caller that only needs the result.
// A spawn node refuses at once (EPERM: a uid it may not take) is a result too.
export function runChild(command: string, args: string[], o: ChildOptions): Promise<ChildResult> {
  try {
    return startChild(command, args, o).done;
  } catch (err) {
    return Promise.resolve({ exitCode: null, signal: null, stdout: '', stderr: '', error: err as NodeJS.ErrnoException });
  }
}

// What a child gets on fd 3, 4, ...: bytes to read, or a descriptor of ours (a folder the bridge
// alone may reach, sessions/wall/guest.ts).
export type ChildInput = Buffer | number;

// The stdio entries past stderr for those inputs.
export function inputStdio(inputs: ChildInput[] | undefined): Array<'pipe' | number> {
  return (inputs ?? []).map((b) => (typeof b === 'number' ? b : 'pipe'));
}

// Writes each buffer to the child's fd 3, 4, ... and closes it; a child that exits (or fails to
// start) without reading is reported by its own exit, not by a write error here.
export function writeInputs(child: ChildProcess, inputs: ChildInput[] | undefined): void {
  (inputs ?? []).forEach((b, i) => {
    if (typeof b === 'number') return;
    const s = child.stdio[3 + i] as NodeJS.WritableStream & { on(e: 'error', f: () => void): void } | null;
    if (!s) return;
    s.on('error', () => {});
    s.end(b);
  });
}

// Runs `fn` (a spawn: fork and exec happen inside the call) under `mask(ours)`, then puts ours back.
export function withUmask<T>(mask: ((ours: number) => number) | undefined, fn: () => T): T {
  if (mask === undefined) return fn();
  const ours = process.umask(0);
  process.umask(mask(ours));
  try {
    return fn();
  } finally {
    process.umask(ours);
  }
}
