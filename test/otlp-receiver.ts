// A loopback OTLP/HTTP traces receiver for the tests: it decodes what the exporter really sends
// (OTLP/JSON, `application/json`, gzip or not: @opentelemetry/exporter-trace-otlp-http's encoding)
// into spans, and answers as a collector does: `ok` (200 and an ExportTraceServiceResponse),
// `fail` (500), `hang` (never answers), or `hold` (takes and decodes each request at once, and
// answers it as `ok` only once released: a slow collector, as slow as the test wants; `held`
// counts the requests still waiting for their answer).
import http from 'node:http';
import zlib from 'node:zlib';
import type { AddressInfo } from 'node:net';

// OTLP/JSON's AnyValue (opentelemetry-proto's JSON mapping: 64-bit ints may come as strings).
type AnyValue = { stringValue?: string; boolValue?: boolean; intValue?: number | string; doubleValue?: number; arrayValue?: { values?: AnyValue[] }; kvlistValue?: { values?: KeyValue[] } };
type KeyValue = { key: string; value: AnyValue };
type OtlpSpan = { traceId: string; spanId: string; parentSpanId?: string; name: string; kind?: number; startTimeUnixNano: string | number; endTimeUnixNano: string | number; attributes?: KeyValue[]; status?: { code?: number; message?: string } };
type ExportTraceServiceRequest = { resourceSpans?: Array<{ resource?: { attributes?: KeyValue[] }; scopeSpans?: Array<{ scope?: { name?: string }; spans?: OtlpSpan[] }> }> };

export type Span = { traceId: string; spanId: string; parent: string | null; name: string; attrs: Record<string, unknown>; status: { code: number; message: string }; startNs: bigint; endNs: bigint; resource: Record<string, unknown> };

function value(v: AnyValue): unknown {
  if ('stringValue' in v) return v.stringValue;
  if ('boolValue' in v) return v.boolValue;
  if ('intValue' in v) return Number(v.intValue);
  if ('doubleValue' in v) return v.doubleValue;
  if (v.arrayValue) return (v.arrayValue.values ?? []).map(value);
  if (v.kvlistValue) return attrs(v.kvlistValue.values);
  return null;
}
const attrs = (kv: KeyValue[] | undefined): Record<string, unknown> => Object.fromEntries((kv ?? []).map((a) => [a.key, value(a.value)]));

// Decodes one request body as the exporter's content type says it is.
export function decodeOtlpJson(body: Buffer, contentType: string | undefined): Span[] {
  if (!/^application\/json\b/.test(contentType ?? '')) throw new Error(`Expected an OTLP/JSON body (application/json), got ${contentType}`);
  const req = JSON.parse(body.toString('utf8')) as ExportTraceServiceRequest;
  const out: Span[] = [];
  for (const rs of req.resourceSpans ?? []) {
    const resource = attrs(rs.resource?.attributes);
    for (const ss of rs.scopeSpans ?? []) {
      for (const s of ss.spans ?? []) {
        out.push({ traceId: s.traceId, spanId: s.spanId, parent: s.parentSpanId || null, name: s.name, attrs: attrs(s.attributes), status: { code: s.status?.code ?? 0, message: s.status?.message ?? '' }, startNs: BigInt(s.startTimeUnixNano), endNs: BigInt(s.endTimeUnixNano), resource });
      }
    }
  }
  return out;
}

export type OtlpReceiver = { url: string; spans: Span[]; bodies: string[]; requests: number; held: number; errors: string[]; release(): void; close(): Promise<void> };

export async function startOtlpReceiver(mode: 'ok' | 'fail' | 'hang' | 'hold' = 'ok'): Promise<OtlpReceiver> {
  const r: OtlpReceiver = { url: '', spans: [], bodies: [], requests: 0, held: 0, errors: [], release: () => {}, close: async () => {} };
  const held = new Set<http.ServerResponse>();
  let waiting: Array<() => void> | null = mode === 'hold' ? [] : null;
  r.release = () => {
    const go = waiting ?? [];
    waiting = null;
    r.held = 0;
    for (const f of go) f();
  };
  const server = http.createServer((req, res) => {
    r.requests++;
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (mode === 'hang') return void held.add(res);
      if (mode === 'fail') {
        res.writeHead(500, { 'content-type': 'application/json' });
        return res.end('{"code":13,"message":"collector down"}');
      }
      const answer = take(req, chunks);
      if (!waiting) return answer(res);
      r.held++;
      held.add(res);
      waiting.push(() => answer(res));
    });
  });
  // Decodes the request; returns how to answer it (200, or 400 naming what was wrong).
  const take = (req: http.IncomingMessage, chunks: Buffer[]) => {
    try {
      if (req.method !== 'POST' || req.url !== '/v1/traces') throw new Error(`Expected POST /v1/traces, got ${req.method} ${req.url}`);
      let body = Buffer.concat(chunks);
      if (req.headers['content-encoding'] === 'gzip') body = zlib.gunzipSync(body);
      r.bodies.push(body.toString('utf8'));
      r.spans.push(...decodeOtlpJson(body, req.headers['content-type']));
      return (res: http.ServerResponse) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{}');
      };
    } catch (err) {
      r.errors.push(String((err as Error).message));
      return (res: http.ServerResponse) => {
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end('{}');
      };
    }
  };
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  r.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  r.close = () => new Promise<void>((ok) => {
    for (const h of held) h.destroy();
    server.closeAllConnections();
    server.close(() => ok());
  });
  return r;
}
