import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { sessionEnv } from '../../config/session-env.js';

const supervisor = {
  PATH: '/usr/bin:/bin', LANG: 'C.UTF-8', TZ: 'UTC', HOME: '/srv/nightshift', USER: 'nightshift',
  ANTHROPIC_API_KEY: 'sk-ant-real', ANTHROPIC_BASE_URL: 'https://gateway.example', CLAUDE_CODE_OAUTH_TOKEN: 'oauth-real',
  DISCORD_WEBHOOK_URL: 'https://discord.com/api/webhooks/1/tok', NIGHTSHIFT_WEBHOOK_URL: 'https://ntfy.sh/topic-real', GEMINI_API_KEY: 'gem', NIGHTSHIFT_CONFIG: '/srv/nightshift/nightshift.yaml',
  CLAUDE_CODE_MAX_RETRIES: '2', CLAUDE_CODE_API_KEY_HELPER_TTL_MS: '1', DISABLE_TELEMETRY: '1', LC_ALL: 'C', GH_TOKEN: 'gh-real', AWS_SECRET_ACCESS_KEY: 'aws', CLAUDECODE: '1',
};
const base = { env: supervisor, agentEnv: [] as string[], home: '/state/sessions/s1/home', apiUrl: 'http://127.0.0.1:4000', apiToken: 'tok-s1' };

describe('the session\'s environment', () => {
  test('holds the allowlist, the proxy and a token, and none of the supervisor\'s secrets or settings', () => {
    const env = sessionEnv(base);
    assert.deepEqual(Object.keys(env).sort(), [
      'ANTHROPIC_API_KEY', 'ANTHROPIC_BASE_URL', 'CLAUDE_CODE_API_KEY_HELPER_TTL_MS', 'CLAUDE_CODE_MAX_RETRIES', 'CLAUDE_CONFIG_DIR', 'DISABLE_TELEMETRY', 'HOME', 'LANG', 'LC_ALL', 'MCP_CONNECTION_NONBLOCKING', 'PATH', 'TMPDIR', 'TZ', 'USER',
    ]);
    assert.equal(env.ANTHROPIC_API_KEY, 'tok-s1');
    assert.equal(env.MCP_CONNECTION_NONBLOCKING, '0');
    assert.equal(env.ANTHROPIC_BASE_URL, 'http://127.0.0.1:4000');
    assert.equal(env.HOME, '/state/sessions/s1/home');
    for (const v of ['sk-ant-real', 'oauth-real', 'gem', 'gh-real', 'aws', '/srv/nightshift', 'topic-real']) assert.ok(!Object.values(env).some((x) => x.includes(v)), v);
  });

  test('the memory server\'s connect blocks unless the agent names MCP_CONNECTION_NONBLOCKING', () => {
    assert.equal(sessionEnv({ ...base, env: { ...supervisor, MCP_CONNECTION_NONBLOCKING: '1' } }).MCP_CONNECTION_NONBLOCKING, '0');
    assert.equal(sessionEnv({ ...base, env: { ...supervisor, MCP_CONNECTION_NONBLOCKING: '1' }, agentEnv: ['MCP_CONNECTION_NONBLOCKING'] }).MCP_CONNECTION_NONBLOCKING, '1');
  });

  test('a variable the agent names is passed; the supervisor\'s own never are', () => {
    const env = sessionEnv({ ...base, agentEnv: ['GH_TOKEN', 'DISCORD_WEBHOOK_URL', 'NIGHTSHIFT_WEBHOOK_URL', 'ANTHROPIC_API_KEY', 'NOT_SET'] });
    assert.equal(env.GH_TOKEN, 'gh-real');
    assert.equal(env.DISCORD_WEBHOOK_URL, undefined);
    assert.equal(env.NIGHTSHIFT_WEBHOOK_URL, undefined);
    assert.equal(env.ANTHROPIC_API_KEY, 'tok-s1');
    assert.ok(!('NOT_SET' in env));
  });

  test('with an OAuth credential the token stands in for CLAUDE_CODE_OAUTH_TOKEN, and no API key is set', () => {
    const env = sessionEnv({ ...base, oauth: true });
    assert.equal(env.CLAUDE_CODE_OAUTH_TOKEN, 'tok-s1');
    assert.equal(env.ANTHROPIC_API_KEY, undefined);
  });

  test('the egress proxy is in every proxy variable, with the endpoints on 127.0.0.1 left out; without a network, none is set', () => {
    const env = sessionEnv({ ...base, proxyUrl: 'http://nightshift:tok@127.0.0.1:41004' });
    for (const v of ['HTTPS_PROXY', 'HTTP_PROXY', 'https_proxy', 'http_proxy']) assert.equal(env[v], 'http://nightshift:tok@127.0.0.1:41004', v);
    assert.equal(env.NO_PROXY, '127.0.0.1,localhost,::1');
    assert.equal(env.no_proxy, env.NO_PROXY);
    const none = sessionEnv({ ...base, env: { ...supervisor, HTTPS_PROXY: 'http://corp:3128', no_proxy: '*' }, agentEnv: ['HTTPS_PROXY'] });
    assert.deepEqual(Object.keys(none).filter((k) => /proxy/i.test(k)), []);
  });
});

describe('the walled session\'s API', () => {
  test('is the bridge\'s socket, with its base URL; the supervisor\'s own ANTHROPIC_UNIX_SOCKET never passes', () => {
    const env = sessionEnv({ ...base, apiUrl: 'http://localhost', apiSocket: '/tmp/nightshift-api.sock' });
    assert.equal(env.ANTHROPIC_UNIX_SOCKET, '/tmp/nightshift-api.sock');
    assert.equal(env.ANTHROPIC_BASE_URL, 'http://localhost');
    const open = sessionEnv({ ...base, env: { ...supervisor, ANTHROPIC_UNIX_SOCKET: '/run/elsewhere.sock' }, agentEnv: ['ANTHROPIC_UNIX_SOCKET'] });
    assert.equal(open.ANTHROPIC_UNIX_SOCKET, undefined);
  });
});
