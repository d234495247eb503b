// What each exit code means to an operator, by its name in EXIT: docs/exit-codes.md is generated
// from this (config/docs-pages.ts), and the type makes a new code without a meaning a compile error.
import type { EXIT } from './errors.js';

export const EXIT_MEANINGS: Record<keyof typeof EXIT, string> = {
  OK: 'the session ended `ok` (or the command succeeded; a tick that skipped)',
  FAILED: 'the session ended any other way, git left its work uncommitted, a dream phase failed, a doctor check failed, `init --remote` could not clone (nothing is left behind: the vault is cloned before anything else is written)',
  USAGE: 'usage: unknown command, option or agent (with a "did you mean"), or an extra argument',
  UNAVAILABLE: 'the fleet\'s database (`NIGHTSHIFT_DATABASE_URL`, docs/fleet.md) cannot be reached when a session would start: nothing was claimed or charged and no session started (the message names the database\'s host, never its password); or when `hold release` would write its release there: released on this host only, the fleet\'s release spooled for the host\'s next start',
  INTERNAL: 'internal error (e.g. the ledger cannot be opened, the memory database is corrupt or not ours, a tick whose fire row cannot be written)',
  REFUSED: 'refused: a daily limit is reached (see `--force`), another supervisor holds the lock, a stop request came before the session started, a forgotten claim was observed again, a disk nightshift writes has less free than `limits.disk_free` (the disk named), or another rehearsal of the site is running',
  NOPERM: 'permission: a folder or file of the site this user cannot use (the message names its owner and the command that fixes it, e.g. `init` into a folder it cannot make: `sudo install -d -o USER DIR`; a tick meeting a ledger root made in its state_dir: `sudo chown USER …/ledger.db`), root\'s `rehearse` in a site another user owns (run it as them), or `memory forget --approve` with a wrong code: nothing deleted',
  CONFIG: 'config: the config or an agent file is invalid (the message names the file and field), the env file holds secrets and its group or others may read it (`chmod 600` fixes it), or `sandbox: bwrap` and bwrap cannot make a sandbox here; `agents` when an agent file is invalid; a tick that passed over a due rule because its agent file is invalid (the log and the fire name the agent and the file; the other agents still ran); no credential at all for a session, a key made by `rehearse --serve` (`sk-rehearsal-`) outside a rehearsal (the env file still points at the rehearsal), or the key the API refused (401) earlier today (the env file named; a changed key or `nightshift hold release` clears it); the fleet\'s `NIGHTSHIFT_DATABASE_URL` is no PostgreSQL URL, or its database is at a schema version this nightshift does not know (`nightshift db migrate`, or upgrade nightshift on this host)',
  INTERRUPTED: 'the session was interrupted (Ctrl-C, or the service stopped); the unit counts it as a success',
};
