// The status page's server: loopback only, the token (compared through hashes, so a wrong length
// exits no sooner), GET and HEAD only; each refusal with its control (the right token, GET).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { newToken, route, startWebServer, tokenMatches } from '../../../cli/web/server.js';

const pages = { main: async () => '<p>main</p>', session: async (id: string) => (id === 'a b' ? `<p>${id}</p>` : null) };

describe('web server', () => {
  test('route: 405 for any method but GET and HEAD, before the token; 403 without it; the pages with it', () => {
    const t = 'tok';
    for (const m of ['POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS']) assert.deepEqual(route(m, '/tok/', t), { status: 405 });
    assert.deepEqual(route('GET', '/', t), { status: 403 });
    assert.deepEqual(route('GET', '/to/', t), { status: 403 });
    assert.deepEqual(route('GET', '/tokk/', t), { status: 403 });
    assert.deepEqual(route('GET', '/session/x?t=tok', t), { status: 403 });
    assert.deepEqual(route('GET', '/tok/', t), { status: 200, page: 'main' });
    assert.deepEqual(route('HEAD', '/tok/?x=1', t), { status: 200, page: 'main' });
    assert.deepEqual(route('GET', '/tok/session/a%20b', t), { status: 200, page: 'session', id: 'a b' });
    assert.deepEqual(route('GET', '/tok/other', t), { status: 404 });
  });

  test('tokens: fresh each time, matched only whole', () => {
    const a = newToken();
    assert.notEqual(a, newToken());
    assert.ok(a.length >= 32);
    assert.equal(tokenMatches(a, a), true);
    assert.equal(tokenMatches(a.slice(0, -1), a), false);
    assert.equal(tokenMatches(`${a}x`, a), false);
    assert.equal(tokenMatches('', a), false);
  });

  test('served on 127.0.0.1 only: 403 without the token, 405 for POST, 200 with it, and no script may run (CSP)', async () => {
    const token = newToken();
    const web = await startWebServer({ token, port: 0, pages });
    try {
      const addr = web.server.address() as { address: string; family: string };
      assert.equal(addr.address, '127.0.0.1');
      const base = web.url.replace(`${token}/`, '');
      assert.equal((await fetch(base)).status, 403);
      assert.equal((await fetch(`${base}${token.slice(1)}/`)).status, 403);
      const post = await fetch(web.url, { method: 'POST', body: 'x' });
      assert.equal(post.status, 405);
      assert.equal(post.headers.get('allow'), 'GET, HEAD');
      const ok = await fetch(web.url);
      assert.equal(ok.status, 200);
      assert.equal(await ok.text(), '<p>main</p>');
      assert.match(ok.headers.get('content-security-policy') ?? '', /default-src 'none'/);
      assert.equal((await fetch(`${web.url}session/a%20b`)).status, 200);
      assert.equal((await fetch(`${web.url}session/nope`)).status, 404);
    } finally {
      await web.close();
    }
  });
});
