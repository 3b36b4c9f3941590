/**
 * Several gatehouse processes on one store, as behind a load balancer: three on one PostgreSQL
 * schema, two on one SQLite file. They share one issuer (the first one's URL), and a request may
 * land on any of them: a login started on one and finished on another, a code redeemed on a third,
 * a code raced from all of them at once, a key rotated from the CLI. Each process also runs its
 * janitor every second meanwhile, as several instances do in production.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify, type JSONWebKeySet } from 'jose';
import type { Client } from '../../src/domain/client.ts';
import type { User } from '../../src/domain/user.ts';
import { hashSecret } from '../../src/lib/hash.ts';
import { openSqlStore, type SqlStore } from '../../src/storage/sql/store.ts';
import { basic, mintCode, postForm } from '../helpers/back-channel.ts';
import { DATABASES, type TestDatabase } from '../helpers/databases.ts';
import { authorizationUrl, browse, CookieJar, createTestClient, createTestUser, formAction, formFields, pkce, RP_REDIRECT_URI, submit } from '../helpers/fixtures.ts';
import { freePort } from '../helpers/server.ts';
import { runCli, startGatehouse, type GatehouseProcess } from '../faults/processes.ts';

const PASSWORD = 'correct horse battery staple';
const RACERS = 50;
/**
 * Trials of the refresh-token race, each a fresh token used by RACERS requests at once. Two SQLite
 * processes overlap one's read of the token with the other's rotation only now and then: without
 * the atomic markRotated, 1 to 12 trials in 100 let two requests through (PostgreSQL: nearly every
 * trial). The deterministic guard of that statement on SQLite is the store contract
 * (test/contract/tokens.test.ts); this shows the rule holds across real processes.
 */
const REFRESH_TRIALS = { sqlite: 50, postgres: 10 };
/** GATEHOUSE_KEY_CACHE_TTL of the instances: how stale a key ring may be. */
const KEY_CACHE_SECONDS = 1;

for (const kind of DATABASES) {
  const count = kind.name === 'postgres' ? 3 : 2;

  describe(`${count} instances on one ${kind.name} store`, () => {
    let database: TestDatabase;
    let store: SqlStore;
    let instances: GatehouseProcess[] = [];
    let issuer: string;
    let client: Client;
    let secret: string;
    let user: User;
    /** Instance i, counting round the ring: roles spread over however many there are. */
    const on = (i: number) => instances[i % instances.length]!;
    const auth = () => ({ authorization: basic(client.clientId, secret) });
    const jwks = async (instance: GatehouseProcess) => (await (await fetch(`${instance.url}/uas/oauth2/metadata.jwks`)).json()) as JSONWebKeySet;
    const introspect = async (instance: GatehouseProcess, token: string) => (await postForm(`${instance.url}/uas/oauth2/introspection`, { token }, auth())).body;
    const redeem = (instance: GatehouseProcess, code: string, extra: Record<string, string> = {}) =>
      postForm(`${instance.url}/uas/oauth2/token`, { grant_type: 'authorization_code', code, redirect_uri: RP_REDIRECT_URI, ...extra }, auth());

    before(async () => {
      database = await kind.create();
      store = await openSqlStore(database.url);
      ({ client, clientSecret: secret } = await createTestClient(store, { refreshTokens: true }));
      user = await createTestUser(store, { username: `multi-${Date.now()}`, password: PASSWORD });
      const ports = await Promise.all(Array.from({ length: count }, () => freePort()));
      issuer = `http://127.0.0.1:${ports[0]}/uas`;
      // All at once on a fresh store: they race to create the first signing key.
      instances = await Promise.all(
        ports.map((port) =>
          startGatehouse({ databaseUrl: database.url, port, env: { GATEHOUSE_ISSUER: issuer, GATEHOUSE_KEY_CACHE_TTL: String(KEY_CACHE_SECONDS), GATEHOUSE_CLEANUP_INTERVAL: '1' } }),
        ),
      );
    });

    after(async () => {
      await Promise.all(instances.map((instance) => instance.kill()));
      await store?.close();
      await database?.drop();
    });

    test('the instances started together agree on one issuer, one key set and one signing key', async () => {
      const sets = await Promise.all(instances.map(jwks));
      for (const set of sets) assert.deepEqual(set, sets[0]);
      const kids = await Promise.all(instances.map(async (instance) => decodeProtectedHeader((await redeem(instance, (await mintCode(store, client, user)).code)).body.id_token as string).kid));
      assert.equal(new Set(kids).size, 1, `every instance signs with the same key: ${kids.join(', ')}`);
      for (const instance of instances) {
        const discovery = (await (await fetch(`${instance.url}/uas/.well-known/openid-configuration`)).json()) as { issuer: string };
        assert.equal(discovery.issuer, issuer);
      }
    });

    test('authorize on one, log in on another, redeem on a third, introspect on the first; single sign-on on any', async () => {
      const jar = new CookieJar();
      const { verifier, challenge } = pkce();
      const query = { client_id: client.clientId, redirect_uri: RP_REDIRECT_URI, response_type: 'code', scope: 'openid profile', state: 'st-multi', nonce: 'n-multi', code_challenge: challenge, code_challenge_method: 'S256' };
      const page = await browse(authorizationUrl(on(0).url, query), jar);
      assert.equal(page.status, 200);
      const html = await page.text();
      const fields = formFields(html).map(([name, value]): [string, string] => [name, name === 'username' ? user.username : name === 'password' ? PASSWORD : value]);
      // The form (and its CSRF cookie) came from the first instance; the second checks it.
      const login = await submit(new URL(formAction(html), on(1).url).toString(), fields, jar);
      assert.equal(login.status, 303, await login.text());
      const redirect = new URL(login.headers.get('location')!);
      assert.equal(redirect.searchParams.get('iss'), issuer);
      assert.equal(redirect.searchParams.get('state'), 'st-multi');

      const tokens = await redeem(on(2), redirect.searchParams.get('code')!, { code_verifier: verifier });
      assert.equal(tokens.status, 200, JSON.stringify(tokens.body));
      const { payload } = await jwtVerify(tokens.body.id_token as string, createLocalJWKSet(await jwks(on(0))), { issuer, audience: client.clientId });
      assert.equal(payload.sub, user.id);
      assert.equal(payload.nonce, 'n-multi');

      const active = await introspect(on(0), tokens.body.access_token as string);
      assert.equal(active.active, true);
      assert.equal(active.sub, user.id);
      const userinfo = await fetch(`${on(1).url}/uas/oauth2/userinfo`, { headers: { authorization: `Bearer ${tokens.body.access_token as string}` } });
      assert.equal(userinfo.status, 200);
      const refreshed = await postForm(`${on(count + 1).url}/uas/oauth2/token`, { grant_type: 'refresh_token', refresh_token: tokens.body.refresh_token as string }, auth());
      assert.equal(refreshed.status, 200, JSON.stringify(refreshed.body));

      // The session made on the second instance gives single sign-on on every instance.
      for (const instance of instances) {
        const sso = await browse(authorizationUrl(instance.url, { ...query, state: 'st-sso' }), jar);
        assert.equal(sso.status, 302, `no single sign-on on ${instance.url}`);
        assert.ok(new URL(sso.headers.get('location')!).searchParams.get('code'));
      }
    });

    test('a code redeemed on one instance and replayed on another: the replay is refused and revokes the first grant everywhere', async () => {
      const { code } = await mintCode(store, client, user);
      const first = await redeem(on(0), code);
      assert.equal(first.status, 200);
      assert.equal((await introspect(on(2), first.body.access_token as string)).active, true);
      const replay = await redeem(on(1), code);
      assert.equal(replay.status, 400);
      assert.equal(replay.body.error, 'invalid_grant');
      for (const instance of instances) {
        assert.equal((await introspect(instance, first.body.access_token as string)).active, false, `the access token is still active on ${instance.url}`);
        assert.equal((await introspect(instance, first.body.refresh_token as string)).active, false);
      }
    });

    test(`${RACERS} concurrent redemptions of one code spread over the instances: exactly one 200, and its tokens end revoked`, async () => {
      const { code } = await mintCode(store, client, user);
      // Connections open beforehand, so the racers really run side by side.
      await Promise.all(instances.flatMap((instance) => Array.from({ length: 4 }, () => fetch(`${instance.url}/health/live`).then((r) => r.text()))));
      const answers = await Promise.all(Array.from({ length: RACERS }, (_, i) => redeem(on(i), code)));
      const ok = answers.filter((a) => a.status === 200);
      const refused = answers.filter((a) => a.status === 400 && a.body.error === 'invalid_grant');
      assert.equal(ok.length + refused.length, RACERS, `only 200 and invalid_grant: ${answers.map((a) => a.status).join(',')}`);
      assert.equal(ok.length, 1, `${ok.length} redemptions succeeded`);
      // Exactly one redemption got past the atomic consume, on whichever instance: one grant in the store.
      const rows = await store.database.db.selectFrom('tokens').select(['family_id', 'revoked_at']).where('code_hash', '=', hashSecret(code)).execute();
      assert.equal(new Set(rows.map((r) => r.family_id)).size, 1, 'exactly one grant was issued from the code');
      assert.ok(rows.length >= 1);
      // The replays revoke it: after its 200 left, or (when they raced ahead) the winner itself does.
      assert.ok(
        rows.every((r) => r.revoked_at !== null),
        'every token issued from the replayed code is revoked',
      );
      assert.equal((await introspect(on(1), ok[0]!.body.access_token as string)).active, false, "the winner's access token is revoked");
    });

    test(`${REFRESH_TRIALS[kind.name]} trials of ${RACERS} concurrent uses of one rotating refresh token spread over the instances: exactly one 200, the rest invalid_grant`, async () => {
      const { client: rotating, clientSecret } = await createTestClient(store, { refreshTokens: true, rotateRefreshTokens: true });
      const headers = { authorization: basic(rotating.clientId, clientSecret) };
      const refresh = (instance: GatehouseProcess, refreshToken: string) => postForm(`${instance.url}/uas/oauth2/token`, { grant_type: 'refresh_token', refresh_token: refreshToken }, headers);
      const outcomes: number[] = [];
      for (let trial = 0; trial < REFRESH_TRIALS[kind.name]; trial++) {
        const { code } = await mintCode(store, rotating, user);
        const granted = await postForm(`${on(trial).url}/uas/oauth2/token`, { grant_type: 'authorization_code', code, redirect_uri: RP_REDIRECT_URI }, headers);
        assert.equal(granted.status, 200, JSON.stringify(granted.body));
        await Promise.all(instances.flatMap((instance) => Array.from({ length: 4 }, () => fetch(`${instance.url}/health/live`).then((r) => r.text()))));
        const answers = await Promise.all(Array.from({ length: RACERS }, (_, i) => refresh(on(i), granted.body.refresh_token as string)));
        for (const a of answers) assert.ok(a.status === 200 || (a.status === 400 && a.body.error === 'invalid_grant'), `${a.status} ${JSON.stringify(a.body)}`);
        outcomes.push(answers.filter((a) => a.status === 200).length);
      }
      // Across processes the read of the token and its rotation do overlap: only the atomic markRotated keeps it to one.
      assert.deepEqual(outcomes, Array.from({ length: REFRESH_TRIALS[kind.name] }, () => 1), `successes per trial: ${outcomes.join(', ')}`);
    });

    test('a key rotated from the CLI is published and used by every instance within the key cache period', async () => {
      const before = await jwks(on(0));
      const rotation = await runCli(['keys', 'rotate', '--json'], { GATEHOUSE_DATABASE_URL: database.url });
      assert.equal(rotation.code, 0, rotation.stderr);
      const { kid } = JSON.parse(rotation.stdout) as { kid: string };
      const rotatedAt = Date.now();

      await Promise.all(
        instances.map(async (instance) => {
          for (;;) {
            const set = await jwks(instance);
            if (set.keys.some((k) => k.kid === kid)) {
              for (const old of before.keys) assert.ok(set.keys.some((k) => k.kid === old.kid), 'the previous key stays published');
              return;
            }
            assert.ok(Date.now() - rotatedAt < KEY_CACHE_SECONDS * 1000 + 3000, `${instance.url} does not publish the new key`);
            await new Promise((resolve) => setTimeout(resolve, 100));
          }
        }),
      );
      // Publish first, sign later: the new key signs two key-cache periods after the rotation.
      const signsFrom = rotatedAt + 2 * KEY_CACHE_SECONDS * 1000;
      for (const instance of instances) {
        let answer = await redeem(instance, (await mintCode(store, client, user)).code);
        while (Date.now() < signsFrom + 1000 && answer.status === 200 && decodeProtectedHeader(answer.body.id_token as string).kid !== kid) {
          await new Promise((resolve) => setTimeout(resolve, 200));
          answer = await redeem(instance, (await mintCode(store, client, user)).code);
        }
        assert.equal(answer.status, 200);
        const idToken = answer.body.id_token as string;
        assert.equal(decodeProtectedHeader(idToken).kid, kid, `${instance.url} still signs with the old key`);
        await jwtVerify(idToken, createLocalJWKSet(await jwks(on(instances.indexOf(instance) + 1))), { issuer, audience: client.clientId });
      }
    });

    test('all instances stay up throughout, their janitors sweeping side by side without a failure', () => {
      for (const instance of instances) {
        assert.equal(instance.child.exitCode, null, instance.output());
        assert.doesNotMatch(instance.output(), /cleanup failed|"level":(50|60)/, 'nothing was logged at error level');
      }
    });
  });
}
