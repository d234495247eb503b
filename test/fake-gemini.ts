// A loopback imitation of the Gemini Developer API, in the REST shapes @google/genai sends
// (2.x uses API version v1beta, 3.x v1; both are answered alike):
// POST /{v1|v1beta}/models/{model}:batchEmbedContents ({requests: [{model, content: {parts: [{text}]},
// taskType, outputDimensionality}]} -> {embeddings: [{values}]}), :embedContent (one content ->
// {embedding: {values}}) and :generateContent ({contents, generationConfig} -> {candidates}).
// `mode` picks how it answers; every request is recorded with its headers.
import { createHash } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export type FakeGeminiMode = 'ok' | '500' | 'malformed' | 'wrong-dim' | 'empty' | 'slow';

export type GeminiRequestRecord = { method: string; path: string; version: string; model: string; action: string; headers: http.IncomingHttpHeaders; body: any };

export type FakeGemini = {
  url: string;
  mode: FakeGeminiMode;
  slowMs: number;
  hydeText: string;
  // When set, what generateContent answers (as the model's text) for a request body.
  generate?: (body: any) => string;
  requests: GeminiRequestRecord[];
  close(): Promise<void>;
};

// A deterministic, not unit-length vector for a text: the SDK client must scale it.
export function fakeVector(text: string, dim: number): number[] {
  const out: number[] = [];
  for (let i = 0; out.length < dim; i++) {
    for (const b of createHash('sha256').update(`${i}:${text}`).digest()) if (out.length < dim) out.push((b - 127.5) / 10);
  }
  return out;
}

const textOf = (content: any): string => (content?.parts ?? []).map((p: any) => p?.text ?? '').join('');

export async function startFakeGemini(mode: FakeGeminiMode = 'ok'): Promise<FakeGemini> {
  const timers = new Set<NodeJS.Timeout>();
  const fake: FakeGemini = { url: '', mode, slowMs: 2000, hydeText: 'Caroline went to an LGBTQ support group on 7 May 2023.', requests: [], close: async () => {} };

  function answer(res: http.ServerResponse, action: string, body: any): void {
    const send = (status: number, payload: string) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(payload);
    };
    if (fake.mode === '500') return send(500, JSON.stringify({ error: { code: 500, message: 'Internal error encountered.', status: 'INTERNAL' } }));
    if (fake.mode === 'malformed') return send(200, '{"embeddings": [{"values": [0.1, 0.2');
    const dimOf = (r: any) => (fake.mode === 'wrong-dim' ? 7 : r?.outputDimensionality ?? 3072);
    if (action === 'batchEmbedContents') {
      const reqs: any[] = body?.requests ?? [];
      if (fake.mode === 'empty') return send(200, JSON.stringify({ embeddings: [] }));
      return send(200, JSON.stringify({ embeddings: reqs.map((r) => ({ values: fakeVector(textOf(r.content), dimOf(r)) })) }));
    }
    if (action === 'embedContent') {
      if (fake.mode === 'empty') return send(200, JSON.stringify({}));
      return send(200, JSON.stringify({ embedding: { values: fakeVector(textOf(body?.content), dimOf(body)) } }));
    }
    if (action === 'generateContent') {
      if (fake.mode === 'empty' || fake.mode === 'wrong-dim') return send(200, JSON.stringify({ candidates: [] }));
      return send(200, JSON.stringify({ candidates: [{ content: { role: 'model', parts: [{ text: fake.generate ? fake.generate(body) : fake.hydeText }] }, finishReason: 'STOP', index: 0 }], modelVersion: 'fake' }));
    }
    send(404, JSON.stringify({ error: { code: 404, message: `Unknown action ${action}`, status: 'NOT_FOUND' } }));
  }

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const path = (req.url ?? '').split('?')[0];
      const m = /^\/(v1|v1beta)\/models\/([^/:]+):(\w+)$/.exec(path);
      let body: any = null;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8') || 'null');
      } catch {
        body = null;
      }
      fake.requests.push({ method: req.method ?? '', path, version: m?.[1] ?? '', model: m?.[2] ?? '', action: m?.[3] ?? '', headers: req.headers, body });
      if (req.method !== 'POST' || !m) {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { code: 404, message: `No route for ${req.method} ${path}`, status: 'NOT_FOUND' } }));
        return;
      }
      if (fake.mode === 'slow') {
        const t = setTimeout(() => {
          timers.delete(t);
          if (!res.destroyed) {
            res.writeHead(200, { 'content-type': 'application/json' });
            res.end('{}');
          }
        }, fake.slowMs);
        timers.add(t);
        return;
      }
      answer(res, m[3], body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  fake.close = () =>
    new Promise<void>((resolve) => {
      for (const t of timers) clearTimeout(t);
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return fake;
}
