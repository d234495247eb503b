// The supervisor's two report steps: drain what earlier runs could not send, and report the
// session just ended. Both are bounded by `discord.timeout` and never throw.
import os from 'node:os';
import type { Config } from '../config/schema.js';
import type { SessionRecord } from '../budget/session-record.js';
import { deliver, reportSettings, type DeliverDeps, type Delivery } from './deliver.js';
import { backoffReport, dreamReport, sessionReport, type BackoffFacts, type DreamFacts, type GitFacts } from './embed.js';

export type SessionReportInput = {
  session: SessionRecord;
  model: string | null;
  // null: git sync off (or the vault is not a repository).
  git: GitFacts;
  day: string;
  today: { sessions: number; costUsd: number };
  // The same failure again: said in the report (daemon/health/anneal-check.ts).
  recurring?: string | null;
  // The run started late (daemon/schedule/late.ts): said in the title and a field.
  late?: string | null;
  // The CLI's project files the session changed (sessions/wall/project-files.ts).
  projectFiles?: { files: string[]; loaded: boolean } | null;
};

export async function reportSession(config: Config, r: SessionReportInput, deps: DeliverDeps): Promise<Delivery> {
  try {
    const report = sessionReport(
      { ...r.session, model: r.model, recurring: r.recurring ?? null },
      r.git,
      { day: r.day, sessions: r.today.sessions, max_sessions: config.budget.max_sessions_per_day, cost_usd: r.today.costUsd, max_usd: config.budget.max_usd_per_day },
      { redact: deps.redact, host: os.hostname(), late: r.late ?? null, projectFiles: r.projectFiles ?? null },
    );
    return await deliver(report, reportSettings(config), deps);
  } catch (err) {
    deps.logger.error({ event: 'report_error', err }, `Discord report failed: ${(err as Error).message}`);
    return { configured: true, queued: false, sent: 0, pending: 0, error: (err as Error).message };
  }
}

// An agent's backoff began or ended (once each: the outbox dedupes on the session's id too).
export async function reportBackoff(config: Config, b: BackoffFacts, deps: DeliverDeps): Promise<Delivery> {
  try {
    return await deliver(backoffReport(b, { redact: deps.redact, host: os.hostname(), at: deps.now() }), reportSettings(config), deps);
  } catch (err) {
    deps.logger.error({ event: 'report_error', err }, `Discord report failed: ${(err as Error).message}`);
    return { configured: true, queued: false, sent: 0, pending: 0, error: (err as Error).message };
  }
}

// A dream the tick ran, reported like a session.
export async function reportDream(config: Config, d: DreamFacts, deps: DeliverDeps): Promise<Delivery> {
  try {
    return await deliver(dreamReport(d, { redact: deps.redact, host: os.hostname(), at: new Date() }), reportSettings(config), deps);
  } catch (err) {
    deps.logger.error({ event: 'report_error', err }, `Discord report failed: ${(err as Error).message}`);
    return { configured: true, queued: false, sent: 0, pending: 0, error: (err as Error).message };
  }
}

// At the start of a tick or run: what earlier runs left in the outbox.
export async function drainOutbox(config: Config, deps: DeliverDeps): Promise<Delivery> {
  return deliver(null, reportSettings(config), deps);
}
