/**
 * Throttling of failed logins and client authentications (docs/decisions.md, "Hardening"): the
 * progressive delay and lockout, recovery when time passes, valid logins that are not blocked,
 * per-address limits, X-Forwarded-For trust, the token-style endpoints, and counters shared by
 * two instances on one store. Addresses come through X-Forwarded-For from the test's 127.0.0.1,
 * which the servers here trust as a proxy unless a test says otherwise.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { Client } from '../../src/domain/client.ts';
import { ManualClock } from '../../src/lib/clock.ts';
import type { SqlStore } from '../../src/storage/sql/store.ts';
import { AuditCapture } from '../helpers/audit.ts';
import { addClient, addUser, basic, mintCode, postForm, REDIRECT_URI } from '../helpers/back-channel.ts';
import { DATABASES, type TestDatabaseKind } from '../helpers/databases.ts';
import { authorizationUrl, browse, CookieJar, createTestClient, createTestUser, formAction, formFields, submit } from '../helpers/fixtures.ts';
import { assertCodeRedirect, assertLoginPage } from '../helpers/front-channel.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';

const PASSWORD = 'correct horse battery staple';
const SECOND = 1000;

/** A login through the form as a browser behind a proxy that says it is `ip` (no header: undefined). */
async function login(server: RunningServer, client: Client, ip: string | undefined, credentials: { username: string; password: string }, extra: Record<string, string> = {}): Promise<Response> {
  const jar = new CookieJar();
  const headers: Record<string, string> = ip === undefined ? {} : { 'x-forwarded-for': ip };
  const query = { client_id: client.clientId, redirect_uri: client.redirectUris[0]!, response_type: 'code', scope: 'openid', state: 's', ...extra };
  const page = await browse(authorizationUrl(server.url, query), jar, headers);
  const html = await assertLoginPage(page);
  const fields = formFields(html).map(([name, value]): [string, string] => [name, name === 'username' ? credentials.username : name === 'password' ? credentials.password : value]);
  return submit(new URL(formAction(html), server.url).toString(), fields, jar, headers);
}

/** The throttled login page: 429, Retry-After, the form again with the localized message. */
async function assertThrottledPage(response: Response, retryAfter: number, message: RegExp = /Too many failed sign-in attempts\. Wait \d+ (second|minute)s? and try again\./): Promise<string> {
  const html = await assertLoginPage(response, 429);
  assert.equal(response.headers.get('retry-after'), String(retryAfter));
  assert.match(/<p class="message" role="alert"[^>]*>([^<]*)<\/p>/.exec(html)?.[1] ?? '', message);
  assert.equal(response.headers.getSetCookie().find((c) => c.startsWith('gatehouse_session=')), undefined);
  return html;
}

function assertCode(server: RunningServer, client: Client, response: Response): void {
  assertCodeRedirect(response, { redirectUri: client.redirectUris[0]!, state: 's', issuer: server.issuer, status: 303 });
}

const TRUST_LOCAL_PROXY = { GATEHOUSE_TRUSTED_PROXIES: '127.0.0.1', GATEHOUSE_THROTTLE_IP_FAILURES: '8' };

for (const db of DATABASES) {
  describe(`login throttling on ${db.name}`, () => {
    let server: RunningServer;
    let client: Client;
    const clock = new ManualClock(Date.now());
    const audit = new AuditCapture();
    const newUser = async () => (await createTestUser(server.gatehouse.store, { password: PASSWORD })).username;
    let next = 1;
    /** A fresh address for each use, so tests do not share address counters. */
    const address = () => `198.51.100.${next++}`;

    before(async () => {
      server = await startServer(db, { clock, audit, env: TRUST_LOCAL_PROXY });
      ({ client } = await createTestClient(server.gatehouse.store));
    });
    after(async () => server.close());

    test('5 failures: the 5th is answered 429 with Retry-After; then even the right password waits, and succeeds once the wait is over', async () => {
      const username = await newUser();
      const ip = address();
      for (let i = 1; i <= 4; i += 1) await assertLoginPage(await login(server, client, ip, { username, password: `wrong-${i}` }), 401);
      await assertThrottledPage(await login(server, client, ip, { username, password: 'wrong-5' }), 1, /^Too many failed sign-in attempts\. Wait 1 second and try again\.$/);

      audit.clear();
      await assertThrottledPage(await login(server, client, ip, { username, password: PASSWORD }), 1);
      assert.deepEqual(audit.of('login.throttled').map((e) => [e.by, e.retryAfter, e.ip]), [['username', 1, ip]]);
      assert.equal(audit.of('login.failed').length, 0, 'refused before the password was checked');

      clock.advance(SECOND);
      assertCode(server, client, await login(server, client, ip, { username, password: PASSWORD }));
      // A success forgets the failures: one more is an ordinary failure again.
      await assertLoginPage(await login(server, client, ip, { username, password: 'wrong-again' }), 401);
    });

    test('the page speaks the language of the request: fi and sv', async () => {
      const username = await newUser();
      const ip = address();
      for (let i = 1; i <= 4; i += 1) await login(server, client, ip, { username, password: 'wrong' });
      const fi = await assertThrottledPage(await login(server, client, ip, { username, password: 'wrong' }, { ui_locales: 'fi' }), 1, /^Liian monta epäonnistunutta kirjautumisyritystä\. Odota 1 sekunti ja yritä sitten uudelleen\.$/);
      assert.match(fi, /<html lang="fi">/);
      clock.advance(SECOND);
      const sv = await assertThrottledPage(await login(server, client, ip, { username, password: 'wrong' }, { ui_locales: 'sv' }), 2, /^För många misslyckade inloggningsförsök\. Vänta 2 sekunder och försök sedan igen\.$/);
      assert.match(sv, /<html lang="sv">/);
    });

    test('each further failure doubles the wait up to 15 minutes; the counter is forgotten an hour after the last failure', async () => {
      const username = await newUser();
      for (let i = 1; i <= 4; i += 1) await login(server, client, address(), { username, password: 'wrong' });
      const waits: number[] = [];
      for (let i = 5; i <= 16; i += 1) {
        const response = await login(server, client, address(), { username, password: 'wrong' });
        assert.equal(response.status, 429);
        const wait = Number(response.headers.get('retry-after'));
        waits.push(wait);
        clock.advance(wait * SECOND);
      }
      assert.deepEqual(waits, [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 900, 900]);
      const last = await login(server, client, address(), { username, password: 'wrong' });
      await assertThrottledPage(last, 900, /Wait 15 minutes and try again\.$/);
      clock.advance(3600 * SECOND);
      await assertLoginPage(await login(server, client, address(), { username, password: 'wrong' }), 401);
    });

    test('while a username waits, its owner signs in from an address that has not failed on it — even while the attack goes on', async () => {
      const username = await newUser();
      const attacker = address();
      for (let i = 1; i <= 5; i += 1) await login(server, client, attacker, { username, password: `guess-${i}` });
      // The attacker's guesses keep being refused while the real user's login, at the same moment, succeeds.
      const [user, ...guesses] = await Promise.all([
        login(server, client, address(), { username, password: PASSWORD }),
        ...Array.from({ length: 3 }, (_, i) => login(server, client, attacker, { username, password: `more-${i}` })),
      ]);
      assertCode(server, client, user!);
      for (const guess of guesses) assert.equal(guess!.status, 429);
      // The success reset the username, not the attacker's own record on it.
      await assertThrottledPage(await login(server, client, attacker, { username, password: PASSWORD }), 1);
    });

    test('while a username waits, a wrong password from a new address is counted and answered 429', async () => {
      const username = await newUser();
      for (let i = 1; i <= 5; i += 1) await login(server, client, address(), { username, password: 'wrong' });
      const other = address();
      await assertThrottledPage(await login(server, client, other, { username, password: 'wrong' }), 2);
      // Now that address failed on it, it waits too, even with the right password.
      await assertThrottledPage(await login(server, client, other, { username, password: PASSWORD }), 2);
      assertCode(server, client, await login(server, client, address(), { username, password: PASSWORD }));
    });

    test('unknown usernames are throttled exactly like known ones (no enumeration)', async () => {
      const ip = address();
      const nobody = `nobody-${randomUUID()}`;
      const statuses = [];
      for (let i = 1; i <= 6; i += 1) statuses.push((await login(server, client, ip, { username: nobody, password: 'wrong' })).status);
      assert.deepEqual(statuses, [401, 401, 401, 401, 429, 429]);
    });

    test('per address: 8 failures across usernames make the address wait, even for a right password; other addresses are not affected', async () => {
      const ip = address();
      for (let i = 1; i <= 7; i += 1) await assertLoginPage(await login(server, client, ip, { username: `spray-${i}-${randomUUID()}`, password: 'Summer2026!' }), 401);
      await assertThrottledPage(await login(server, client, ip, { username: `spray-8-${randomUUID()}`, password: 'Summer2026!' }), 1);
      const username = await newUser();
      audit.clear();
      await assertThrottledPage(await login(server, client, ip, { username, password: PASSWORD }), 1);
      assert.equal(audit.of('login.throttled')[0]?.by, 'ip');
      assertCode(server, client, await login(server, client, address(), { username, password: PASSWORD }));
      clock.advance(SECOND);
      assertCode(server, client, await login(server, client, ip, { username, password: PASSWORD }));
    });

    test('a right password does not count: successes from a waiting address neither add to its failures nor restart its wait', async () => {
      const ip = address();
      for (let i = 1; i <= 7; i += 1) await login(server, client, ip, { username: `spray-${i}-${randomUUID()}`, password: 'wrong' });
      await assertThrottledPage(await login(server, client, ip, { username: `spray-8-${randomUUID()}`, password: 'wrong' }), 1);
      clock.advance(SECOND);
      // Each success was reserved as a failure in flight, then taken back: the next one is not held up.
      for (let i = 0; i < 3; i += 1) assertCode(server, client, await login(server, client, ip, { username: await newUser(), password: PASSWORD }));
      // The address's 9th failure waits 2 s: its count is 8 failures, not 8 plus the successes.
      await assertThrottledPage(await login(server, client, ip, { username: `spray-9-${randomUUID()}`, password: 'wrong' }), 2);
    });

    test('an attempt the store could not check counts nothing', async () => {
      const username = await newUser();
      const ip = address();
      const users = server.gatehouse.store.users;
      const original = users.getCredentials.bind(users);
      users.getCredentials = async () => {
        throw new Error('the store is unavailable');
      };
      try {
        for (let i = 0; i < 6; i += 1) assert.notEqual((await login(server, client, ip, { username, password: PASSWORD })).status, 429);
      } finally {
        users.getCredentials = original;
      }
      for (let i = 1; i <= 4; i += 1) await assertLoginPage(await login(server, client, ip, { username, password: `wrong-${i}` }), 401);
      await assertThrottledPage(await login(server, client, ip, { username, password: 'wrong-5' }), 1);
    });

    test('usernames compare case-insensitively in the counters, as at login', async () => {
      const username = await newUser();
      const ip = address();
      for (let i = 1; i <= 4; i += 1) await login(server, client, ip, { username: i % 2 === 0 ? username.toUpperCase() : username, password: 'wrong' });
      await assertThrottledPage(await login(server, client, ip, { username: username.toUpperCase(), password: 'wrong' }), 1);
    });
  });

  describe(`X-Forwarded-For and the counted address on ${db.name}`, () => {
    const clock = new ManualClock(Date.now());
    let client: Client;
    let untrusting: RunningServer;
    let trusting: RunningServer;
    const auditUntrusting = new AuditCapture();
    const auditTrusting = new AuditCapture();
    const env = { GATEHOUSE_THROTTLE_IP_FAILURES: '3' };

    before(async () => {
      // 10.9.9.9 is a proxy, but the test's connections come from 127.0.0.1, which is not.
      untrusting = await startServer(db, { clock, audit: auditUntrusting, env: { ...env, GATEHOUSE_TRUSTED_PROXIES: '10.9.9.9' } });
      trusting = await startServer(db, { clock, audit: auditTrusting, env: { ...env, GATEHOUSE_TRUSTED_PROXIES: '10.9.9.9, 127.0.0.0/8' } });
      for (const server of [untrusting, trusting]) ({ client } = await createTestClient(server.gatehouse.store, { clientId: 'xff-client' }));
    });
    after(async () => {
      await untrusting.close();
      await trusting.close();
    });
    const failFrom = (server: RunningServer, ip: string | undefined) => login(server, client, ip, { username: `u-${randomUUID()}`, password: 'wrong' });
    const countedIps = (audit: AuditCapture) => audit.of('login.failed').map((e) => e.ip);

    test('from a peer that is not a trusted proxy, a spoofed X-Forwarded-For changes nothing: the peer is counted', async () => {
      const statuses = [];
      for (const spoofed of ['203.0.113.1', '203.0.113.2', '203.0.113.3', '203.0.113.4']) statuses.push((await failFrom(untrusting, spoofed)).status);
      assert.deepEqual(statuses, [401, 401, 429, 429]);
      assert.deepEqual(countedIps(auditUntrusting), ['127.0.0.1', '127.0.0.1', '127.0.0.1']);
    });

    test('from a trusted proxy, X-Forwarded-For is the counted address (its right-most untrusted entry)', async () => {
      auditTrusting.clear();
      assert.equal((await failFrom(trusting, '203.0.113.10')).status, 401);
      assert.equal((await failFrom(trusting, '192.0.2.50, 203.0.113.10')).status, 401);
      assert.equal((await failFrom(trusting, '203.0.113.10')).status, 429);
      assert.equal((await failFrom(trusting, '203.0.113.11')).status, 401, 'another address has its own counter');
      assert.deepEqual(countedIps(auditTrusting), ['203.0.113.10', '203.0.113.10', '203.0.113.10', '203.0.113.11']);
    });

    test('an unparsable X-Forwarded-For from a trusted proxy counts the proxy itself (fail closed)', async () => {
      auditTrusting.clear();
      const statuses = [];
      for (const garbage of ['not-an-ip', '203.0.113.20:4711', '203.0.113.21, <script>', 'unknown']) statuses.push((await failFrom(trusting, garbage)).status);
      assert.deepEqual(statuses, [401, 401, 429, 429]);
      assert.deepEqual(countedIps(auditTrusting), ['127.0.0.1', '127.0.0.1', '127.0.0.1']);
      assert.equal((await failFrom(trusting, '203.0.113.22')).status, 401, 'a parsable address is counted apart');
    });

    test('IPv6 addresses of one /64 share a counter', async () => {
      assert.equal((await failFrom(trusting, '2001:db8:7:1::1')).status, 401);
      assert.equal((await failFrom(trusting, '2001:db8:7:1:aaaa::2')).status, 401);
      assert.equal((await failFrom(trusting, '2001:db8:7:1::ffff')).status, 429);
      assert.equal((await failFrom(trusting, '2001:db8:7:2::1')).status, 401);
    });
  });

  describe(`client authentication throttling on ${db.name}`, () => {
    let server: RunningServer;
    const clock = new ManualClock(Date.now());
    const audit = new AuditCapture();
    const endpoint = (name: string) => `${server.url}/uas/oauth2/${name}`;
    const from = (ip: string) => ({ 'x-forwarded-for': ip });
    const counters = async () => Number((await (server.gatehouse.store as SqlStore).database.db.selectFrom('throttle_counters').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);

    before(async () => {
      server = await startServer(db, { clock, audit, env: { GATEHOUSE_TRUSTED_PROXIES: '127.0.0.1', GATEHOUSE_THROTTLE_CLIENT_FAILURES: '3', GATEHOUSE_THROTTLE_IP_FAILURES: '6' } });
    });
    after(async () => server.close());

    function assertSlowDown(response: { status: number; headers: Headers; body: Record<string, unknown> }, retryAfter: number): void {
      assert.equal(response.status, 429);
      assert.equal(response.headers.get('retry-after'), String(retryAfter));
      assert.equal(response.headers.get('cache-control'), 'no-store');
      assert.match(response.headers.get('content-type') ?? '', /^application\/json/);
      assert.equal(response.body.error, 'slow_down');
      assert.match(response.body.error_description as string, /^[\x20\x21\x23-\x5b\x5d-\x7e]+$/);
    }

    test('wrong secrets for a client_id: 401, 401, then 429 slow_down JSON with Retry-After; a right secret is never refused', async () => {
      const { client, secret } = await addClient(server.gatehouse.store);
      const user = await addUser(server.gatehouse.store);
      const wrong = () => postForm(endpoint('token'), { grant_type: 'authorization_code', code: 'x', redirect_uri: REDIRECT_URI }, { authorization: basic(client.clientId, 'wrong'), ...from('192.0.2.1') });
      assert.equal((await wrong()).status, 401);
      assert.equal((await wrong()).status, 401);
      assertSlowDown(await wrong(), 1);
      assertSlowDown(await wrong(), 2);
      // The right secret, during the wait, from the same address: the grant goes through.
      const { code } = await mintCode(server.gatehouse.store, client, user, { now: clock.now() });
      const good = await postForm(endpoint('token'), { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI }, { authorization: basic(client.clientId, secret), ...from('192.0.2.1') });
      assert.equal(good.status, 200, JSON.stringify(good.body));
      // Introspection and revocation count against the same client_id and answer the same way.
      assertSlowDown(await postForm(endpoint('introspection'), { token: 'x' }, { authorization: basic(client.clientId, 'wrong'), ...from('192.0.2.2') }), 4);
      assertSlowDown(await postForm(endpoint('revocation'), { token: 'x', client_id: client.clientId, client_secret: 'wrong' }, from('192.0.2.3')), 8);
      assert.equal((await postForm(endpoint('introspection'), { token: good.body.access_token as string }, { authorization: basic(client.clientId, secret) })).body.active, true);
      clock.advance(3600 * SECOND);
      assert.equal((await wrong()).status, 401, 'forgotten an hour after the last failure');
    });

    test('unknown client_ids count per address only: junk ids add no rows, and the address is made to wait', async () => {
      const before = await counters();
      const statuses = [];
      for (const junk of [randomUUID(), 'x'.repeat(500), `junk-${randomUUID()}`, randomUUID(), 'no such client', randomUUID(), randomUUID()]) {
        const response = await postForm(endpoint('token'), { grant_type: 'authorization_code', code: 'x', redirect_uri: REDIRECT_URI, client_id: junk, client_secret: 'x' }, from('192.0.2.77'));
        assert.ok(response.status < 500, `${response.status} for ${JSON.stringify(junk)}`);
        assert.equal(typeof response.body.error, 'string');
        statuses.push(response.status);
      }
      assert.deepEqual(statuses, [401, 401, 401, 401, 401, 429, 429]);
      assert.equal((await counters()) - before, 1, 'one counter: the address');
    });

    // Issue 22 item 10: one client's failures from a shared address used to make every other
    // client failing there (a rotated secret, a deactivated client) be told slow_down at once.
    test('after one client makes a shared address wait, another client failing there for the first time is told invalid_client; again, slow_down', async () => {
      const ip = '192.0.2.150';
      const token = (clientId: string, secret: string) => postForm(endpoint('token'), { grant_type: 'client_credentials' }, { authorization: basic(clientId, secret), ...from(ip) });
      const { client: a } = await addClient(server.gatehouse.store);
      const statuses = [];
      for (let i = 0; i < 6; i += 1) statuses.push((await token(a.clientId, 'wrong')).status);
      assert.deepEqual(statuses, [401, 401, 429, 429, 429, 429], 'A: its own counter (3), then the address (6)');
      assert.deepEqual(audit.of('lockout').filter((e) => e.ip === ip).map((e) => e.by), ['client', 'ip']);
      // B, with its right secret: never refused.
      const { client: b, secret } = await addClient(server.gatehouse.store, { grantTypes: ['client_credentials'] });
      const good = await token(b.clientId, secret);
      assert.equal(good.status, 200, JSON.stringify(good.body));
      // C (a rotated secret) and D (deactivated) fail here for the first time: invalid_client.
      const { client: c } = await addClient(server.gatehouse.store);
      const { client: d, secret: dSecret } = await addClient(server.gatehouse.store, { active: false });
      const first = await token(c.clientId, 'old secret');
      assert.equal(first.status, 401);
      assert.equal(first.body.error, 'invalid_client');
      assert.equal(first.headers.get('retry-after'), null);
      const inactive = await token(d.clientId, dSecret);
      assert.equal(inactive.status, 401);
      assert.equal(inactive.body.error, 'invalid_client');
      // Failing from here again, C has failed itself: the address's wait (its 9th failure: 2^3 s) is its own.
      assertSlowDown(await token(c.clientId, 'old secret'), 8);
      // From another address, C's next failure is C's third: its own counter's threshold.
      assertSlowDown(await postForm(endpoint('token'), { grant_type: 'client_credentials' }, { authorization: basic(c.clientId, 'old secret'), ...from('192.0.2.151') }), 1);
    });

    test('a source trying many client_ids from a waiting address is still slowed: unknown ids at once, registered ones from their second failure', async () => {
      const ip = '192.0.2.160';
      const token = (clientId: string) => postForm(endpoint('token'), { grant_type: 'client_credentials' }, { authorization: basic(clientId, 'guess'), ...from(ip) });
      const registered = await Promise.all(Array.from({ length: 4 }, async () => (await addClient(server.gatehouse.store)).client.clientId));
      const statuses = [];
      for (let i = 0; i < 6; i += 1) statuses.push((await token(randomUUID())).status);
      assert.deepEqual(statuses, [401, 401, 401, 401, 401, 429], 'unknown ids: the address, from its threshold (6)');
      const answers = [];
      for (const id of [...registered, ...registered]) answers.push((await token(id)).status);
      assert.deepEqual(answers, [401, 401, 401, 401, 429, 429, 429, 429], 'each registered id: once invalid_client, then slow_down');
      assert.equal((await token(randomUUID())).status, 429);
    });

    test('a malformed Basic header and a missing client authentication count per address too, and stay JSON', async () => {
      const statuses = [];
      for (let i = 0; i < 7; i += 1) {
        const headers = i % 2 === 0 ? { authorization: 'Basic !!!', ...from('192.0.2.99') } : from('192.0.2.99');
        const response = await postForm(endpoint('revocation'), { token: 'x' }, headers);
        assert.equal(typeof response.body.error, 'string');
        statuses.push(response.status);
      }
      assert.deepEqual(statuses, [401, 401, 401, 401, 401, 429, 429]);
    });
  });

  describe(`the identity API account's throttle on ${db.name}`, () => {
    let server: RunningServer;
    const clock = new ManualClock(Date.now());
    const audit = new AuditCapture();
    const API_PASSWORD = 'api password 1';
    before(async () => {
      server = await startServer(db, { clock, audit, env: { GATEHOUSE_API_USERNAME: 'api', GATEHOUSE_API_PASSWORD: API_PASSWORD, GATEHOUSE_TRUSTED_PROXIES: '127.0.0.1' } });
    });
    after(async () => server.close());
    const list = async (ip: string, how: 'basic' | 'url', password: string, username = 'api') => {
      const credentials = new URLSearchParams({ username, password });
      const url = `${server.url}/customerid-rest/services/2.0/users/${how === 'url' ? `?${credentials}` : ''}`;
      const headers: Record<string, string> = { 'x-forwarded-for': ip, ...(how === 'basic' ? { authorization: `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}` } : {}) };
      const response = await fetch(url, { headers });
      return { status: response.status, retryAfter: response.headers.get('retry-after'), body: (await response.json()) as { error?: { code: string; message: string } } };
    };

    test('5 wrong passwords (Basic or URL parameters) make that address wait: 429 with Retry-After; the right password from another address still works', async () => {
      for (let i = 1; i <= 4; i += 1) assert.equal((await list('192.0.2.10', i % 2 === 0 ? 'basic' : 'url', `wrong ${i}`)).status, 401);
      const fifth = await list('192.0.2.10', 'basic', 'wrong 5');
      assert.deepEqual([fifth.status, fifth.retryAfter, fifth.body.error?.code], [429, '1', 'Authentication failed']);
      const refused = await list('192.0.2.10', 'url', API_PASSWORD);
      assert.deepEqual([refused.status, refused.retryAfter], [429, '1']);
      assert.equal((await list('192.0.2.11', 'basic', API_PASSWORD)).status, 200);
      clock.advance(SECOND);
      assert.equal((await list('192.0.2.10', 'url', API_PASSWORD)).status, 200);
      assert.deepEqual(
        audit.all().map((e) => e.event),
        [...Array(5).fill('identity_api.auth_failed'), 'lockout', 'identity_api.throttled'],
      );
      assert.equal(audit.of('lockout')[0]?.kind, 'identity_api');
      assert.ok(!audit.lines.join('').includes('"api"'), 'the account name is never logged');
    });

    test('malformed credentials count against the address', async () => {
      const statuses = [];
      for (let i = 0; i < 52; i += 1) {
        const response = await fetch(`${server.url}/customerid-rest/services/2.0/users/`, { headers: { 'x-forwarded-for': '192.0.2.12', authorization: 'Basic !!!' } });
        statuses.push(response.status);
      }
      // The 50th failure of the address (GATEHOUSE_THROTTLE_IP_FAILURES) starts its wait.
      assert.equal(statuses.indexOf(429), 49);
      assert.ok(statuses.slice(49).every((s) => s === 429));
      assert.equal((await list('192.0.2.12', 'basic', API_PASSWORD)).status, 429);
      assert.equal((await list('192.0.2.13', 'basic', API_PASSWORD)).status, 200);
    });

    test('changes through the API are audited with the caller’s method, never the account name', async () => {
      audit.clear();
      const auth = { authorization: `Basic ${Buffer.from(`api:${API_PASSWORD}`).toString('base64')}`, 'content-type': 'application/json' };
      const created = await fetch(`${server.url}/customerid-rest/services/2.0/users/`, { method: 'POST', headers: auth, body: JSON.stringify({ attributes: { login: ['audited-api-user'], password: ['initial password 1'] } }) });
      assert.equal(created.status, 201);
      const id = ((await created.json()) as { users: string[] }).users[0]!;
      const updated = await fetch(`${server.url}/customerid-rest/services/2.0/users/${id}`, { method: 'PUT', headers: auth, body: JSON.stringify({ attributes: { password: ['changed password 2'], status: ['disabled'] } }) });
      assert.equal(updated.status, 200, await updated.text());
      assert.equal((await fetch(`${server.url}/customerid-rest/services/2.0/users/${id}`, { method: 'DELETE', headers: { authorization: auth.authorization } })).status, 200);
      const events = audit.all();
      assert.deepEqual(events.map((e) => e.event), ['user.created', 'user.updated', 'user.deleted']);
      const update = audit.of('user.updated')[0]!;
      assert.deepEqual([update.userId, update.username, [...update.fields].sort(), update.status], [id, 'audited-api-user', ['password', 'status'], 'disabled']);
      for (const event of events) assert.deepEqual((event as { actor: unknown }).actor, { via: 'identity-api', method: 'basic' });
      for (const secret of ['initial password 1', 'changed password 2', API_PASSWORD]) assert.ok(!audit.lines.join('').includes(secret));
    });
  });

  describe(`two instances on one ${db.name} database`, () => {
    let first: RunningServer;
    let second: RunningServer;
    let client: Client;
    const clock = new ManualClock(Date.now());

    before(async () => {
      first = await startServer(db, { clock, env: TRUST_LOCAL_PROXY });
      second = await startServer(db as TestDatabaseKind, { clock, env: TRUST_LOCAL_PROXY, database: first.database });
      ({ client } = await createTestClient(first.gatehouse.store));
    });
    after(async () => {
      await second.close();
      await first.close();
    });

    test('failures on either instance add up, and a wait set by one is kept by the other', async () => {
      const username = (await createTestUser(first.gatehouse.store, { password: PASSWORD })).username;
      const ip = '198.51.100.200';
      for (let i = 1; i <= 4; i += 1) await assertLoginPage(await login(i % 2 === 0 ? first : second, client, ip, { username, password: 'wrong' }), 401);
      await assertThrottledPage(await login(second, client, ip, { username, password: 'wrong' }), 1);
      await assertThrottledPage(await login(first, client, ip, { username, password: PASSWORD }), 1);
      assertCode(second, client, await login(second, client, '198.51.100.201', { username, password: PASSWORD }));
    });

    test('client authentication failures are shared too', async () => {
      const { client: rp } = await addClient(first.gatehouse.store);
      const statuses = [];
      for (let i = 0; i < 11; i += 1) {
        const server = i % 2 === 0 ? first : second;
        statuses.push((await postForm(`${server.url}/uas/oauth2/token`, { grant_type: 'refresh_token', refresh_token: 'x' }, { authorization: basic(rp.clientId, 'wrong'), 'x-forwarded-for': `192.0.2.${i}` })).status);
      }
      assert.deepEqual(statuses, [...Array(9).fill(401), 429, 429]);
    });
  });
}
