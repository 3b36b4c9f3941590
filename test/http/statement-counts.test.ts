/**
 * The SQL statements each hot path runs per request, counted over HTTP against a real server on
 * every database (issue 27): S1 introspection, S2 userinfo, S3 the code exchange with an ID token,
 * S4 a rotating refresh, S5 a silent authorization with an SSO session, S6 a full password login
 * (the login page and the form's POST), S7 client_credentials with client_secret_basic, S8 with
 * private_key_jwt, S9 for a resource server that takes RFC 9068 JWT access tokens. Counts are
 * asserted equal, so a statement or a transaction added to a path fails here, not in a benchmark.
 *
 * `statements` leaves out BEGIN, COMMIT and ROLLBACK; `transactions` counts the BEGINs; `roundTrips`
 * is everything the driver was asked to run: on PostgreSQL each is a round trip to the server
 * (docs/performance.md, "Round 2: where the time goes"). Each path runs twice and the second run
 * is counted: the first fills what is cached for good (signing keys, prepared statements).
 * The store's copy of the audit events is off: it is written in batches, one INSERT per 100 ms
 * whatever the number of requests (docs/decisions.md AU1), not by any request. The clock stands
 * still, so no session reaches the point where its idle deadline moves (a sixtieth of the idle
 * timeout, sessions.ts), which a busy SSO session does at most once per step.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { Client } from '../../src/domain/client.ts';
import { parsePolicyDocument } from '../../src/domain/policy.ts';
import type { User } from '../../src/domain/user.ts';
import { ManualClock } from '../../src/lib/clock.ts';
import { addClient, basic, postForm } from '../helpers/back-channel.ts';
import { addKeyClient, assertionFields, keyAssertion, signingKey, type SigningKey } from '../helpers/client-assertions.ts';
import { DATABASES } from '../helpers/databases.ts';
import { authorizationUrl, browse, CookieJar, createTestUser, formAction, formFields, submit } from '../helpers/fixtures.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';

interface Count {
  statements: number;
  transactions: number;
  roundTrips: number;
}

type Path = 'S1' | 'S1a' | 'S2' | 'S3' | 'S4' | 'S5' | 'S5p' | 'S6 page' | 'S6 login' | 'S7' | 'S8' | 'S9';

/** What each path runs now on SQLite. Change a figure only with a reason in docs/performance.md. */
/**
 * On SQLite every write runs in a group commit (src/storage/sql/sqlite-group-commit.ts, PR36): a
 * write outside a unit of work opens a BEGIN IMMEDIATE … COMMIT that the writes arriving before
 * its commit join, so a path's transactions are its units of work plus each write or burst of
 * writes outside one (S5's silent-authorization counter, S7–S9's token INSERT, S8's `jti`, the
 * login's throttle counters and session). On SQLite a round trip is a function call.
 */
const ON_SQLITE: Record<Path, Count> = {
  S1: { statements: 1, transactions: 0, roundTrips: 1 },
  S1a: { statements: 1, transactions: 0, roundTrips: 1 },
  S2: { statements: 1, transactions: 0, roundTrips: 1 },
  S3: { statements: 3, transactions: 1, roundTrips: 5 },
  S4: { statements: 4, transactions: 1, roundTrips: 6 },
  S5: { statements: 4, transactions: 2, roundTrips: 8 },
  S5p: { statements: 5, transactions: 2, roundTrips: 9 },
  'S6 page': { statements: 1, transactions: 0, roundTrips: 1 },
  'S6 login': { statements: 11, transactions: 6, roundTrips: 23 },
  S7: { statements: 4, transactions: 1, roundTrips: 6 },
  S8: { statements: 5, transactions: 2, roundTrips: 9 },
  S9: { statements: 4, transactions: 1, roundTrips: 6 },
};

/**
 * PostgreSQL runs the same statements but for the sign-in, whose failure counters' reservation and
 * release take a unit of work of their own there (src/storage/sql/throttle-store.ts); a write
 * outside a unit of work commits on its own (PostgreSQL groups concurrent commits' WAL flushes itself).
 */
const ON_POSTGRES: Record<Path, Count> = {
  ...ON_SQLITE,
  S5: { statements: 4, transactions: 1, roundTrips: 6 },
  S5p: { statements: 5, transactions: 1, roundTrips: 7 },
  'S6 login': { statements: 14, transactions: 2, roundTrips: 18 },
  S7: { statements: 4, transactions: 0, roundTrips: 4 },
  S8: { statements: 5, transactions: 0, roundTrips: 5 },
  S9: { statements: 4, transactions: 0, roundTrips: 4 },
};

const EXPECTED: Record<'sqlite' | 'postgres', Record<Path, Count>> = { sqlite: ON_SQLITE, postgres: ON_POSTGRES };

const PASSWORD = 'statement count password';
const SCOPE = 'openid profile email';
const TRANSACTION_CONTROL = /^\s*(begin|start transaction|commit|rollback)\b/i;
const BEGIN = /^\s*(begin|start transaction)\b/i;

for (const db of DATABASES) {
  describe(`statements per request on ${db.name}`, () => {
    const clock = new ManualClock(Math.floor(Date.now() / 1000) * 1000);
    let server: RunningServer;
    /** Every statement's SQL since the last `counted` began. */
    let seen: string[] = [];
    let rp: { client: Client; secret: string };
    /** A relying party with an authorization policy (docs/authorization.md): its access rule and claims are read at each sign-in. */
    let policyRp: { client: Client; secret: string };
    let resourceServer: { client: Client; secret: string };
    let jwtResourceServer: { client: Client; secret: string };
    let machine: { client: Client; secret: string };
    let keyMachine: { client: Client; key: SigningKey };
    let user: User;

    before(async () => {
      server = await startServer(db, { clock, onStatement: (sqlText) => seen.push(sqlText), env: { GATEHOUSE_AUDIT_STORE: 'off', GATEHOUSE_OUTBOX_INTERVAL: '0' } });
      const store = server.gatehouse.store;
      resourceServer = await addClient(store, { grantTypes: [], redirectUris: [], refreshTokens: false, metadata: {} });
      jwtResourceServer = await addClient(store, { grantTypes: [], redirectUris: [], refreshTokens: false, metadata: { access_token_format: 'jwt' } });
      const aud = [resourceServer.client.clientId, jwtResourceServer.client.clientId];
      rp = await addClient(store, { grantTypes: ['authorization_code', 'refresh_token'], refreshTokens: true, rotateRefreshTokens: true });
      const policyName = `policy-${randomUUID()}`;
      await store.policies.insert({ document: parsePolicyDocument({ name: policyName, access: { attributes: { team: ['blue'] } }, claims: [{ claim: 'team', from: 'attribute:team' }] }), version: 1, createdAt: 0, updatedAt: 0 });
      policyRp = await addClient(store, { redirectUris: ['https://policy-rp.example.test/cb'], authorizationPolicy: policyName });
      machine = await addClient(store, { grantTypes: ['client_credentials'], redirectUris: [], refreshTokens: false, metadata: { aud } });
      const key = await signingKey('ES256');
      keyMachine = { client: await addKeyClient(store, { keys: [key], metadata: { aud }, overrides: { grantTypes: ['client_credentials'], redirectUris: [], refreshTokens: false } }), key };
      user = await createTestUser(store, { password: PASSWORD, email: 'ada@example.com', attributes: { team: ['blue'] } });
    });
    after(async () => server.close());

    /** Runs one request (its body read to the end) and counts what the store ran meanwhile. */
    async function counted<T>(request: () => Promise<T>): Promise<{ result: T; count: Count }> {
      seen = [];
      const result = await request();
      const ran = seen;
      // GATEHOUSE_PRINT_SQL=1: what each request ran, to see what a changed count is made of.
      if (process.env.GATEHOUSE_PRINT_SQL) console.log(`---\n${ran.map((text) => text.slice(0, 200)).join('\n')}`);
      seen = [];
      return { result, count: { statements: ran.filter((text) => !TRANSACTION_CONTROL.test(text)).length, transactions: ran.filter((text) => BEGIN.test(text)).length, roundTrips: ran.length } };
    }

    const tokenUrl = () => `${server.url}/uas/oauth2/token`;
    const ok = (response: { status: number; body: Record<string, unknown> }) => {
      assert.equal(response.status, 200, JSON.stringify(response.body));
      return response.body;
    };

    /** Every path once, in the order a relying party meets them; the count of each request. */
    async function everyPath(): Promise<Record<Path, Count>> {
      const counts: Partial<Record<Path, Count>> = {};
      const query = { client_id: rp.client.clientId, redirect_uri: rp.client.redirectUris[0]!, response_type: 'code', scope: SCOPE, state: 's' };
      const jar = new CookieJar();

      // S6: the login page, then the form's POST that signs in and answers with the code.
      const page = await counted(async () => {
        const response = await browse(authorizationUrl(server.url, query), jar);
        return { status: response.status, html: await response.text() };
      });
      assert.equal(page.result.status, 200);
      counts['S6 page'] = page.count;
      const fields = formFields(page.result.html).map(([name, value]): [string, string] => [name, name === 'username' ? user.username : name === 'password' ? PASSWORD : value]);
      const login = await counted(async () => submit(new URL(formAction(page.result.html), server.url).toString(), fields, jar));
      assert.equal(login.result.status, 303);
      counts['S6 login'] = login.count;
      const firstCode = new URL(login.result.headers.get('location')!).searchParams.get('code')!;

      // S5: the same browser again: a code without the login page.
      const silent = await counted(async () => browse(authorizationUrl(server.url, query), jar));
      assert.equal(silent.result.status, 302);
      counts.S5 = silent.count;
      assert.ok(new URL(silent.result.headers.get('location')!).searchParams.get('code'));

      // S5p: the same for a client with an authorization policy, which lets this user in.
      const policyQuery = { ...query, client_id: policyRp.client.clientId, redirect_uri: policyRp.client.redirectUris[0]! };
      const policed = await counted(async () => browse(authorizationUrl(server.url, policyQuery), jar));
      assert.equal(policed.result.status, 302);
      assert.ok(new URL(policed.result.headers.get('location')!).searchParams.get('code'));
      counts.S5p = policed.count;

      // S3: the code for tokens, with an ID token.
      const exchange = await counted(() => postForm(tokenUrl(), { grant_type: 'authorization_code', code: firstCode, redirect_uri: query.redirect_uri }, { authorization: basic(rp.client.clientId, rp.secret) }));
      const tokens = ok(exchange.result);
      assert.equal(typeof tokens.id_token, 'string');
      counts.S3 = exchange.count;

      // S1: a resource server introspects the access token.
      const introspection = await counted(() => postForm(`${server.url}/uas/oauth2/introspection`, { token: tokens.access_token as string }, { authorization: basic(resourceServer.client.clientId, resourceServer.secret) }));
      assert.equal(ok(introspection.result).active, true);
      counts.S1 = introspection.count;

      // S2: userinfo with the access token.
      const info = await counted(async () => {
        const response = await fetch(`${server.url}/uas/oauth2/userinfo`, { headers: { authorization: `Bearer ${tokens.access_token as string}` } });
        return { status: response.status, body: (await response.json()) as Record<string, unknown> };
      });
      assert.equal(ok(info.result).sub, user.id);
      counts.S2 = info.count;

      // S4: the refresh token, rotated.
      const refresh = await counted(() => postForm(tokenUrl(), { grant_type: 'refresh_token', refresh_token: tokens.refresh_token as string }, { authorization: basic(rp.client.clientId, rp.secret) }));
      assert.notEqual(ok(refresh.result).refresh_token, tokens.refresh_token);
      counts.S4 = refresh.count;

      // S7: a machine client with client_secret_basic, for the resource server.
      const basicGrant = await counted(() => postForm(tokenUrl(), { grant_type: 'client_credentials', scope: resourceServer.client.clientId }, { authorization: basic(machine.client.clientId, machine.secret) }));
      const machineToken = ok(basicGrant.result).access_token as string;
      counts.S7 = basicGrant.count;

      // S1a: introspection of a token with an audience: token_audiences has to be read.
      const audienced = await counted(() => postForm(`${server.url}/uas/oauth2/introspection`, { token: machineToken }, { authorization: basic(resourceServer.client.clientId, resourceServer.secret) }));
      assert.deepEqual(ok(audienced.result).token_audiences, [resourceServer.client.clientId]);
      counts.S1a = audienced.count;

      // S8: a machine client with private_key_jwt (RFC 7523 §2.2).
      const assertion = await keyAssertion(keyMachine.key, keyMachine.client.clientId, tokenUrl(), { now: Math.floor(clock.now() / 1000) });
      const keyGrant = await counted(() => postForm(tokenUrl(), { grant_type: 'client_credentials', scope: resourceServer.client.clientId, client_id: keyMachine.client.clientId, ...assertionFields(assertion) }));
      ok(keyGrant.result);
      counts.S8 = keyGrant.count;

      // S9: for a resource server that takes JWT access tokens (RFC 9068).
      const jwtGrant = await counted(() => postForm(tokenUrl(), { grant_type: 'client_credentials', scope: jwtResourceServer.client.clientId }, { authorization: basic(machine.client.clientId, machine.secret) }));
      assert.equal((ok(jwtGrant.result).access_token as string).split('.').length, 3);
      counts.S9 = jwtGrant.count;
      return counts as Record<Path, Count>;
    }

    test('each path runs the statements, transactions and round trips it is known to', async () => {
      await everyPath();
      const counts = await everyPath();
      // GATEHOUSE_PRINT_COUNTS=1: the counts as measured, to update EXPECTED after a deliberate change.
      if (process.env.GATEHOUSE_PRINT_COUNTS) console.log(db.name, JSON.stringify(counts, null, 1));
      assert.deepEqual(counts, EXPECTED[db.name]);
    });
  });
}
