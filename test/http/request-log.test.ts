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

async function logLinesOf(level: 'info' | 'debug'): Promise<Record<string, unknown>[]> {
  const captured = capturedLogger(level);
  const db = await DATABASES[0]!.create();
  const port = await freePort();
  const config = loadConfig({ GATEHOUSE_PORT: String(port), GATEHOUSE_DATABASE_URL: db.url, GATEHOUSE_CLEANUP_INTERVAL: '0' });
  const gatehouse = await createGatehouse(config, {}, { logger: captured.logger });
  try {
    await gatehouse.app.listen({ host: '127.0.0.1', port });
    assert.equal((await fetch(`http://127.0.0.1:${port}/uas/.well-known/openid-configuration`)).status, 200);
    assert.equal((await fetch(`http://127.0.0.1:${port}/uas/oauth2/authorization?client_id=nobody&code_verifier=s3cret-verifier`)).status, 400);
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
    const lines = (await logLinesOf('debug')).filter((l) => l.msg === 'request completed');
    assert.equal(lines.length, 2);
    const [discovery, authorization] = lines as { req: { method: string; url: string }; res: { statusCode: number }; responseTime: number; level: number }[];
    assert.deepEqual([discovery!.req.method, discovery!.req.url, discovery!.res.statusCode], ['GET', '/uas/.well-known/openid-configuration', 200]);
    assert.deepEqual([authorization!.req.url, authorization!.res.statusCode], ['/uas/oauth2/authorization?client_id=nobody&code_verifier=[redacted]', 400]);
    assert.equal(typeof discovery!.responseTime, 'number');
    assert.equal(discovery!.level, 20, 'debug');
  });
});
