// `nightshift memory believe|confirm|contradict|link|predict|resolve|review|threads|wander|dream|forget`.
// memory/cli.ts dispatches here. Forget is the one way to delete for good, and only with a code a
// human reads from the dry run.
import { createHash } from 'node:crypto';
import { dayOf } from '../../config/day.js';
import type { Config } from '../../config/schema.js';
import { EXIT, NightshiftError, UsageError } from '../../core/errors.js';
import { PHASES } from '../../memory/dream/dream.js';
import { dreamWithConfig } from '../../memory/dream/dream-run.js';
import type { MemoryFlags, MemoryIo } from './memory-io.js';
import type { MemoryStore } from '../../memory/store.js';
import { DEFAULT_LINK_WEIGHT } from '../../memory/mcp/store-tools.js';
import type { Actor, EdgeType, GradeName, PredictionOutcome } from '../../memory/types.js';
import { redactStateFiles, stateCopies } from '../../memory/store/forget-redact.js';
import { counted, noun } from '../../core/words.js';

// A forget approval that does not match the dry run (wrong code, other ids, another day): exit 77
// (EX_NOPERM), nothing deleted.
export class ForgetRefusedError extends NightshiftError {
  override readonly code = 'FORGET_REFUSED';
  override readonly exitCode = 77;
}

export const LEARNING_SUBS = ['believe', 'confirm', 'contradict', 'link', 'predict', 'resolve', 'review', 'threads', 'wander', 'dream', 'forget'] as const;
export type LearningFlags = MemoryFlags & { confidence?: string; note?: string; due?: string; solo?: boolean; seed?: string; steps?: string; approve?: string; weight?: string };

export const LEARNING_FLAGS: Record<(typeof LEARNING_SUBS)[number], string[]> = {
  believe: ['json', 'source', 'confidence'],
  confirm: ['json'],
  contradict: ['json', 'note'],
  link: ['json', 'weight'],
  predict: ['json', 'confidence', 'due'],
  resolve: ['json', 'note'],
  review: ['json'],
  threads: ['json', 'solo', 'note'],
  wander: ['json', 'steps', 'seed'],
  dream: ['json'],
  forget: ['json', 'approve'],
};

const CLI_ACTOR: Actor = { surface: 'cli', sessionId: null };

type WithStore = <T>(config: Config, io: MemoryIo, fn: (s: MemoryStore) => Promise<T>) => Promise<T>;

const idOf = (s: string | undefined, what = 'ID'): number => {
  const n = Number(s);
  if (!Number.isInteger(n) || n < 1) throw new UsageError(`Expected ${what} to be a memory id (a whole number above 0), got \`${s ?? ''}\``);
  return n;
};
const fractionOf = (s: string | undefined, what: string): number | undefined => {
  if (s === undefined) return undefined;
  const n = Number(s);
  if (!(n >= 0 && n <= 1)) throw new UsageError(`Expected --${what} to be a number from 0 to 1, got \`${s}\``);
  return n;
};
const intOf = (s: string | undefined, what: string): number | undefined => {
  if (s === undefined) return undefined;
  const n = Number(s);
  if (!Number.isInteger(n) || n < 0) throw new UsageError(`Expected --${what} to be a whole number, got \`${s}\``);
  return n;
};

/** The approval code of a forget: the exact set of ids, the day (in the budget's time zone) and the store file. */
export function forgetCode(ids: number[], day: string, file: string): string {
  const set = [...new Set(ids)].sort((a, b) => a - b).join(',');
  const h = createHash('sha256').update(`nightshift forget\n${set}\n${day}\n${file}`).digest('hex').toUpperCase();
  return `${h.slice(0, 4)}-${h.slice(4, 8)}`;
}

/** Runs one learning subcommand; returns the exit code. */
export async function learningCommand(config: Config, sub: (typeof LEARNING_SUBS)[number], args: string[], flags: LearningFlags, io: MemoryIo, withStore: WithStore): Promise<number> {
  const out = (structured: unknown, human: string) => io.out(flags.json ? JSON.stringify(structured) : human);
  const need = (n: number, usage: string) => {
    if (args.length !== n) throw new UsageError(`Expected \`nightshift memory ${usage}\`, got ${counted(args.length, 'argument')}. See \`nightshift memory --help\`.`);
  };
  switch (sub) {
    case 'believe': {
      need(1, 'believe TEXT [--confidence 0..1]');
      const r = await withStore(config, io, (s) => s.believe({ text: args[0], confidence: fractionOf(flags.confidence, 'confidence'), source: flags.source ?? 'cli' }, CLI_ACTOR));
      out(r, `belief #${r.id} (${r.decision})`);
      return EXIT.OK;
    }
    case 'confirm': {
      need(1, 'confirm ID');
      const r = await withStore(config, io, async (s) => s.confirm(idOf(args[0]), CLI_ACTOR));
      out(r, `memory #${r.id} confirmed`);
      return EXIT.OK;
    }
    case 'contradict': {
      need(2, 'contradict ID OTHER_ID [--note TEXT]');
      const r = await withStore(config, io, async (s) => s.contradict(idOf(args[0]), idOf(args[1], 'OTHER_ID'), flags.note ?? null, CLI_ACTOR));
      out(r, `#${r.other_id} contradicts #${r.id}; its confidence is now ${r.confidence}`);
      return EXIT.OK;
    }
    case 'link': {
      need(3, 'link FROM TO TYPE [--weight 0..1]');
      const weight = fractionOf(flags.weight, 'weight') ?? DEFAULT_LINK_WEIGHT;
      const r = await withStore(config, io, async (s) => s.link(idOf(args[0], 'FROM'), idOf(args[1], 'TO'), args[2] as EdgeType, weight, CLI_ACTOR));
      out(r, `#${r.from} ${r.type} #${r.to} (weight ${r.weight})${r.type === 'supersedes' ? `; #${r.to} is superseded` : ''}`);
      return EXIT.OK;
    }
    case 'predict': {
      need(1, 'predict TEXT [--confidence 0..1] [--due ISO-TIME]');
      const r = await withStore(config, io, (s) => s.predict({ text: args[0], confidence: fractionOf(flags.confidence, 'confidence'), due: flags.due ?? null, source: 'cli' }, CLI_ACTOR));
      out(r, `prediction #${r.id}`);
      return EXIT.OK;
    }
    case 'resolve': {
      need(2, 'resolve ID correct|partly|wrong [--note TEXT]');
      if (!['correct', 'partly', 'wrong'].includes(args[1])) throw new UsageError(`Expected the outcome to be correct, partly or wrong, got \`${args[1]}\``);
      const r = await withStore(config, io, async (s) => s.resolvePrediction(idOf(args[0]), args[1] as PredictionOutcome, flags.note ?? null, CLI_ACTOR));
      out({ id: r.id, surprise: r.surprise }, `prediction #${r.id} resolved: surprise ${r.surprise}`);
      return EXIT.OK;
    }
    case 'review': {
      need(2, 'review ID again|hard|good|easy');
      if (!['again', 'hard', 'good', 'easy'].includes(args[1])) throw new UsageError(`Expected the grade to be again, hard, good or easy, got \`${args[1]}\``);
      const r = await withStore(config, io, async (s) => s.review(idOf(args[0]), args[1] as GradeName, CLI_ACTOR));
      out(r, `#${r.id} graded ${r.grade}: stability ${r.stability} days, due ${r.due}`);
      return EXIT.OK;
    }
    case 'threads': {
      const [action = 'list', ...rest] = args;
      const threads = await withStore(config, io, async (s) => {
        if (action === 'open' && rest.length === 1) return [await s.openThread({ text: rest[0], solo: !!flags.solo, source: 'cli' }, CLI_ACTOR)];
        if (action === 'resolve' && rest.length === 1) return [s.resolveThread(idOf(rest[0]), flags.note ?? null, CLI_ACTOR)];
        if (action === 'list' && !rest.length) return s.threads({ open: true, solo: flags.solo });
        throw new UsageError('Expected `nightshift memory threads [list [--solo]] | open TEXT [--solo] | resolve ID [--note TEXT]`');
      });
      out({ threads }, threads.length ? threads.map((t) => `#${t.id}  ${t.status}${t.solo ? ' solo' : ''}  ${t.text}${t.resolution ? `  -> ${t.resolution}` : ''}`).join('\n') : 'no open threads');
      return EXIT.OK;
    }
    case 'wander': {
      need(0, 'wander [--steps N] [--seed N]');
      const r = await withStore(config, io, async (s) => s.wander({ steps: intOf(flags.steps, 'steps'), seed: intOf(flags.seed, 'seed') }));
      out(r, [`seed ${r.seed}`, ...r.path.map((p) => `${p.via.padEnd(7)} #${p.id}  R ${p.retrievability.toFixed(2)}  [${p.category}]  ${p.text}`)].join('\n'));
      return EXIT.OK;
    }
    case 'dream': {
      need(0, 'dream [--json]');
      const tty = io.stderrIsTTY;
      const r = await withStore(config, io, (s) =>
        dreamWithConfig(s, config, io.env, {
          actor: CLI_ACTOR,
          logger: io.logger,
          onPhase: (phase, i, n) => {
            if (tty) io.err(`\rdream [${'#'.repeat(i + 1).padEnd(n)}] ${phase.padEnd(16)}`);
          },
        }),
      );
      if (tty) io.err('\n');
      const human = [`dream: ${r.duration_ms} ms`, ...PHASES.map((p) => {
        const { ok, ms, error, ...counts } = r.phases[p];
        return `  ${p.padEnd(15)} ${ok ? 'ok    ' : 'FAILED'} ${String(ms).padStart(6)} ms  ${error ? error : Object.entries(counts).map(([k, v]) => `${k} ${v}`).join(', ')}`;
      })].join('\n');
      out(r, human);
      return Object.values(r.phases).every((p) => p.ok) ? EXIT.OK : EXIT.FAILED;
    }
    case 'forget':
      return forget(config, args, flags, io, withStore);
  }
}

async function forget(config: Config, args: string[], flags: LearningFlags, io: MemoryIo, withStore: WithStore): Promise<number> {
  if (!args.length) throw new UsageError('Expected `nightshift memory forget ID... [--approve CODE]`');
  const ids = [...new Set(args.map((a) => idOf(a)))].sort((a, b) => a - b);
  const day = dayOf(new Date(), config.budget.timezone);
  return withStore(config, io, async (s) => {
    const code = forgetCode(ids, day, s.file);
    const command = `nightshift memory forget ${ids.join(' ')} --approve ${code}`;
    if (flags.approve === undefined) {
      const missing: number[] = [];
      const items = ids.flatMap((id) => {
        try {
          const m = s.recall(id);
          return [{ id, text: m.text, category: m.category, sources: m.sources.length, faded: m.faded }];
        } catch {
          missing.push(id);
          return [];
        }
      });
      if (missing.length) throw new UsageError(`No memory with id ${missing.join(', ')}; nothing to forget`);
      // A dream's abstractions of these quote their text: they go along.
      const derived = s.derivedFrom(ids).filter((id) => !ids.includes(id)).map((id) => {
        const m = s.recall(id);
        return { id, text: m.text, category: m.category, sources: m.sources.length, faded: m.faded, derived: true };
      });
      items.push(...derived);
      const structured = { would_delete: items, day, code, command };
      io.out(flags.json ? JSON.stringify(structured) : [
        `Would delete ${items.length} memor${items.length === 1 ? 'y' : 'ies'} for good, with their observations, edges and vectors, and tombstone their claims:`,
        ...items.map((m) => `  #${m.id} [${m.category}]${m.faded ? ' (faded)' : ''}${'derived' in m ? ' (an abstraction of them)' : ''} ${m.text.length > 160 ? `${m.text.slice(0, 160)}…` : m.text} (${counted(m.sources, 'source')})`),
        '',
        `To do it, run (the code is good today, ${day}, for exactly these ids):`,
        `  ${command}`,
      ].join('\n'));
      return EXIT.OK;
    }
    // The code is derived from what a dry run prints, so a session with a shell could approve its
    // own: an approval must come from a terminal, which no session's tool has.
    if (!io.stdinIsTTY) {
      throw new ForgetRefusedError('Refused: `--approve` must be typed by a human at a terminal (stdin is not a terminal). Nothing was deleted.');
    }
    if (flags.approve.trim().toUpperCase() !== code) {
      throw new ForgetRefusedError(`Refused: \`${flags.approve}\` is not the approval code for forgetting ${ids.join(', ')} today (${day}). Nothing was deleted. Run \`nightshift memory forget ${ids.join(' ')}\` to see what would go and the code.`);
    }
    const d = s.deleteForever(ids, `forgotten by the operator (${code})`, CLI_ACTOR);
    // The session-state copies quote memories too: beside each transcript, and the vault's.
    const redacted = redactStateFiles(stateCopies(config.log_dir, config.vault), new Set(d.deleted), (line) => s.isForgotten(line));
    const r = { ...d, state_files_redacted: redacted.length };
    io.out(flags.json ? JSON.stringify(r) : [
      `deleted ${r.deleted.length} memor${r.deleted.length === 1 ? 'y' : 'ies'} for good; ${r.tombstones.length} tombstone ${noun(r.tombstones.length, 'key')} written`,
      `${r.audit_redacted} audit ${noun(r.audit_redacted, 'row')} and ${r.state_files_redacted} session-state ${noun(r.state_files_redacted, 'file')} redacted; ${r.checkpointed ? 'the file is checkpointed' : 'a reader held the WAL: the next checkpoint clears it'}`,
    ].join('\n'));
    return EXIT.OK;
  });
}
