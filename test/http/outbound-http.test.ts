/**
 * The SSRF-safe poster of back-channel logout tokens (src/adapters/outbound-http.ts; docs/logout.md,
 * "Where gatehouse may POST"; decisions LO5): which addresses it refuses, that it checks the address
 * a name resolves to (not only literals), follows no redirect and reads only a prefix of an answer.
 * Real sockets on 127.0.0.1.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { OutboundRefused, postOutbound, refusalOf, RESPONSE_PREFIX } from '../../src/adapters/outbound-http.ts';

const OPEN = { allowLoopback: true, allowPrivate: false, timeoutMs: 2000 };
const CLOSED = { allowLoopback: false, allowPrivate: false, timeoutMs: 2000 };

describe('outbound POSTs', () => {
  let server: Server;
  let base: string;
  let hits = 0;
  before(async () => {
    server = createServer((request, response) => {
      hits++;
      if (request.url === '/redirect') return response.writeHead(302, { location: '/elsewhere' }).end();
      if (request.url === '/big') return response.writeHead(500).end('x'.repeat(100_000));
      response.writeHead(200).end('ok');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  test('addresses that are not public are refused unless allowed; public ones are not', () => {
    const refused = ['127.0.0.1', '10.1.2.3', '172.16.0.1', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '224.0.0.1', '::1', 'fc00::1', 'fe80::1', '::ffff:10.0.0.1'];
    assert.deepEqual(refused.filter((a) => refusalOf(a, CLOSED) === undefined), [], 'all refused by default');
    assert.deepEqual(refused.filter((a) => refusalOf(a, { allowLoopback: true, allowPrivate: true }) !== undefined), [], 'all allowed when both are on');
    assert.deepEqual(['127.0.0.1', '::1'].map((a) => refusalOf(a, OPEN)), [undefined, undefined], 'loopback alone');
    assert.equal(refusalOf('10.0.0.1', OPEN), '10.0.0.1 is not a public address (GATEHOUSE_OUTBOUND_PRIVATE)');
    // Addresses that reach this host on Linux are loopback, refused even where private ranges are allowed.
    const local = ['0.0.0.0', '0.1.2.3', '::', '::ffff:0.0.0.0'];
    assert.deepEqual(local.map((a) => refusalOf(a, { allowLoopback: false, allowPrivate: true })), local.map((a) => `${a} is a loopback address (GATEHOUSE_OUTBOUND_LOOPBACK)`));
    assert.deepEqual(['::a9fe:a9fe', 'fec0::1'].filter((a) => refusalOf(a, CLOSED) === undefined), [], 'IPv4-compatible and site-local forms');
    assert.deepEqual(['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946'].map((a) => refusalOf(a, CLOSED)), [undefined, undefined]);
  });

  test('loopback over http only when allowed; a name resolving to loopback is refused like the literal; nothing is sent', async () => {
    const before = hits;
    await assert.rejects(postOutbound(`${base}/ok`, 'a=1', 'application/x-www-form-urlencoded', CLOSED), OutboundRefused);
    await assert.rejects(postOutbound(`https://localhost:1/ok`, 'a=1', 'application/x-www-form-urlencoded', CLOSED), (error: Error) => error instanceof OutboundRefused && /loopback/.test(error.message));
    await assert.rejects(postOutbound('http://10.0.0.1/ok', 'a=1', 'application/x-www-form-urlencoded', OPEN), OutboundRefused);
    await assert.rejects(postOutbound('ftp://example.com/x', 'a=1', 'text/plain', OPEN), OutboundRefused);
    assert.equal(hits, before);
    assert.deepEqual(await postOutbound(`${base}/ok`, 'a=1', 'application/x-www-form-urlencoded', OPEN), { status: 200, bodyPrefix: 'ok' });
  });

  test('a redirect is an answer, not followed; of a long answer only the prefix is read', async () => {
    const before = hits;
    assert.deepEqual(await postOutbound(`${base}/redirect`, '', 'text/plain', OPEN), { status: 302, bodyPrefix: '' });
    assert.equal(hits, before + 1, 'only the first request');
    const big = await postOutbound(`${base}/big`, '', 'text/plain', OPEN);
    assert.deepEqual([big.status, big.bodyPrefix.length], [500, RESPONSE_PREFIX]);
  });
});
