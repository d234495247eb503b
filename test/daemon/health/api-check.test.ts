// doctor's authenticated call: a key the API refuses fails doctor, naming the env file; a good key
// costs one token count (not billed), no message.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { apiCheck, apiVerdict } from '../../../daemon/health/api-check.js';
import { startFakeApi, TEST_API_KEY } from '../../fake-api.js';

test('doctor refuses a key the API refuses, naming the env file, with one unbilled call', async (t) => {
  const api = await startFakeApi();
  t.after(() => api.close());
  const bad = await apiCheck({ ANTHROPIC_API_KEY: 'sk-ant-wrong' }, api.url, '/srv/site/nightshift.env', 5000);
  assert.equal(bad?.status, 'fail', JSON.stringify(bad));
  assert.match(bad!.detail, /refuses ANTHROPIC_API_KEY \(401 authentication_error: invalid x-api-key\)/);
  assert.match(bad!.fix!, /\/srv\/site\/nightshift\.env/);
  assert.equal(api.unauthorized, 1, 'one call, not ten retries');
  const good = await apiCheck({ ANTHROPIC_API_KEY: TEST_API_KEY }, api.url, '/srv/site/nightshift.env', 5000);
  assert.equal(good?.status, 'ok', JSON.stringify(good));
  assert.equal(api.countTokens, 1, 'the token counter answered it');
  assert.equal(api.requests.length, 0, 'no message was asked for: nothing billed');
  // An OAuth token goes as a bearer with the OAuth beta, as the proxy sends it.
  api.oauth('oauth-token-1');
  assert.equal((await apiCheck({ CLAUDE_CODE_OAUTH_TOKEN: 'oauth-token-1' }, api.url, 'f', 5000))?.status, 'ok');
  assert.equal(await apiCheck({}, api.url, 'f', 5000), null, 'no credential: the credential check speaks');
});

test('an API that cannot be reached or is busy warns, it does not fail', async () => {
  const key = { kind: 'api_key' as const, value: 'k' };
  assert.equal(apiVerdict({ error: 'ECONNREFUSED' }, key, 'http://127.0.0.1:9', 'f').status, 'warn');
  assert.equal(apiVerdict({ status: 529, body: '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}' }, key, 'b', 'f').status, 'warn');
  assert.equal(apiVerdict({ status: 404, body: '{"type":"error","error":{"type":"not_found_error","message":"model"}}' }, key, 'b', 'f').status, 'ok', 'past the key check');
  assert.equal(apiVerdict({ status: 403, body: '' }, key, 'b', 'f').status, 'fail');
});

test('doctor checks a subscription token with one unbilled call, and names `claude setup-token` for an expired one', async (t) => {
  const api = await startFakeApi();
  t.after(() => api.close());
  api.oauth('sk-ant-oat01-good');
  api.oauth('sk-ant-oat01-old', { expired: true });
  const good = await apiCheck({ CLAUDE_CODE_OAUTH_TOKEN: 'sk-ant-oat01-good' }, api.url, '/srv/site/nightshift.env', 5000);
  assert.equal(good?.status, 'ok', JSON.stringify(good));
  assert.match(good!.detail, /accepts CLAUDE_CODE_OAUTH_TOKEN \(one token count, not billed\)/);
  assert.equal(api.countTokens, 1);
  assert.equal(api.requests.length, 0, 'nothing billed');
  const old = await apiCheck({ CLAUDE_CODE_OAUTH_TOKEN: 'sk-ant-oat01-old' }, api.url, '/srv/site/nightshift.env', 5000);
  assert.equal(old?.status, 'fail', JSON.stringify(old));
  assert.match(old!.detail, /refuses CLAUDE_CODE_OAUTH_TOKEN \(401 authentication_error: OAuth token has expired/);
  assert.match(old!.fix!, /^the subscription token has expired: run `claude setup-token` .* put CLAUDE_CODE_OAUTH_TOKEN=<the new token> in \/srv\/site\/nightshift\.env/);
  assert.doesNotMatch(JSON.stringify(old), /oat01-old/, 'the token is not shown');
  // The control: the good token sent as a plain bearer (no OAuth beta) is refused, so the ok above
  // came from the call being made the way the API takes a subscription token.
  const plain = await apiCheck({ ANTHROPIC_AUTH_TOKEN: 'sk-ant-oat01-good' }, api.url, 'f', 5000);
  assert.equal(plain?.status, 'fail');
  assert.match(plain!.detail, /OAuth authentication is currently not supported/);
  assert.equal(api.unauthorized, 2);
});
