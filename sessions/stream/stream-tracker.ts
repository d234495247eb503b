// Pure reader of the CLI's stream-json messages: counts turns, estimates cost as it goes, feeds
// the loop detector and keeps the final `result`. It never throws on odd input: a line that is
// not a JSON object is counted as garbage.
import { LoopDetector, type LoopLimits, type LoopVerdict } from './loop-detector.js';
import { costOf, type CallUsage } from '../../budget/pricing.js';
import type { RateLimitInfo } from './rate-limit.js';
import type { ResultMessage } from './types.js';

export type TrackerEvent =
  | { type: 'loop'; verdict: LoopVerdict }
  | { type: 'cost'; usd: number }
  | { type: 'result'; result: ResultMessage };

export type Tokens = { input: number; output: number; cacheRead: number; cacheWrite: number };

const n = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
const usageOf = (u: any): CallUsage => ({ input: n(u?.input_tokens), cacheWrite: n(u?.cache_creation_input_tokens), cacheRead: n(u?.cache_read_input_tokens), output: n(u?.output_tokens) });
function add(into: CallUsage, u: CallUsage): void {
  into.input += u.input;
  into.cacheWrite += u.cacheWrite;
  into.cacheRead += u.cacheRead;
  into.output += u.output;
}

export class StreamTracker {
  garbage = 0;
  lines = 0;
  toolCalls = 0;
  apiCalls = 0;
  claudeSessionId: string | null = null;
  model: string | null;
  lastText: string | null = null;
  result: ResultMessage | null = null;
  loop: LoopVerdict | null = null;
  // The last tool the model called (for the live line) and the API's last rate-limit word.
  lastTool: string | null = null;
  rateLimit: RateLimitInfo | null = null;
  // The CLI retrying an API call (its `api_retry` line), until a call starts answering again.
  retry: { attempt: number; max: number; status: number | null } | null = null;
  private readonly detector: LoopDetector;
  // Usage from stream_event message_start/message_delta: totals of finished calls plus the one
  // in flight, kept as running sums so each event costs O(1) however long the session.
  private readonly finished: CallUsage = { input: 0, cacheWrite: 0, cacheRead: 0, output: 0 };
  private finishedUsd = 0;
  private current: CallUsage | null = null;
  // Without partial messages, assistant lines' usage once per message id (not final, but a floor).
  private readonly seenMessages = new Set<string>();
  // The model's answers: assistant message ids, less the CLI's own `<synthetic>` ones (the text it
  // writes when no call was answered, e.g. "API Error: 502 …").
  private readonly answers = new Set<string>();
  private readonly fromAssistant: CallUsage = { input: 0, cacheWrite: 0, cacheRead: 0, output: 0 };
  private fromAssistantUsd = 0;

  constructor(limits: LoopLimits, model: string | null = null) {
    this.detector = new LoopDetector(limits);
    this.model = model;
  }

  // Parses one stdout line; returns what a supervisor must act on.
  feedLine(line: string): TrackerEvent[] {
    this.lines++;
    if (!line.trim()) return [];
    let msg: unknown;
    try {
      msg = JSON.parse(line);
    } catch {
      this.garbage++;
      return [];
    }
    if (!msg || typeof msg !== 'object' || Array.isArray(msg) || typeof (msg as { type?: unknown }).type !== 'string') {
      this.garbage++;
      return [];
    }
    return this.feed(msg as Record<string, any>);
  }

  feed(msg: Record<string, any>): TrackerEvent[] {
    const out: TrackerEvent[] = [];
    switch (msg.type) {
      case 'rate_limit_event':
        if (msg.rate_limit_info && typeof msg.rate_limit_info === 'object') this.rateLimit = msg.rate_limit_info as RateLimitInfo;
        break;
      case 'system':
        if (msg.subtype === 'init') {
          this.claudeSessionId = typeof msg.session_id === 'string' ? msg.session_id : null;
          if (typeof msg.model === 'string') this.model = msg.model;
        } else if (msg.subtype === 'api_retry') {
          this.retry = { attempt: n(msg.attempt), max: n(msg.max_retries), status: typeof msg.error_status === 'number' ? msg.error_status : null };
        }
        break;
      case 'stream_event': {
        const ev = msg.event ?? {};
        if (ev.type === 'message_start') {
          if (this.current) {
            add(this.finished, this.current);
            this.finishedUsd += costOf(this.model, this.current);
          }
          this.current = usageOf(ev.message?.usage);
          this.apiCalls++;
          this.retry = null;
          out.push({ type: 'cost', usd: this.estimatedCost() });
        } else if (ev.type === 'message_delta' && this.current) {
          // message_delta carries the cumulative output count for this call.
          this.current.output = Math.max(this.current.output, n(ev.usage?.output_tokens));
          out.push({ type: 'cost', usd: this.estimatedCost() });
        }
        break;
      }
      case 'assistant': {
        const m = msg.message ?? {};
        if (typeof m.id === 'string' && m.model !== '<synthetic>') {
          this.answers.add(m.id);
          // A call answered: any retry before it is over (without partial messages no
          // message_start says so).
          this.retry = null;
        }
        if (typeof m.id === 'string' && m.usage && !this.seenMessages.has(m.id)) {
          this.seenMessages.add(m.id);
          const u = usageOf(m.usage);
          add(this.fromAssistant, u);
          this.fromAssistantUsd += costOf(this.model, u);
          // The running estimate's only news without partial messages (nightshift's own runs).
          if (!this.current) out.push({ type: 'cost', usd: this.estimatedCost() });
        }
        for (const block of Array.isArray(m.content) ? m.content : []) {
          if (block?.type === 'text' && typeof block.text === 'string') this.lastText = block.text;
          if (block?.type === 'tool_use' && typeof block.name === 'string') {
            this.toolCalls++;
            this.lastTool = block.name;
            const verdict = this.detector.push(block.name, block.input);
            if (verdict && !this.loop) {
              this.loop = verdict;
              out.push({ type: 'loop', verdict });
            }
          }
        }
        break;
      }
      case 'result':
        this.result = msg as ResultMessage;
        out.push({ type: 'result', result: this.result });
        break;
    }
    return out;
  }

  // Our running estimate from the usage the stream reported.
  estimatedCost(): number {
    if (this.current) return this.finishedUsd + costOf(this.model, this.current);
    return this.fromAssistantUsd;
  }

  // The CLI's own total when it sent a result, else our estimate.
  cost(): { usd: number; estimated: boolean } {
    if (this.result && typeof this.result.total_cost_usd === 'number') return { usd: this.result.total_cost_usd, estimated: false };
    return { usd: this.estimatedCost(), estimated: true };
  }

  // Tokens from the result's modelUsage (the result's own usage reads zero after a fallback),
  // else summed from the stream.
  tokens(): Tokens {
    const mu = this.result?.modelUsage;
    if (mu && Object.keys(mu).length) {
      const t = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 };
      for (const m of Object.values(mu)) {
        t.input += n(m.inputTokens);
        t.output += n(m.outputTokens);
        t.cacheRead += n(m.cacheReadInputTokens);
        t.cacheWrite += n(m.cacheCreationInputTokens);
      }
      return t;
    }
    if (!this.current) return { ...this.fromAssistant };
    const t = { ...this.finished };
    add(t, this.current);
    return t;
  }

  // The model turns: num_turns from the result, else the API calls we saw. At max_turns the CLI
  // counts the turn it refused to take (2.1.197: max_turns 2 says 3), which no call answered; and
  // a call no one answered (2.1.332: the API unreachable, num_turns 1) is no turn either, so the
  // count is capped at the answers the stream showed.
  turns(): number {
    return Math.min(this.claimedTurns(), Math.max(this.apiCalls, this.answers.size));
  }

  // What the result line claims (num_turns, less a turn refused at max_turns), uncapped: the
  // session writes the stream, so a claim beyond the calls the proxy saw is said (outcome.ts).
  claimedTurns(): number {
    const answered = Math.max(this.apiCalls, this.answers.size);
    if (typeof this.result?.num_turns !== 'number') return answered;
    const refused = this.result.subtype === 'error_max_turns' || this.result.terminal_reason === 'max_turns' ? 1 : 0;
    return Math.max(0, this.result.num_turns - refused);
  }
}
