// Gathers the session state's data from the memory store (read-only), the ledger and the vault's
// git. Each part that fails says why in its own section; gathering as a whole never throws.
import { dayOf } from '../../config/day.js';
import type { Ledger } from '../../budget/ledger.js';
import type { Config } from '../../config/schema.js';
import { gitIn, STATUS } from '../../vault/git-sync.js';
import { leftOutPaths, readExcludes } from '../../vault/info-exclude.js';
import { untrustedGitMarker } from '../../vault/git-guard.js';
import fs from 'node:fs';
import path from 'node:path';
import { memoryDbPath } from '../../memory/store/db-path.js';
import { StateView } from '../../memory/store/state-view.js';
import { MemoryStore } from '../../memory/store.js';
import { viewOf } from '../../memory/store/scope.js';
import type { Avail, StateData, StateGit } from './state.js';
import { DEFAULTS } from '../../config/defaults.js';
import { passFromRow, type AnnealPass } from './anneal.js';
import { attentionOf, lastToolCalls, type AttentionRow } from './attention.js';
import { readProjectFileChanges } from '../wall/project-files.js';

export type GatherInput = {
  config: Config;
  agent: { name: string; maxRunsPerDay: number | null } | null;
  sessionId: string | null;
  unattended: boolean;
  ledger: Ledger;
  now: Date;
  // Applied to every text before it is rendered (and so before anything is cut).
  redact: (text: string) => string;
  // Whether the vault is a git work tree, when the caller has just asked git (a session does,
  // before its pull): not asked again. Unset: asked here.
  repo?: boolean;
};

export const STATE_LIMITS = { identity: 8, threads: 8, surprises: 6, contradictions: 5, overdue: 5, wander: 5, sessions: 5 };

const why = (err: unknown) => (err as Error)?.message ?? String(err);
const fail = (w: string) => ({ ok: false as const, why: w });

export async function gatherState(i: GatherInput): Promise<StateData> {
  const { config, ledger, now } = i;
  const day = dayOf(now, config.budget.timezone);
  const agent = i.agent?.name ?? null;

  let budget: StateData['budget'] = null;
  let since: string | null = null;
  let sessions: StateData['sessions'];
  let lastOkAt: string | null = null;
  let todayRuns = 0;
  let mine: AttentionRow[] = [];
  try {
    const t = ledger.dayTotals(day);
    todayRuns = agent ? (t.byAgent[agent]?.sessions ?? 0) : t.sessions;
    budget = {
      day,
      sessions: t.sessions,
      maxSessions: config.budget.max_sessions_per_day,
      usd: t.costUsd,
      maxUsd: config.budget.max_usd_per_day,
      agentRuns: agent ? todayRuns : null,
      agentMax: i.agent?.maxRunsPerDay ?? null,
    };
    const recent = ledger.recent(60).filter((r) => r.id !== i.sessionId);
    since = agent ? (recent.find((r) => r.agent === agent)?.started_at ?? null) : null;
    mine = agent
      ? recent.filter((r) => r.agent === agent).map((r) => ({ id: r.id, outcome: r.status === 'running' ? 'running' : (r.outcome ?? 'error'), error: r.error, started_at: r.started_at, transcript: r.transcript, status: r.status }))
      : [];
    // Another agent's result and error are its own words, kept in its private memory
    // (sessions/capture resultRecord): under scopes only that it ran, and how it ended, are shown.
    const view = viewOf(config, agent);
    const words = (r: { agent: string }) => view === null || r.agent === view;
    sessions = {
      ok: true,
      items: recent.slice(0, STATE_LIMITS.sessions).map((r) => ({
        id: r.id, agent: r.agent, outcome: r.status === 'running' ? 'running' : (r.outcome ?? 'error'), started_at: r.started_at,
        cost_usd: r.cost_usd, turns: r.turns, result: words(r) ? r.result : null, error: words(r) ? r.error : null,
      })),
    };
    lastOkAt = ledger.lastOkAt();
  } catch (err) {
    sessions = fail(`the ledger could not be read: ${why(err)}`);
  }

  // git's processes run while the memory is read.
  const gitting = gatherGit(config, i.repo);
  const memory = await gatherMemory(i, since, `${day}:${agent ?? '-'}:${todayRuns}`);
  const git = await gitting;
  const attention = gatherAttention(i, mine);
  // Changes since this agent's last session began (all recorded ones before its first).
  const projectFiles = readProjectFileChanges(config.state_dir).filter((c) => !since || c.at >= since);
  const data: StateData = {
    now: now.toISOString(),
    timezone: config.budget.timezone,
    agent,
    sessionId: i.sessionId,
    unattended: i.unattended,
    budget,
    since,
    ...memory,
    sessions,
    lastOkAt,
    git,
    attention,
    projectFiles,
  };
  // Every string redacted, value by value: redacting the JSON text would also hit numbers (a
  // secret of digits inside 0.250000123) and break it.
  return redactStrings(data, i.redact) as StateData;
}

function redactStrings(v: unknown, redact: (t: string) => string): unknown {
  if (typeof v === 'string') return redact(v);
  if (Array.isArray(v)) return v.map((x) => redactStrings(x, redact));
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, redactStrings(x, redact)]));
  return v;
}

// The ATTENTION data when the agent's last session did not end ok; never throws (a store that
// cannot be read leaves the passes out, not the section).
function gatherAttention(i: GatherInput, mine: AttentionRow[]): StateData['attention'] {
  const last = mine[0];
  if (!last || last.outcome === 'ok' || last.outcome === 'running') return null;
  const agent = i.agent?.name ?? null;
  let passes: AnnealPass[] = [];
  try {
    passes = agent ? readPasses(memoryDbPath(i.config), viewOf(i.config, agent)).filter((p) => p.agent === agent) : [];
  } catch {
    passes = [];
  }
  const threshold = i.config.anneal?.recurring_similarity ?? DEFAULTS.anneal.recurring_similarity;
  return attentionOf(mine, passes, lastToolCalls(last.transcript), threshold);
}

// The anneal log from the store, read-only; [] when there is no store yet.
export function readPasses(file: string, agent: string | null = null): AnnealPass[] {
  const view = StateView.open(file, agent);
  if (!view) return [];
  try {
    return view.annealPasses().map(passFromRow);
  } finally {
    view.close();
  }
}

type MemoryParts = Pick<StateData, 'identity' | 'threads' | 'surprises' | 'contradictions' | 'overdue' | 'wander'>;

// A 31-bit seed from text (FNV-1a): the date and the session's place in the day pick the wander.
export function seedOf(text: string): number {
  let h = 0x811c9dc5;
  for (let k = 0; k < text.length; k++) h = Math.imul(h ^ text.charCodeAt(k), 0x01000193);
  return (h >>> 0) & 0x7fffffff;
}

async function gatherMemory(i: GatherInput, since: string | null, seedText: string): Promise<MemoryParts> {
  const file = memoryDbPath(i.config);
  if (!fs.existsSync(file)) {
    const none = { ok: true as const, items: [], note: 'the memory store is empty: nothing remembered yet' };
    return { identity: none, threads: none, surprises: none, contradictions: none, overdue: none, wander: none };
  }
  let store: MemoryStore;
  let view: StateView | null;
  // The session's agent's view (memory/store/scope.ts): its own memories and the shared ones.
  const agent = viewOf(i.config, i.agent?.name ?? null);
  try {
    store = MemoryStore.open(file, { now: () => i.now, agent });
    view = StateView.open(file, agent);
  } catch (err) {
    const w = `the memory store cannot be read: ${why(err)}`;
    return { identity: fail(w), threads: fail(w), surprises: fail(w), contradictions: fail(w), overdue: fail(w), wander: fail(w) };
  }
  const part = <T>(fn: () => Avail<T>): Avail<T> => {
    try {
      return fn();
    } catch (err) {
      return fail(`could not be read: ${why(err)}`);
    }
  };
  // Faded and superseded memories are never injected, whatever a list returns.
  const active = (id: number) => {
    try {
      const r = store.recall(id);
      return !r.faded && r.superseded_by === null;
    } catch {
      return false;
    }
  };
  try {
    return {
      identity: part(() => ({
        ok: true,
        items: (view?.identityCandidates(200) ?? [])
          .map((m) => ({ ...m, retrievability: store.retrievability(m.id, i.now) }))
          .sort((a, b) => b.salience * b.retrievability - a.salience * a.retrievability || b.id - a.id)
          .slice(0, STATE_LIMITS.identity),
      })),
      threads: part(() => ({
        ok: true,
        items: store.threads({ open: true, ...(i.unattended ? { solo: true } : {}), limit: 50 }).filter((t) => active(t.id)).slice(0, STATE_LIMITS.threads).map((t) => ({ id: t.id, text: t.text, solo: t.solo })),
      })),
      surprises: part(() => ({
        ok: true,
        items: store.surprisesSince(since ?? '', 50).filter((x) => active(x.id)).slice(0, STATE_LIMITS.surprises)
          .map((x) => ({ id: x.id, text: `${x.text} (predicted with confidence ${x.confidence.toFixed(2)}: ${x.outcome}${x.note ? `; ${x.note}` : ''})`, source: null, predictionError: x.surprise, at: x.resolved_at })),
      })),
      contradictions: part(() => ({
        ok: true,
        items: store.contradictionCandidates(null, 200)
          .filter((c) => c.status !== 'dismissed' && c.created_at > (since ?? '') && active(c.a) && active(c.b))
          .slice(0, STATE_LIMITS.contradictions)
          .map((c) => ({ a: { id: c.a, text: store.recall(c.a).text }, b: { id: c.b, text: store.recall(c.b).text }, at: c.created_at })),
      })),
      overdue: part(() => ({ ok: true, items: store.overdue(i.now, STATE_LIMITS.overdue).map((m) => ({ id: m.id, text: m.text, due: m.due })) })),
      wander: part(() => ({
        ok: true,
        items: store.wander({ steps: STATE_LIMITS.wander, seed: seedOf(seedText) }).path.filter((w) => active(w.id)).map((w) => ({ id: w.id, text: w.text, via: w.via })),
        note: `a walk over the memory graph seeded by ${seedText.split(':')[0]} and the session's place in the day`,
      })),
    };
  } finally {
    view?.close();
    store.close();
  }
}

const NOT_A_WORK_TREE = 'the vault is not a git work tree';
async function gatherGit(config: Config, repo?: boolean): Promise<StateData['git']> {
  if (!config.git.enabled) return fail('git sync is off (git.enabled: false)');
  // A repository a session left that could not be moved aside: no git of ours runs in the vault.
  if (fs.existsSync(untrustedGitMarker(config.state_dir))) return fail(`git is off: a session left a repository in the vault that could not be moved aside (${untrustedGitMarker(config.state_dir)})`);
  // Each git is a process forked from the supervisor on the path of every session start.
  if (repo === false) return fail(NOT_A_WORK_TREE);
  try {
    const git = gitIn(config.vault, { timeoutMs: Math.min(config.git.timeout, 10_000) });
    // Asked together. In a folder that is not a work tree the others fail too, and only the first
    // is read.
    const [top, branch, last, status, remote] = await Promise.all([
      repo ? { ok: true, stdout: 'true' } : git(['rev-parse', '--is-inside-work-tree']),
      git(['rev-parse', '--abbrev-ref', 'HEAD']),
      git(['log', '-1', '--format=%h %s (%cr)']),
      git(STATUS),
      git(['remote', 'get-url', config.git.remote]),
    ]);
    if (!top.ok || top.stdout !== 'true') return fail(NOT_A_WORK_TREE);
    const b = branch.ok && branch.stdout !== 'HEAD' ? branch.stdout : null;
    let unpushed: number | null = null;
    if (b && remote.ok) {
      const r = await git(['rev-list', '--count', `${config.git.remote}/${b}..HEAD`]);
      if (r.ok) unpushed = Number(r.stdout);
    }
    const value: StateGit = {
      branch: b,
      lastCommit: last.ok && last.stdout ? last.stdout : null,
      uncommitted: status.ok ? status.stdout.split('\n').filter((l) => l.trim() && !l.slice(3).startsWith('.nightshift/')) : [],
      unpushed,
      leftOut: leftOutPaths(readExcludes(config.vault, config.state_dir)).filter((f) => fs.existsSync(path.join(config.vault, f))),
    };
    return { ok: true, value };
  } catch (err) {
    return fail(`git could not be read: ${why(err)}`);
  }
}
