// The fire of one start, at the I/O edge: its row begun before anything is decided, what is chosen
// and charged noted as it happens, settled with fire-words.ts's words and exit code. It never
// throws: a fires file that cannot be written is logged, and the start goes on; a tick that would
// have exited 0 then exits with that cause's code (77 permission, 70 otherwise), so OnFailure=
// still says it.
import fs from 'node:fs';
import { EXIT, NightshiftError, PermissionError } from '../../core/errors.js';
import { errnoAccessProblem } from '../../core/file-access.js';
import { isAlive, readProc } from '../../core/process-tree.js';
import { Fires, firesFile, type FireKind, type FireTrigger, type PassedOver } from '../../budget/fires.js';
import type { Config } from '../../config/schema.js';
import type { Logger } from '../../logs/logger.js';
import { lateness, uptimeMs } from '../schedule/late.js';
import { fireWords, type FireEnding, type FireWords } from './fire-words.js';

// What started this process: the daemon says so; systemd names the timer in TRIGGER_UNIT.
export function triggerOf(env: NodeJS.ProcessEnv, daemon: boolean): FireTrigger {
  if (daemon) return 'daemon';
  return /\.timer$/.test(env.TRIGGER_UNIT ?? '') ? 'timer' : 'hand';
}

// The exit code main.ts gives an error (cli/main.ts's catch), for the fire's record.
export function exitCodeForError(err: unknown): number {
  if (err instanceof NightshiftError) return err.exitCode;
  return errnoAccessProblem(err, '') ? EXIT.NOPERM : EXIT.INTERNAL;
}

// A permission problem's message says all (the file, its owner, the fix): no stack in the log.
const logged = (err: unknown) => (err instanceof PermissionError ? { type: 'PermissionError', code: err.code } : err);

type Deps = { logger: Logger; now: () => Date; redact: (t: string) => string };

export class FireRecord {
  private chosen: { agent: string; rule: number | null } | null = null;
  private charged: string | null = null;

  private constructor(private readonly fires: Fires | null, readonly id: number | null, private error: unknown, private readonly kind: FireKind, private readonly deps: Deps) {}

  static begin(config: Config, start: { kind: FireKind; trigger: FireTrigger; slot: Date | null }, deps: Deps): FireRecord {
    const at = deps.now();
    let fires: Fires | null = null;
    try {
      fires = Fires.open(firesFile(config));
      for (const r of fires.settleDead(isAlive, at)) {
        deps.logger.warn({ event: 'fire_crashed', fire: r.id, at: r.at, agent: r.agent, session: r.session }, `the fire of ${r.at} was left open by a dead supervisor: settled crashed`);
      }
      const late = lateness({ slot: start.slot, startedAt: at, uptimeMs: uptimeMs(() => fs.readFileSync('/proc/uptime', 'utf8')), byTimer: start.trigger === 'timer' });
      const id = fires.begin({ at: at.toISOString(), kind: start.kind, trigger: start.trigger, slot: start.slot?.toISOString() ?? null, late, supervisor_pid: process.pid, supervisor_start: readProc(process.pid)?.start ?? null });
      return new FireRecord(fires, id, null, start.kind, deps);
    } catch (err) {
      try {
        fires?.close();
      } catch {
        // closing a handle that failed loses nothing
      }
      deps.logger.error({ event: 'fire_unwritable', err: logged(err) }, `the fire's row cannot be written: ${deps.redact((err as Error).message)} (the ${start.kind} goes on; it exits ${exitCodeForError(err)} unless something worse happens)`);
      return new FireRecord(null, null, err, start.kind, deps);
    }
  }

  private write(what: string, fn: (f: Fires, id: number) => void): void {
    if (!this.fires || this.id === null) return;
    try {
      fn(this.fires, this.id);
    } catch (err) {
      this.error ??= err;
      this.deps.logger.error({ event: 'fire_unwritable', err: logged(err) }, `the fire's ${what} cannot be written: ${this.deps.redact((err as Error).message)}`);
    }
  }

  choose(agent: string, rule: number | null): void {
    this.chosen = { agent, rule };
    this.write('agent', (f, id) => f.note(id, { agent, rule }));
  }

  charge(session: string): void {
    this.charged = session;
    this.write('session', (f, id) => f.note(id, { session }));
  }

  // Settles the fire; returns its words and the exit code the start ends with (the one recorded,
  // unless the row itself could not be written).
  // What settle will say, written nowhere (the fire's trace span ends with it first).
  words(facts: { dispatch: PassedOver[] } & FireEnding): FireWords {
    return fireWords({ ...facts, kind: this.kind, chosen: this.chosen, charged: this.charged });
  }

  // trace: the fire's trace id and the spans of it the collector did not take (telemetry on).
  settle(facts: { dispatch: PassedOver[] } & FireEnding, trace: { trace_id: string; spans_dropped: number } | null = null): FireWords & { exit: number } {
    const words = this.words(facts);
    const end = { ...words, reason: this.deps.redact(words.reason), ended_at: this.deps.now().toISOString(), ...trace };
    this.write('settlement', (f, id) => f.settle(id, end));
    try {
      this.fires?.close();
    } catch {
      // the settlement is committed or logged above
    }
    // Debug: what it did is already said once (skipped, refused, the session's report); the row keeps it.
    this.deps.logger.debug({ event: 'fire', fire: this.id, action: end.action, agent: end.agent, exit_code: end.exit_code, passed_over: end.passed_over }, `fire: ${end.action} (${end.reason})`);
    const exit = end.exit_code ?? EXIT.FAILED;
    return { ...words, exit: exit === EXIT.OK && this.error ? exitCodeForError(this.error) : exit };
  }
}
