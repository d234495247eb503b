// OpenTelemetry traces, at the I/O edge: one trace per fire, exported over OTLP/HTTP by the
// official SDK (batched, its queue bounded). Off (no telemetry.otlp_endpoint) nothing here loads
// the SDK: openTelemetry returns null and the rooms get core/trace.ts's NO_SPAN. Every string
// attribute passes the redactor; what a trace could not deliver is counted, per trace, never thrown.
import type { TraceAttrs, TraceSpan, TraceValue } from '../core/trace.js';
import type { Config } from '../config/schema.js';

type Log = { warn(o: object, m?: string): void; debug(o: object, m?: string): void };

export type Telemetry = {
  // A fire's span: the root of a trace of its own, begun at `startMs` (the fire row's time: the SDK
  // loads after it).
  fire(name: string, attrs: TraceAttrs, startMs?: number): TraceSpan;
  // The trace's spans ended and not (yet) taken by the collector: dropped, refused, or on their way.
  undelivered(traceId: string): number;
  // Waits, at most telemetry.flush_timeout, for the trace's ended spans to reach the collector;
  // returns how many of them did not. Never throws.
  flush(traceId: string): Promise<number>;
  // Waits, at most telemetry.flush_timeout, for every ended span to reach the collector, then stops
  // exporting without waiting for it any longer. Never throws.
  close(): Promise<void>;
};

// The OTLP/HTTP traces URL from a base (`http://host:4318`), as OTEL_EXPORTER_OTLP_ENDPOINT reads it;
// a URL already ending in /v1/traces is kept.
export function tracesUrl(endpoint: string): string {
  const base = endpoint.replace(/\/+$/, '');
  return /\/v1\/traces$/.test(base) ? base : `${base}/v1/traces`;
}

// Pure: `k=v,k2=v2` (OTEL_EXPORTER_OTLP_HEADERS' form, values percent-decoded) into headers; null
// when a part is not `name=value`.
export function parseOtlpHeaders(text: string | undefined): Record<string, string> | null {
  const out: Record<string, string> = {};
  if (!text?.trim()) return out;
  for (const part of text.split(',')) {
    const eq = part.indexOf('=');
    const name = part.slice(0, eq).trim();
    if (eq < 1 || !/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/.test(name)) return null;
    let value = part.slice(eq + 1).trim();
    try {
      value = decodeURIComponent(value);
    } catch {
      // kept as written
    }
    out[name] = value;
  }
  return out;
}

// Pure: an attribute value as OpenTelemetry takes it, redacted (null and undefined are left out).
export function cleanAttrs(attrs: TraceAttrs, redact: (t: string) => string): Record<string, string | number | boolean | string[]> {
  const out: Record<string, string | number | boolean | string[]> = {};
  for (const [k, v] of Object.entries(attrs) as Array<[string, TraceValue]>) {
    if (v === null || v === undefined) continue;
    if (typeof v === 'string') out[k] = redact(v);
    else if (Array.isArray(v)) out[k] = v.map((x) => redact(String(x)));
    else if (typeof v === 'number' ? Number.isFinite(v) : typeof v === 'boolean') out[k] = v;
  }
  return out;
}

// The longest attribute value kept, cut after the redactor ran; a span's name likewise (it holds a
// tool's or a model's name, which the CLI reports).
const VALUE_MAX = 8 * 1024;
const NAME_MAX = 200;

export const TELEMETRY_HEADERS_VAR = 'NIGHTSHIFT_OTLP_HEADERS';

// Outside the bundle (deploy/bundle.mjs), loaded from node_modules through one import() site.
const SDK = ['@opentelemetry/api', '@opentelemetry/sdk-trace', '@opentelemetry/exporter-trace-otlp-http', '@opentelemetry/resources'] as const;

/** The telemetry of this process, or null when it is off. The SDK loads only here, only when on. */
export async function openTelemetry(config: Pick<Config, 'telemetry'>, o: { env: NodeJS.ProcessEnv; redact: (t: string) => string; version: string; logger: Log }): Promise<Telemetry | null> {
  const t = config.telemetry;
  if (!t.otlp_endpoint) return null;
  const headers = parseOtlpHeaders(o.env[TELEMETRY_HEADERS_VAR]);
  if (headers === null) {
    o.logger.warn({ event: 'telemetry_headers_invalid' }, `${TELEMETRY_HEADERS_VAR} is not \`name=value,name=value\`: traces are sent without headers (fix it in the env file)`);
  }
  const [api, sdk, otlp, resources] = (await Promise.all(SDK.map((name) => import(name)))) as [
    typeof import('@opentelemetry/api'),
    typeof import('@opentelemetry/sdk-trace'),
    typeof import('@opentelemetry/exporter-trace-otlp-http'),
    typeof import('@opentelemetry/resources'),
  ];
  const exporter = new otlp.OTLPTraceExporter({ url: tracesUrl(t.otlp_endpoint), headers: headers ?? {}, timeoutMillis: t.export_timeout });
  // Per trace: spans ended, and spans the collector took (a 2xx); the rest are the fire's drops.
  const ended = new Map<string, number>();
  const delivered = new Map<string, number>();
  const pending = new Set<Promise<void>>();
  const add = (m: Map<string, number>, id: string, n = 1) => m.set(id, (m.get(id) ?? 0) + n);
  type Exported = Parameters<typeof exporter.export>[0];
  const counting = {
    export(spans: Exported, done: Parameters<typeof exporter.export>[1]) {
      let settle!: () => void;
      const p = new Promise<void>((r) => (settle = r));
      pending.add(p);
      p.then(() => pending.delete(p), () => {});
      exporter.export(spans, (r) => {
        if (r.code === 0) for (const s of spans) add(delivered, s.spanContext().traceId);
        else o.logger.debug({ event: 'telemetry_export_failed', spans: spans.length, err: o.redact(String(r.error?.message ?? r.error ?? 'failed')) }, 'spans not exported');
        settle();
        done(r);
      });
    },
    shutdown: () => exporter.shutdown(),
    forceFlush: () => exporter.forceFlush(),
  };
  const provider = new sdk.TracerProvider({
    resource: resources.resourceFromAttributes({ 'service.name': 'nightshift', 'service.version': o.version }),
    spanLimits: { attributeValueLengthLimit: VALUE_MAX },
    spanProcessors: [new sdk.BatchSpanProcessor({ exporter: counting, maxQueueSize: t.max_queue_size, maxExportBatchSize: Math.min(512, t.max_queue_size), scheduledDelayMillis: 500, exportTimeoutMillis: t.export_timeout })],
  });
  const tracer = provider.getTracer('nightshift', o.version);

  const wrap = (span: import('@opentelemetry/api').Span, content: boolean): TraceSpan => {
    let done = false;
    const traceId = span.spanContext().traceId;
    const self: TraceSpan = {
      traceId,
      content,
      child(name, attrs = {}, c = {}) {
        const ctx = api.trace.setSpan(api.context.active(), span);
        const kind = name.startsWith('chat') ? api.SpanKind.CLIENT : api.SpanKind.INTERNAL;
        return wrap(tracer.startSpan(o.redact(name).slice(0, NAME_MAX), { kind, attributes: cleanAttrs(attrs, o.redact), startTime: c.startMs }, ctx), c.content ?? content);
      },
      set(attrs) {
        if (!done) span.setAttributes(cleanAttrs(attrs, o.redact));
      },
      fail(reason) {
        if (!done) span.setStatus({ code: api.SpanStatusCode.ERROR, message: o.redact(reason).slice(0, VALUE_MAX) });
      },
      end(endMs) {
        if (done) return;
        done = true;
        add(ended, traceId);
        span.end(endMs);
      },
    };
    return self;
  };

  const undelivered = (traceId: string) => Math.max(0, (ended.get(traceId) ?? 0) - (delivered.get(traceId) ?? 0));
  const flushAll = async () => {
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<void>((r) => (timer = setTimeout(r, t.flush_timeout)));
    try {
      await Promise.race([bound, provider.forceFlush().catch(() => {}).then(() => Promise.all([...pending]))]);
    } finally {
      clearTimeout(timer);
    }
  };
  let closed: Promise<void> | null = null;
  return {
    fire: (name, attrs, startMs) => wrap(tracer.startSpan(name, { root: true, attributes: cleanAttrs(attrs, o.redact), startTime: startMs }), false),
    undelivered,
    async flush(traceId) {
      await flushAll();
      return undelivered(traceId);
    },
    close() {
      closed ??= flushAll().then(() => {
        // Not awaited: a collector that does not answer must not hold the process any longer.
        void provider.shutdown().catch(() => {});
      });
      return closed;
    },
  };
}
