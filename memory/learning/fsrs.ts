// FSRS-6 over plain data, through ts-fsrs: a memory's card, its retrievability at a moment, and the
// card after a grade. Pure; the store reads and writes the card columns.
import { Rating, createEmptyCard, default_w, forgetting_curve, fsrs, type Card, type Grade } from 'ts-fsrs';

export const GRADES = ['again', 'hard', 'good', 'easy'] as const;
export type GradeName = (typeof GRADES)[number];

// Why a memory was graded; docs/memory.md has the mapping from real use to grade.
export const GRADE_REASONS = ['used', 'contradicted', 'superseded', 'ignored', 'confirmed', 'manual'] as const;
export type GradeReason = (typeof GRADE_REASONS)[number];

// The card columns of `memories` (ts-fsrs `Card` without learning steps: short-term steps are off,
// memory works in days).
export type CardRow = {
  due: string;
  stability: number;
  difficulty: number;
  elapsed_days: number;
  scheduled_days: number;
  reps: number;
  lapses: number;
  state: number;
  last_review: string | null;
};

const DAY_MS = 86_400_000;
const RATING: Record<GradeName, Grade> = { again: Rating.Again, hard: Rating.Hard, good: Rating.Good, easy: Rating.Easy };

// No fuzz (the same history gives the same schedule) and no minute-scale learning steps.
const scheduler = fsrs({ enable_fuzz: false, enable_short_term: false });

// The card a memory starts with: observing it is its first learning, scheduled as FSRS schedules a
// first successful review (stability w[2]). `reps` stays 0: no grade was given, none is recorded.
export function initialCard(createdAt: string): CardRow {
  const at = new Date(createdAt);
  const c = scheduler.next(createEmptyCard(at), at, Rating.Good).card;
  return { ...toRow(c), reps: 0 };
}

/** The card after `grade` at `now` (FSRS-6 with the default weights). */
export function review(card: CardRow, grade: GradeName, now: Date): CardRow {
  const c = scheduler.next(fromRow(card), now, RATING[grade]).card;
  return toRow(c);
}

/** Probability of recall at `now`, 0..1: FSRS-6's power forgetting curve over the days since the last review (or creation). */
export function retrievability(card: Pick<CardRow, 'stability' | 'last_review'>, now: Date, createdAt?: string): number {
  const since = card.last_review ?? createdAt;
  if (!since || !(card.stability > 0)) return 0;
  const days = Math.max(0, (now.getTime() - Date.parse(since)) / DAY_MS);
  return forgetting_curve(default_w, days, card.stability);
}

function fromRow(r: CardRow): Card {
  return {
    due: new Date(r.due),
    stability: r.stability,
    difficulty: r.difficulty,
    elapsed_days: r.elapsed_days,
    scheduled_days: r.scheduled_days,
    learning_steps: 0,
    reps: r.reps,
    lapses: r.lapses,
    state: r.state,
    last_review: r.last_review ? new Date(r.last_review) : undefined,
  };
}

function toRow(c: Card): CardRow {
  return {
    due: c.due.toISOString(),
    stability: c.stability,
    difficulty: c.difficulty,
    elapsed_days: c.elapsed_days,
    scheduled_days: c.scheduled_days,
    reps: c.reps,
    lapses: c.lapses,
    state: c.state,
    last_review: c.last_review ? c.last_review.toISOString() : null,
  };
}
