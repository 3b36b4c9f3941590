// The jwks_uri fetcher (private_key_jwt) against a local HTTP server: what it refuses to fetch,
// the limits of a fetch (time, size, shape), and how rarely it fetches (TTL, refetch cooldown,
// remembered failures, one fetch for concurrent callers). Time is the injected clock's.
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { after, before, beforeEach, describe, test } from 'node:test';
import { ManualClock } from '../lib/clock.ts';
import { JwksUnavailable } from '../oauth/client-auth/method.ts';
import { jwksUriProblem } from '../oauth/jwks.ts';
import { RemoteJwks } from './remote-jwks.ts';

const KEY = { kty: 'EC', crv: 'P-256', x: 'f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU', y: 'x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0', kid: 'k1' };

describe('RemoteJwks', () => {
  let server: Server;
  let base: string;
  /** What the server answers at each path; counts the requests. */
  let routes: Record<string, (request: IncomingMessage, response: ServerResponse) => void>;
  let hits: Record<string, number>;
  before(async () => {
    server = createServer((request, response) => {
      hits[request.url!] = (hits[request.url!] ?? 0) + 1;
      const route = routes[request.url!];
      if (route) return route(request, response);
      response.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  beforeEach(() => {
    routes = {};
    hits = {};
  });
  const json = (value: unknown) => (_: IncomingMessage, response: ServerResponse) => response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(value));
  const refused = (promise: Promise<unknown>, message: RegExp) => assert.rejects(promise, (error) => error instanceof JwksUnavailable && message.test(error.message));

  test('fetches only https, or http on a loopback host; never a URL with user information', () => {
    assert.equal(jwksUriProblem('https://rp.example/jwks.json'), undefined);
    assert.equal(jwksUriProblem('http://127.0.0.1:8080/jwks'), undefined);
    assert.equal(jwksUriProblem('http://localhost/jwks'), undefined);
    assert.equal(jwksUriProblem('http://[::1]/jwks'), undefined);
    assert.match(jwksUriProblem('http://rp.example/jwks')!, /https/);
    assert.match(jwksUriProblem('http://10.0.0.1/jwks')!, /https/);
    assert.match(jwksUriProblem('file:///etc/passwd')!, /https/);
    assert.match(jwksUriProblem('https://user:pw@rp.example/jwks')!, /user information/);
    assert.match(jwksUriProblem('not a url')!, /absolute URL/);
  });

  test('a refused URI is never fetched', async () => {
    const fetcher = new RemoteJwks(new ManualClock());
    await refused(fetcher.get('http://rp.example/jwks'), /https URL/);
    assert.equal(fetcher.fetches, 0);
  });

  test('caches a key set for its TTL; a refresh fetches again only after the cooldown', async () => {
    routes['/jwks'] = json({ keys: [KEY] });
    const clock = new ManualClock();
    const fetcher = new RemoteJwks(clock, { ttlMs: 300_000, cooldownMs: 60_000 });
    const first = await fetcher.get(`${base}/jwks`);
    assert.deepEqual(first, { keys: [KEY] });
    clock.advance(59_999);
    assert.equal(await fetcher.get(`${base}/jwks`), first);
    assert.equal(await fetcher.get(`${base}/jwks`, { refresh: true }), first, 'within the cooldown a refresh is the cached set');
    assert.equal(hits['/jwks'], 1);
    clock.advance(1);
    const refreshed = await fetcher.get(`${base}/jwks`, { refresh: true });
    assert.notEqual(refreshed, first);
    assert.equal(hits['/jwks'], 2);
    clock.advance(299_999);
    await fetcher.get(`${base}/jwks`);
    assert.equal(hits['/jwks'], 2, 'still fresh');
    clock.advance(1);
    await fetcher.get(`${base}/jwks`);
    assert.equal(hits['/jwks'], 3, 'the TTL ran out');
  });

  test('concurrent callers share one fetch', async () => {
    routes['/jwks'] = json({ keys: [KEY] });
    const fetcher = new RemoteJwks(new ManualClock());
    const sets = await Promise.all(Array.from({ length: 20 }, () => fetcher.get(`${base}/jwks`)));
    assert.equal(new Set(sets).size, 1);
    assert.equal(hits['/jwks'], 1);
  });

  test('garbage, a non-200, a redirect, private keys and a slow server are refused; the failure is remembered for the cooldown', async () => {
    routes['/garbage'] = (_, response) => response.writeHead(200).end('<html>not json</html>');
    routes['/not-a-set'] = json({ keys: 'no' });
    routes['/private'] = json({ keys: [{ ...KEY, d: 'secret' }] });
    routes['/symmetric'] = json({ keys: [{ kty: 'oct', k: 'c2VjcmV0' }] });
    routes['/error'] = (_, response) => response.writeHead(500).end();
    routes['/redirect'] = (_, response) => response.writeHead(302, { location: `${base}/jwks` }).end();
    routes['/slow'] = () => {}; // never answers
    const clock = new ManualClock();
    const fetcher = new RemoteJwks(clock, { timeoutMs: 200, cooldownMs: 60_000 });
    await refused(fetcher.get(`${base}/garbage`), /not answer with JSON/);
    await refused(fetcher.get(`${base}/not-a-set`), /not a JWK Set/);
    await refused(fetcher.get(`${base}/private`), /private or symmetric/);
    await refused(fetcher.get(`${base}/symmetric`), /private or symmetric/);
    await refused(fetcher.get(`${base}/error`), /answered 500/);
    await refused(fetcher.get(`${base}/redirect`), /could not be fetched/);
    await refused(fetcher.get(`${base}/slow`), /did not answer within 200 ms/);
    // Asked again within the cooldown: the same failure, no new fetch.
    await refused(fetcher.get(`${base}/garbage`, { refresh: true }), /not answer with JSON/);
    assert.equal(hits['/garbage'], 1);
    clock.advance(60_000);
    await refused(fetcher.get(`${base}/garbage`), /not answer with JSON/);
    assert.equal(hits['/garbage'], 2);
  });

  test('a body larger than the limit is refused, whether or not it declares its length', async () => {
    const big = JSON.stringify({ keys: [KEY], padding: 'x'.repeat(5000) });
    routes['/declared'] = (_, response) => response.writeHead(200, { 'content-length': String(Buffer.byteLength(big)) }).end(big);
    routes['/chunked'] = (_, response) => {
      response.writeHead(200);
      for (let i = 0; i < 10; i++) response.write('x'.repeat(1000));
      response.end();
    };
    const fetcher = new RemoteJwks(new ManualClock(), { maxBytes: 4096 });
    await refused(fetcher.get(`${base}/declared`), /more than 4096 bytes/);
    await refused(fetcher.get(`${base}/chunked`), /more than 4096 bytes/);
  });
});
