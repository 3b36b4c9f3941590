import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import Fastify from 'fastify';
import { loggerOptions, redactUrl } from './logger.ts';

test('secret query parameters are redacted from URLs, others kept', () => {
  assert.equal(redactUrl('/eidm2/services/users/?username=api&password=s3cret&recursive=true'), '/eidm2/services/users/?username=[redacted]&password=[redacted]&recursive=true');
  assert.equal(redactUrl('/uas/oauth2/authorization?client_id=c&state=s&code_verifier=v'), '/uas/oauth2/authorization?client_id=c&state=s&code_verifier=[redacted]');
  assert.equal(redactUrl('/cb?Code=abc&PASSWORD=x'), '/cb?Code=[redacted]&PASSWORD=[redacted]', 'names compare case-insensitively');
  assert.equal(redactUrl('/x?pass%77ord=y'), '/x?pass%77ord=[redacted]', 'percent-encoded names are decoded before comparing');
  assert.equal(redactUrl('/health/live'), '/health/live');
  assert.equal(redactUrl('/x?%E0%A4%A=1'), '/x?%E0%A4%A=1', 'a malformed name is kept as sent');
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
