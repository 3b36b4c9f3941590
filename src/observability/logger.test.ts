import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import Fastify from 'fastify';
import { loggerOptions, redactUrl } from './logger.ts';

test('query parameter values are redacted from URLs unless they are on the allowlist', () => {
  assert.equal(redactUrl('/eidm2/services/users/?username=api&password=s3cret&recursive=true'), '/eidm2/services/users/?username=[redacted]&password=[redacted]&recursive=true');
  assert.equal(
    redactUrl('/uas/oauth2/authorization?client_id=c&scope=openid&state=s&nonce=n&login_hint=ada%40example.com&code_challenge=x&code_challenge_method=S256'),
    '/uas/oauth2/authorization?client_id=c&scope=openid&state=[redacted]&nonce=[redacted]&login_hint=[redacted]&code_challenge=[redacted]&code_challenge_method=S256',
  );
  assert.equal(redactUrl('/customerid-rest/services/2.0/users/?email=ada@example.com&mobile=%2B358&maxResults=5'), '/customerid-rest/services/2.0/users/?email=[redacted]&mobile=[redacted]&maxResults=5', 'identity API filters');
  assert.equal(redactUrl('/cb?Code=abc&PASSWORD=x&Client_ID=c'), '/cb?Code=[redacted]&PASSWORD=[redacted]&Client_ID=c', 'names compare case-insensitively');
  assert.equal(redactUrl('/x?client%5Fid=c&pass%77ord=y'), '/x?client%5Fid=c&pass%77ord=[redacted]', 'percent-encoded names are decoded before comparing');
  assert.equal(redactUrl('/x?eyJhbGciOiJIUzI1NiJ9&scope'), '/x?[redacted]&scope', 'a bare name is redacted unless it is on the allowlist');
  assert.equal(redactUrl('/health/live'), '/health/live');
  assert.equal(redactUrl('/x?%E0%A4%A=1&&'), '/x?%E0%A4%A=[redacted]&&', 'a malformed name is on no allowlist');
});

test('a request log line never contains the password, the Authorization header or cookies', async () => {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
  const app = Fastify({ logger: { ...(loggerOptions('debug') as object), stream } });
  app.get('/eidm2/services/users/', async () => ({ ok: true }));
  await app.inject({ url: '/eidm2/services/users/?username=api&password=hunter2-secret', headers: { authorization: 'Basic aHVudGVyMg==', cookie: 'gatehouse_session=cookie-secret' } });
  await app.close();
  const log = lines.join('');
  assert.ok(log.includes('/eidm2/services/users/'), 'the request was logged');
  for (const secret of ['hunter2-secret', 'aHVudGVyMg==', 'cookie-secret']) assert.ok(!log.includes(secret), `log contains ${secret}`);
});
