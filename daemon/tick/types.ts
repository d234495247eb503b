// The shapes the tick's rooms pass between them (supervise, session, dream, run, daemon), apart so
// that none imports another back for a type.
import type { Agent } from '../../config/agents.js';
import type { DreamReport } from '../../memory/dream/dream.js';
import type { GitChecks, GitReport } from '../../vault/git-sync.js';
import type { Logger } from '../../logs/logger.js';
import type { LiveLine } from '../../logs/live-line.js';
import type { Redactor } from '../../core/redact.js';
import type { TraceSpan } from '../../core/trace.js';
import type { SessionRecord } from '../../budget/session-record.js';
import type { EgressNet } from '../../sessions/wall/egress-proxy.js';
import type { FleetLink } from './fleet-link.js';
import type { FleetHoldView } from '../schedule/holds.js';

export type RunDeps = {
  env: NodeJS.ProcessEnv;
  logger: Logger;
  redact: Redactor;
  now: () => Date;
  signal?: AbortSignal;
  // The terminal's live line (logs/live-line.ts), only when stderr is a terminal.
  live?: LiveLine | null;
  // The time this tick was scheduled for (the daemon's cron slot), to tell a late run.
  slot?: Date | null;
  // The monitor's ping (report/ping.ts) goes through it; production: the global fetch.
  fetch?: typeof fetch;
  // The fire's trace span (core/trace.ts); unset or NO_SPAN with telemetry off.
  trace?: TraceSpan;
  // The fleet's shared store (./fleet-link.ts; null or unset: this host alone, on SQLite).
  fleet?: FleetLink | null;
  // Work the process finishes after its result is out and before it exits (cli/main.ts awaits it;
  // unset, it runs on by itself): the fires' traces flushed and their rows' counts made final.
  afterward?: (work: Promise<void>) => void;
  // Told the session's id once it is charged (the fire notes it: a crash keeps which session it was).
  onCharged?: (session: string) => void;
  // Test-only seams, never read from the environment: the ledger's negative control (charge at
  // settle), the subreaper's (off), the seccomp filter's (off), the shell prefix's Landlock domain
  // (off), the pinned user settings (off), session_user's (off: a root supervisor's session runs as
  // root), the bridge's API peer check (off), the host view (off: all of `/` read-only in sight) and
  // the watchdog thread ('loop': the limits as timers on the event loop), the fire's wait for its
  // trace's flush before its row and result (on: a collector that holds its answer holds them) and
  // the API proxy's activity as the idle limit's sign of life (off: the CLI's stdout alone).
  // Production leaves all unset.
  chargeOn?: 'open' | 'settle';
  subreaper?: boolean;
  seccomp?: boolean;
  domain?: boolean;
  pinSettings?: boolean;
  // The egress proxy's resolver and connect (sessions/wall/egress-proxy.ts EgressNet).
  egressNet?: Partial<EgressNet>;
  sessionUser?: boolean;
  apiPeer?: boolean;
  hostView?: boolean;
  watchdog?: 'thread' | 'loop';
  traceAtFire?: boolean;
  proxyLife?: boolean;
  // The vault's git checks (vault/git-sync.ts GitChecks), each off only as its negative control;
  // `excludeAlways: false` writes the state's exclude only while git.enabled, as before.
  gitChecks?: Partial<GitChecks> & { excludeAlways?: boolean };
};

// `fleet`: what the tick read of the fleet's holds and every host's sessions (daemon/schedule/holds.ts).
export type Choice = { agent: Agent; reason: string; fleet?: FleetHoldView } | { skip: string } | { dream: string };

export type SuperviseResult = {
  action: 'session' | 'skip' | 'dream';
  reason: string;
  // Set when a daily limit refused the start.
  limit: string | null;
  session: SessionRecord | null;
  git: GitReport;
  dream?: DreamOutcome;
  // Set when the run started late (daemon/schedule/late.ts).
  late?: string | null;
};

export type DreamOutcome = { id: string; reason: string; ok: boolean; report: DreamReport | null; error: string | null };
