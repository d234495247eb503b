// A trace span as the supervisor's rooms see it: the fire's, a session's, a request's. The rooms
// below the tick (the proxy, the hooks, memory) are handed one and only call it; the OpenTelemetry
// SDK behind it (logs/telemetry.ts) loads only when telemetry is on. Off, they get NO_SPAN, which
// does nothing and allocates nothing.

export type TraceValue = string | number | boolean | string[] | null | undefined;
export type TraceAttrs = Record<string, TraceValue>;

export interface TraceSpan {
  // The trace's id (32 hex digits), null when telemetry is off.
  readonly traceId: string | null;
  // Whether content (prompts, results, tool input, memory text) may be put on this span's tree.
  readonly content: boolean;
  // A span under this one, started now (or at `startMs`, epoch milliseconds); `content` sets
  // whether content may go on its tree (else its parent's word).
  child(name: string, attrs?: TraceAttrs, o?: { startMs?: number; content?: boolean }): TraceSpan;
  set(attrs: TraceAttrs): void;
  // Marks the span failed with a short reason (redacted like every attribute).
  fail(reason: string): void;
  // Ends it now (or at `endMs`); a second end does nothing.
  end(endMs?: number): void;
}

// Telemetry off: every call a no-op, every child itself.
export const NO_SPAN: TraceSpan = {
  traceId: null,
  content: false,
  child: () => NO_SPAN,
  set: () => {},
  fail: () => {},
  end: () => {},
};
