// The small typed error set: each carries a stable string code and the exit code the CLI entry
// maps it to (sysexits, so systemd's OnFailure= and scripts can act on them).
export const EXIT = { OK: 0, FAILED: 1, USAGE: 64, UNAVAILABLE: 69, INTERNAL: 70, REFUSED: 75, NOPERM: 77, CONFIG: 78, INTERRUPTED: 130 } as const;

export class NightshiftError extends Error {
  readonly code: string = 'NIGHTSHIFT';
  readonly exitCode: number = EXIT.INTERNAL;
}

// A bad command line.
export class UsageError extends NightshiftError {
  override readonly code = 'USAGE';
  override readonly exitCode = EXIT.USAGE;
}

// A config or agent file that does not validate; `problems` are `path: message` lines.
export class ConfigError extends NightshiftError {
  override readonly code = 'CONFIG_INVALID';
  override readonly exitCode = EXIT.CONFIG;
  constructor(readonly file: string, readonly problems: string[], options?: { cause?: unknown; what?: 'config' | 'agent file' }) {
    super(`Invalid ${options?.what ?? 'config'} ${file}:\n${problems.map((p) => `  - ${p}`).join('\n')}`, options);
  }
}

// A limit (sessions, USD, runs per agent) refuses the start.
export class BudgetExhaustedError extends NightshiftError {
  override readonly code = 'BUDGET_EXHAUSTED';
  override readonly exitCode = EXIT.REFUSED;
  constructor(readonly limit: string, message: string) {
    super(message);
  }
}

// A disk nightshift writes (vault, state_dir, log_dir) is below limits.disk_free: nothing starts
// until there is room (config/disk-space.ts says which disk).
export class DiskFullError extends NightshiftError {
  override readonly code = 'DISK_FULL';
  override readonly exitCode = EXIT.REFUSED;
}

// Another supervisor holds a lock we need.
export class LockedError extends NightshiftError {
  override readonly code = 'LOCKED';
  override readonly exitCode = EXIT.REFUSED;
}

// Something that should not happen; the stack is logged once by the entry.
export class InternalError extends NightshiftError {
  override readonly code = 'INTERNAL';
  override readonly exitCode = EXIT.INTERNAL;
}

// `sandbox: bwrap` is configured and bwrap cannot make a sandbox here: no session starts unwalled.
export class SandboxUnavailableError extends NightshiftError {
  override readonly code = 'SANDBOX_UNAVAILABLE';
  override readonly exitCode = EXIT.CONFIG;
}

// One of our files or folders cannot be used by the user we run as (core/file-access.ts says
// who owns it and the chown/chmod that fixes it); nothing is wrong with its content.
export class PermissionError extends NightshiftError {
  override readonly code = 'PERMISSION';
  override readonly exitCode = EXIT.NOPERM;
}

// The env file (nightshift.env) cannot be used: unreadable when named, or readable by others while
// it holds secrets. `problems` say why and how to fix it.
export class EnvFileError extends NightshiftError {
  override readonly code = 'ENV_FILE';
  override readonly exitCode = EXIT.CONFIG;
  constructor(readonly file: string, readonly problems: string[], options?: { cause?: unknown }) {
    super(`Refused env file ${file}:\n${problems.map((p) => `  - ${p}`).join('\n')}`, options);
  }
}

// The fleet's database (NIGHTSHIFT_DATABASE_URL) cannot be reached: nothing is charged or claimed
// on a guess, so no session starts (fails closed). The message names its host, never its password.
export class FleetUnavailableError extends NightshiftError {
  override readonly code = 'FLEET_UNAVAILABLE';
  override readonly exitCode = EXIT.UNAVAILABLE;
}

// The fleet's database is not one this host can use as it stands: a URL that is not PostgreSQL's,
// or a schema version this nightshift does not know (the message names the fix).
export class FleetSetupError extends NightshiftError {
  override readonly code = 'FLEET_SETUP';
  override readonly exitCode = EXIT.CONFIG;
}
