/**
 * Request logging: at `info` (the default) no line per request, since Fastify's two lines per
 * request cost a third of userinfo's throughput (docs/performance.md); at `debug` one line per
 * answered request, with the URL's secrets redacted.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createGatehouse } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { DATABASES } from '../helpers/databases.ts';
import { capturedLogger } from '../helpers/log.ts';
import { freePort } from '../helpers/server.ts';

/** What the authorization request of the log test carries that must never be logged (finding 12b). */
const NEVER_LOGGED = {
  login_hint: 'ada.lovelace@example.com',
  nonce: 'n-0S6_WzA2Mj',
  id_token_hint: 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJhZGEifQ.c2lnbmF0dXJl',
  state: 'af0ifjsldkj-state',
  code: 'SplxlOBeZQQYbYS6WxSbIA',
  code_verifier: 's3cret-verifier',
  code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
};

async function logLinesOf(level: 'info' | 'debug'): Promise<Record<string, unknown>[]> {
  const captured = capturedLogger(level);
  const db = await DATABASES[0]!.create();
  const port = await freePort();
  const config = loadConfig({ GATEHOUSE_PORT: String(port), GATEHOUSE_DATABASE_URL: db.url, GATEHOUSE_CLEANUP_INTERVAL: '0' });
  const gatehouse = await createGatehouse(config, {}, { logger: captured.logger });
  try {
    await gatehouse.app.listen({ host: '127.0.0.1', port });
    assert.equal((await fetch(`http://127.0.0.1:${port}/uas/.well-known/openid-configuration`)).status, 200);
    const query = new URLSearchParams({ client_id: 'nobody', scope: 'openid', ...NEVER_LOGGED }).toString();
    assert.equal((await fetch(`http://127.0.0.1:${port}/uas/oauth2/authorization?${query}`)).status, 400);
    // Listing filters of the identity API identify users, whoever answers them.
    assert.equal((await fetch(`http://127.0.0.1:${port}/customerid-rest/services/2.0/users/?email=${encodeURIComponent(NEVER_LOGGED.login_hint)}&maxResults=5`)).status, 401);
  } finally {
    await gatehouse.close();
    await db.drop();
  }
  return captured.text().split('\n').filter(Boolean).map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe('request log', () => {
  test('at info, no line per request', async () => {
    const lines = await logLinesOf('info');
    assert.ok(lines.some((l) => String(l.msg).startsWith('Server listening')), 'the log is captured at info');
    assert.deepEqual(lines.filter((l) => l.msg === 'request completed' || l.msg === 'incoming request'), []);
  });

  test('at debug, one line per answered request: method, redacted URL, status, time', async () => {
    const all = await logLinesOf('debug');
    const lines = all.filter((l) => l.msg === 'request completed');
    assert.equal(lines.length, 3);
    const [discovery, authorization, listing] = lines as { req: { method: string; url: string }; res: { statusCode: number }; responseTime: number; level: number }[];
    assert.deepEqual([discovery!.req.method, discovery!.req.url, discovery!.res.statusCode], ['GET', '/uas/.well-known/openid-configuration', 200]);
    assert.deepEqual(
      [authorization!.req.url, authorization!.res.statusCode],
      ['/uas/oauth2/authorization?client_id=nobody&scope=openid&login_hint=[redacted]&nonce=[redacted]&id_token_hint=[redacted]&state=[redacted]&code=[redacted]&code_verifier=[redacted]&code_challenge=[redacted]', 400],
    );
    assert.deepEqual([listing!.req.url, listing!.res.statusCode], ['/customerid-rest/services/2.0/users/?email=[redacted]&maxResults=5', 401]);
    // Nowhere in the whole log, in any line, in any encoding.
    const text = JSON.stringify(all);
    for (const value of Object.values(NEVER_LOGGED)) {
      for (const form of [value, encodeURIComponent(value)]) assert.ok(!text.includes(form), `the log holds ${form}`);
    }
    assert.ok(!text.includes('ada.lovelace'), 'the log holds the login hint');
    assert.equal(typeof discovery!.responseTime, 'number');
    assert.equal(discovery!.level, 20, 'debug');
  });
});
