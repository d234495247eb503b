// What main.ts hands a command, by how much of the site it needs: nothing (init, hook), the env
// file (doctor, alert: they read the config leniently themselves), or config and logger (the rest).
import type { Config } from '../config/schema.js';
import type { EnvFileResult } from '../config/env-file.js';
import type { RunDeps } from '../daemon/tick/types.js';
import type { LiveLine } from '../logs/live-line.js';
import type { Logger } from '../logs/logger.js';
import type { Redactor } from '../core/redact.js';
import type { Flags } from './args.js';

export type MainDeps = {
  argv: string[]; env: NodeJS.ProcessEnv; cwd: string; stdout: (t: string) => void; stderr: (t: string) => void;
  // stderr is a terminal: human log lines and the live session line (never under journald or --json).
  stderrIsTTY?: boolean; stdoutIsTTY?: boolean; columns?: () => number;
};

// out: a line to stdout, redacted and escaped for the terminal (logs/terminal-text.ts), whatever
// the command put in it. outPainted: redacted only, for text that holds our own colours and whose
// every other part was escaped where it was made (`logs` at a colour terminal).
// afterward: work a command leaves to finish once its output is out; main awaits it before the exit.
export type Io = { out: (text: string) => void; outPainted?: (text: string) => void; redact: Redactor; live?: LiveLine | null; stdoutIsTTY?: boolean; afterward?: (work: Promise<void>) => void };

export type BareContext = { positionals: string[]; flags: Flags; io: Io; deps: MainDeps };
// env: the process environment with the env file's variables under it; configFile: the config's path.
export type EnvContext = BareContext & { env: NodeJS.ProcessEnv; envFile: EnvFileResult | null; configFile: string; journal: boolean };
export type FullContext = EnvContext & { config: Config; logger: Logger };

// A command module: its help text, the stage it starts from, and what it does. Heavy modules are
// imported inside `run`, so `<command> --help` loads no more than the help.
export type Command =
  | { help: string; stage: 'bare'; run: (c: BareContext) => Promise<number> }
  | { help: string; stage: 'env'; lenientEnvFile?: boolean; run: (c: EnvContext) => Promise<number> }
  | {
      help: string; stage: 'full'; liveLine?: boolean; noLogFile?: boolean; run: (c: FullContext) => Promise<number>;
      // Started before the config loads, with the process's own env: work (a child process) that
      // needs no config runs beside its load. `run` checks it still holds once the env file is read.
      early?: (c: { flags: Flags; env: NodeJS.ProcessEnv }) => unknown;
    };

// The deps every session-starting command gives the run machinery.
export function runDeps(io: Io, logger: Logger, env: NodeJS.ProcessEnv, signal?: AbortSignal): RunDeps {
  return {
    env,
    logger,
    redact: io.redact,
    now: () => new Date(),
    signal,
    live: io.live ?? null,
    afterward: io.afterward,
  };
}
