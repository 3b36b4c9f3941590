/**
 * PostgreSQL goes away while gatehouse serves: a TCP proxy of the test's own sits between a real
 * gatehouse process and the shared PostgreSQL, and is cut (connections reset and refused) or
 * silenced (a partition: nothing answers). Every endpoint must then answer fast with 503 in its
 * own error format, the process must not crash, and once the proxy is restored the same process
 * must serve again by itself.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Client } from '../../src/domain/client.ts';
import type { User } from '../../src/domain/user.ts';
import type { SqlStore } from '../../src/storage/sql/store.ts';
import { openSqlStore } from '../../src/storage/sql/store.ts';
import { addClient, addUser, basic, mintCode, postForm, REDIRECT_URI } from '../helpers/back-channel.ts';
import { DATABASES, type TestDatabase } from '../helpers/databases.ts';
import { startGatehouse, type GatehouseProcess } from './processes.ts';
import { startTcpProxy, type TcpProxy } from './tcp-proxy.ts';

/** GATEHOUSE_DATABASE_TIMEOUT's default is 5 s; a request may take a little longer than that. */
const BOUND_MS = 6000;
const API = { username: 'api-account', password: 'api-password-of-the-test' };

const postgres = DATABASES.find((kind) => kind.name === 'postgres');

describe('PostgreSQL unreachable during traffic', { skip: postgres ? false : 'set GATEHOUSE_TEST_POSTGRES_URL' }, () => {
  let database: TestDatabase;
  let store: SqlStore;
  let proxy: TcpProxy;
  let server: GatehouseProcess;
  let client: Client;
  let secret: string;
  let user: User;
  /** Tokens issued before any outage. */
  let issued: { access_token: string; refresh_token: string };

  before(async () => {
    database = await postgres!.create();
    store = await openSqlStore(database.url);
    const target = new URL(database.url);
    proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
    const proxied = new URL(database.url);
    proxied.port = String(proxy.port);
    server = await startGatehouse({ databaseUrl: proxied.toString(), env: { GATEHOUSE_API_USERNAME: API.username, GATEHOUSE_API_PASSWORD: API.password } });
    ({ client, secret } = await addClient(store));
    user = await addUser(store);
    const first = await redeem();
    assert.equal(first.status, 200, JSON.stringify(first.body));
    issued = first.body as typeof issued;
  });

  after(async () => {
    await server?.kill();
    await proxy?.close();
    await store?.close();
    await database?.drop();
  });

  const redeem = async () => postForm(`${server.url}/uas/oauth2/token`, { grant_type: 'authorization_code', code: (await mintCode(store, client, user)).code, redirect_uri: REDIRECT_URI }, { authorization: basic(client.clientId, secret) });

  /** A request, timed; a network error (the server hung up or died) fails the test. */
  async function timed(name: string, send: () => Promise<Response>): Promise<{ name: string; response: Response; body: string; ms: number }> {
    const started = Date.now();
    const response = await send();
    const body = await response.text();
    return { name, response, body, ms: Date.now() - started };
  }

  /** Every kind of endpoint at once, as traffic would hit them; what each answered and how fast. */
  function probeEveryEndpoint(code: string) {
    const form = (fields: Record<string, string>) => ({ method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(client.clientId, secret) }, body: new URLSearchParams(fields).toString() });
    const authorizeQuery = new URLSearchParams({ client_id: client.clientId, redirect_uri: REDIRECT_URI, response_type: 'code', scope: 'openid', state: 's' });
    return Promise.all([
      timed('token (code)', () => fetch(`${server.url}/uas/oauth2/token`, form({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI }))),
      timed('token (refresh)', () => fetch(`${server.url}/uas/oauth2/token`, form({ grant_type: 'refresh_token', refresh_token: issued.refresh_token }))),
      timed('introspection', () => fetch(`${server.url}/uas/oauth2/introspection`, form({ token: issued.access_token }))),
      timed('revocation', () => fetch(`${server.url}/uas/oauth2/revocation`, form({ token: 'not-a-token-anyone-has' }))),
      timed('userinfo', () => fetch(`${server.url}/uas/oauth2/userinfo`, { headers: { authorization: `Bearer ${issued.access_token}` } })),
      timed('authorization', () => fetch(`${server.url}/uas/oauth2/authorization?${authorizeQuery}`, { redirect: 'manual' })),
      timed('login', () =>
        fetch(`${server.url}/uas/oauth2/authorization/login`, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `${authorizeQuery}&username=u&password=p&csrf_token=x` }),
      ),
      timed('status', () => fetch(`${server.url}/uas/status?entityID=${encodeURIComponent(client.clientId)}&sessionIndex=_${'0'.repeat(40)}`)),
      timed('identity API', () => fetch(`${server.url}/customerid-rest/services/2.0/users/?maxResults=1`, { headers: { authorization: `Basic ${Buffer.from(`${API.username}:${API.password}`).toString('base64')}`, accept: 'application/json' } })),
      timed('ready', () => fetch(`${server.url}/health/ready`)),
      timed('live', () => fetch(`${server.url}/health/live`)),
      timed('discovery', () => fetch(`${server.url}/uas/.well-known/openid-configuration`)),
    ]);
  }

  /** What an outage must look like from outside: 503s in each endpoint's own format, fast. */
  function assertUnavailable(results: Awaited<ReturnType<typeof probeEveryEndpoint>>): void {
    for (const { name, response, body, ms } of results) {
      assert.ok(ms < BOUND_MS, `${name} took ${ms} ms`);
      const json = () => JSON.parse(body) as Record<string, unknown>;
      switch (name) {
        case 'live':
        case 'discovery':
          assert.equal(response.status, 200, `${name} needs no database`);
          break;
        case 'ready':
          assert.equal(response.status, 503);
          assert.deepEqual(json(), { status: 'unavailable' });
          break;
        case 'authorization':
        case 'login':
          // The client cannot be verified, so nothing is redirected: the HTML error page (RFC 6749 §4.1.2.1).
          assert.equal(response.status, 503, `${name}: ${body.slice(0, 200)}`);
          assert.match(response.headers.get('content-type') ?? '', /^text\/html/);
          assert.equal(response.headers.get('location'), null);
          assert.match(body, /temporarily_unavailable/);
          break;
        case 'identity API':
          assert.equal(response.status, 503, `${name}: ${body.slice(0, 200)}`);
          assert.equal(response.headers.get('retry-after'), '5');
          break;
        default:
          // token, introspection, revocation, status (JSON) and userinfo (Bearer resource): RFC 6749 §5.2 shape.
          assert.equal(response.status, 503, `${name}: ${body.slice(0, 200)}`);
          assert.match(response.headers.get('content-type') ?? '', /^application\/json/);
          assert.equal(json().error, 'temporarily_unavailable', name);
          assert.equal(response.headers.get('retry-after'), '5', `${name} says when to retry`);
          if (name !== 'status') assert.equal(response.headers.get('cache-control'), 'no-store', name);
      }
    }
  }

  /** The same process comes back by itself: ready, then a full token exchange and userinfo. */
  async function assertRecovers(): Promise<void> {
    const deadline = Date.now() + 10_000;
    while ((await fetch(`${server.url}/health/ready`)).status !== 200) {
      assert.ok(Date.now() < deadline, 'not ready again within 10 s of PostgreSQL coming back');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const again = await redeem();
    assert.equal(again.status, 200, JSON.stringify(again.body));
    const userinfo = await fetch(`${server.url}/uas/oauth2/userinfo`, { headers: { authorization: `Bearer ${issued.access_token}` } });
    assert.equal(userinfo.status, 200, 'a token issued before the outage still works');
    assert.equal(server.child.exitCode, null, 'the same process, never restarted');
    assert.equal(server.child.signalCode, null);
  }

  test('connections reset and refused: every endpoint answers 503 in its format at once; then it recovers', async () => {
    const code = (await mintCode(store, client, user)).code;
    proxy.refuse();
    try {
      assertUnavailable(await probeEveryEndpoint(code));
    } finally {
      proxy.restore();
    }
    await assertRecovers();
  });

  test('a partition (nothing answers): requests fail within the database timeout instead of hanging; then it recovers', async () => {
    const code = (await mintCode(store, client, user)).code;
    proxy.blackhole();
    try {
      const results = await probeEveryEndpoint(code);
      assertUnavailable(results);
      // The pooled connections were waiting for answers that never came: the timeout, not luck, ended them.
      assert.ok(Math.max(...results.map((r) => r.ms)) >= 1500, 'the partition was in effect');
    } finally {
      proxy.restore();
    }
    await assertRecovers();
  });

  test('cut in the middle of traffic: every answer is 200 or 503, none hangs, and traffic resumes', async () => {
    const codes = await Promise.all(Array.from({ length: 300 }, () => mintCode(store, client, user)));
    const outcomes: { status: number; ms: number; at: number }[] = [];
    let stop = false;
    let sent = 0;
    const worker = async () => {
      while (!stop) {
        // Half token exchanges (while codes last), half introspections.
        const code = sent++ % 2 === 0 ? codes.pop()?.code : undefined;
        const started = Date.now();
        const response =
          code !== undefined
            ? await postForm(`${server.url}/uas/oauth2/token`, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI }, { authorization: basic(client.clientId, secret) })
            : await postForm(`${server.url}/uas/oauth2/introspection`, { token: issued.access_token }, { authorization: basic(client.clientId, secret) });
        outcomes.push({ status: response.status, ms: Date.now() - started, at: started });
        // A client told to retry later backs off a little before it does.
        if (response.status === 503) await new Promise((resolve) => setTimeout(resolve, 20));
      }
    };
    const traffic = Promise.all(Array.from({ length: 6 }, worker));
    await new Promise((resolve) => setTimeout(resolve, 300));
    const cutAt = Date.now();
    proxy.refuse();
    await new Promise((resolve) => setTimeout(resolve, 1000));
    proxy.restore();
    const restoredAt = Date.now();
    await new Promise((resolve) => setTimeout(resolve, 1200));
    stop = true;
    await traffic;

    const statuses = new Set(outcomes.map((o) => o.status));
    assert.deepEqual([...statuses].filter((s) => s !== 200 && s !== 503), [], `only 200 and 503, got ${[...statuses].join(', ')}`);
    assert.ok(outcomes.some((o) => o.at < cutAt && o.status === 200), 'traffic flowed before the cut');
    assert.ok(outcomes.some((o) => o.status === 503), 'the cut was noticed');
    assert.ok(outcomes.some((o) => o.at > restoredAt + 200 && o.status === 200), 'traffic flows again after the restore');
    assert.ok(Math.max(...outcomes.map((o) => o.ms)) < BOUND_MS, 'no request hung');
    assert.equal(server.child.exitCode, null);
  });
});
