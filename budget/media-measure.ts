// Measures a request's images and PDFs in a worker thread (budget/media-worker.ts), so a hostile
// file costs the supervisor's event loop nothing: the hooks, the memory server and the watchdogs
// go on answering while it is parsed. Each request has a time bound, each session a total, and the
// worker a memory bound (V8's heap limit for the heap, a watch of its heap and its buffers outside
// it for the rest); past any of them the worker is ended and what it had not measured counts at
// the maximum. What was measured is kept by content hash: a file carried again on every later call
// is measured once a session.
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { MediaItem } from './media-tokens.js';
import type { MeasureAnswer, MeasureRequest } from './media-worker.js';

export type Measured = { width: number; height: number } | { pages: number } | null;
// requestMs: one request's media, all of it; sessionMs: all the session's measuring together;
// memoryMb: the worker's heap and buffers.
export type MeasureBounds = { requestMs: number; sessionMs: number; memoryMb: number };
export const MEASURE_BOUNDS: MeasureBounds = { requestMs: 5000, sessionMs: 60_000, memoryMb: 256 };
// why: what ended measuring early (a bound, the worker's failure), null when all was measured.
export type MeasureResult = { values: Measured[]; why: string | null; ms: number };

// The worker's file: beside this module (dist/budget/), or from the bundle (dist/bundle/).
export function workerFile(): string {
  for (const rel of ['./media-worker.js', '../budget/media-worker.js']) {
    const f = fileURLToPath(new URL(rel, import.meta.url));
    if (fs.existsSync(f)) return f;
  }
  throw new Error('the meter\'s media worker (dist/budget/media-worker.js) is missing: run `npm run build`');
}

const IDLE_MS = 30_000;
const WATCH_MS = 20;

export class MediaMeasurer {
  private worker: Worker | null = null;
  private readonly cache = new Map<string, Measured>();
  private spentMs = 0;
  private next = 0;
  private queue: Promise<unknown> = Promise.resolve();
  private idle: NodeJS.Timeout | null = null;

  constructor(private readonly bounds: MeasureBounds = MEASURE_BOUNDS, private readonly file: () => string = workerFile) {}

  // What the session's measuring has cost so far (the session bound is taken from it).
  get spent(): number {
    return this.spentMs;
  }

  // One request's media, in order; requests are measured one after another (one worker).
  measure(items: MediaItem[]): Promise<MeasureResult> {
    const run = this.queue.then(() => this.run(items));
    this.queue = run.catch(() => {});
    return run;
  }

  close(): void {
    if (this.idle) clearTimeout(this.idle);
    this.idle = null;
    void this.worker?.terminate();
    this.worker = null;
  }

  private async run(items: MediaItem[]): Promise<MeasureResult> {
    const values: Measured[] = items.map((i) => (this.cache.has(i.hash) ? this.cache.get(i.hash)! : null));
    const todo: number[] = [];
    const seen = new Set<string>();
    items.forEach((it, i) => {
      if (!this.cache.has(it.hash) && !seen.has(it.hash)) todo.push(i), seen.add(it.hash);
    });
    const fill = () => items.forEach((it, i) => this.cache.has(it.hash) && (values[i] = this.cache.get(it.hash)!));
    if (!todo.length) return { values, why: null, ms: 0 };
    const left = this.bounds.sessionMs - this.spentMs;
    if (left <= 0) return { values, why: `the session's ${this.bounds.sessionMs} ms of media measuring is spent`, ms: 0 };
    const budget = Math.min(this.bounds.requestMs, left);
    if (this.idle) clearTimeout(this.idle);
    const t0 = performance.now();
    const why = await this.ask(todo.map((i) => items[i]), budget);
    const ms = performance.now() - t0;
    this.spentMs += ms;
    fill();
    if (this.worker) {
      this.idle = setTimeout(() => this.close(), IDLE_MS);
      this.idle.unref();
    }
    return { values, why, ms };
  }

  private start(): Worker {
    const w = new Worker(this.file(), { resourceLimits: { maxOldGenerationSizeMb: this.bounds.memoryMb, maxYoungGenerationSizeMb: 16, stackSizeMb: 4 }, stdout: true, stderr: true });
    // Whatever a parser prints is not ours to show (and a warning on our stderr fails a test).
    w.stdout.resume();
    w.stderr.resume();
    // An error after a request ended (or between requests) must not become the supervisor's.
    w.on('error', () => {});
    w.on('exit', () => this.worker === w && (this.worker = null));
    w.unref();
    return w;
  }

  // Sends the items, caches each answer as it comes; resolves with why it stopped early, or null.
  private ask(items: MediaItem[], budgetMs: number): Promise<string | null> {
    const w = (this.worker ??= this.start());
    const id = this.next++;
    return new Promise((resolve) => {
      let settled = false;
      const end = (why: string | null) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        clearInterval(watch);
        w.off('message', onMessage);
        w.off('error', onError);
        w.off('exit', onExit);
        if (why !== null) {
          void w.terminate();
          if (this.worker === w) this.worker = null;
        }
        resolve(why);
      };
      const onMessage = (m: MeasureAnswer) => {
        if (m.id !== id) return;
        if ('done' in m) return end(null);
        this.cache.set(items[m.index].hash, m.value);
      };
      const onError = (err: Error) => end(`the media worker failed (${(err as NodeJS.ErrnoException).code ?? err.message})`);
      const onExit = () => end('the media worker exited');
      const timer = setTimeout(() => end(`measuring passed ${Math.round(budgetMs)} ms`), budgetMs);
      // The heap limit is V8's; buffers outside the heap (inflated streams) are watched here.
      const limit = this.bounds.memoryMb * 1024 * 1024;
      const watch = setInterval(() => {
        w.getHeapStatistics?.().then((s) => s.used_heap_size + s.external_memory > limit && end(`measuring passed ${this.bounds.memoryMb} MB`), () => {});
      }, WATCH_MS);
      w.on('message', onMessage);
      w.on('error', onError);
      w.on('exit', onExit);
      const copies = items.map((it) => ({ kind: it.kind, data: new Uint8Array(it.data) }));
      w.postMessage({ id, items: copies } satisfies MeasureRequest, copies.map((c) => c.data.buffer));
    });
  }
}
