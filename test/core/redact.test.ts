import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { createLogger } from '../../logs/logger.js';
import { makeRedactor, secretValues } from '../../core/redact.js';
import { tempDir } from '../helpers.js';

describe('redaction', () => {
  const env = {
    ANTHROPIC_API_KEY: 'test-only-key-abcdefghijklmnop',
    DISCORD_WEBHOOK_URL: 'https://discord.com/api/webhooks/123456789012345678/AbCdEfGhIjKlMnOpQrStUvWxYz0123456789',
    MY_SERVICE_TOKEN: 'tok"en-with\\quote',
    SHORT_KEY: 'abc',
    HOME: '/root/home-is-not-secret',
  };
  const redact = makeRedactor(secretValues(env));

  test('secret values are replaced wherever they appear, raw or JSON-escaped', () => {
    assert.equal(redact('key=test-only-key-abcdefghijklmnop!'), 'key=[redacted]!');
    assert.equal(redact(JSON.stringify({ v: 'x tok"en-with\\quote y' })), '{"v":"x [redacted] y"}');
    assert.equal(redact('token AbCdEfGhIjKlMnOpQrStUvWxYz0123456789 alone'), 'token [redacted] alone');
    assert.equal(redact(env.DISCORD_WEBHOOK_URL), '[redacted]');
  });

  test('non-secret and too-short values are left alone', () => {
    assert.equal(redact('/root/home-is-not-secret abc'), '/root/home-is-not-secret abc');
  });

  test('log lines pass through the redactor', () => {
    const lines: string[] = [];
    const log = createLogger({ redact, logDir: null, stderr: { write: (l) => lines.push(l) } });
    log.info({ header: `x-api-key: ${env.ANTHROPIC_API_KEY}`, nested: { err: new Error(`bad ${env.MY_SERVICE_TOKEN}`) } }, `using ${env.ANTHROPIC_API_KEY}`);
    assert.equal(lines.length, 1);
    assert.ok(!lines[0].includes('test-only-key'), lines[0]);
    assert.ok(!lines[0].includes('en-with'), lines[0]);
    assert.equal(JSON.parse(lines[0]).msg, 'using [redacted]');
  });
});

describe('daily log file', () => {
  test('each line goes to the file of the day it is written on, in the configured zone', (t) => {
    const dir = tempDir(t);
    let now = new Date('2026-11-30T22:30:00Z');
    const log = createLogger({ redact: (x) => x, logDir: dir, timezone: 'Europe/Berlin', now: () => now, stderr: { write: () => undefined } });
    log.info('late on the 30th in Berlin');
    now = new Date('2026-11-30T23:30:00Z'); // 00:30 on Dec 1 in Berlin
    log.info('early on the 1st');
    log.info('still the 1st');
    assert.deepEqual(fs.readdirSync(dir).sort(), ['2026-11-30.log', '2026-12-01.log']);
    assert.equal(fs.readFileSync(path.join(dir, '2026-12-01.log'), 'utf8').trim().split('\n').length, 2);
  });
});

describe('what counts as a secret', () => {
  test('passwords, personal access tokens and URLs that carry credentials, in every encoding', () => {
    const env = {
      SMTP_PASSWORD: 'fake-smtp-password',
      GH_PAT: 'fake-pat-0123456789',
      DATABASE_URL: 'postgres://app:fake%2Fdb%20pass@db.internal:5432/app',
      DISCORD_WEBHOOK_URL: 'https://discord.example/api/webhooks/42/fakewebhooktokenfakewebhooktoken',
      SERVICE_URL: 'https://api.example/v1?api_key=fake-query-key-value',
      PUBLIC_URL: 'https://example.org/docs/page',
    };
    const redact = makeRedactor(secretValues(env));
    assert.equal(redact('pw fake-smtp-password'), 'pw [redacted]');
    assert.equal(redact('pat fake-pat-0123456789'), 'pat [redacted]');
    assert.equal(redact('db postgres://app:fake%2Fdb%20pass@db.internal:5432/app'), 'db [redacted]');
    assert.equal(redact('decoded password fake/db pass'), 'decoded password [redacted]');
    assert.equal(redact(`encoded ${encodeURIComponent(env.DATABASE_URL)}`), 'encoded [redacted]');
    assert.equal(redact(`form ${encodeURIComponent(env.SMTP_PASSWORD + ' x').replace(/%20/g, '+')}`).includes('fake-smtp-password'), false);
    assert.equal(redact('token fakewebhooktokenfakewebhooktoken'), 'token [redacted]');
    assert.equal(redact('q fake-query-key-value'), 'q [redacted]');
    // A URL without credentials is not a secret.
    assert.equal(redact('see https://example.org/docs/page'), 'see https://example.org/docs/page');
  });
});
