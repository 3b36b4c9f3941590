/**
 * The resource owner password credentials grant (RFC 6749 §4.3; docs/decisions.md PW1–PW8): opt-in
 * for confidential clients, the login form's throttle, lockout and audit, the login form's
 * tokens, identity-API tokens as Ubisecure's CustomerID scripts get them, and the end of those
 * tokens when the user's access ends. The happy path uses openid-client's generic grant request as
 * the client; errors are plain HTTP. Addresses come through X-Forwarded-For from the test's
 * 127.0.0.1, which the server trusts as a proxy, so each test has its own.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { hash as argon2Hash, type Algorithm } from '@node-rs/argon2';
import * as oidc from 'openid-client';
import type { Client } from '../../src/domain/client.ts';
import type { User } from '../../src/domain/user.ts';
import { addMember, createGroup } from '../../src/identity/groups.ts';
import { verifyPassword } from '../../src/identity/passwords.ts';
import { setPassword, setStatus } from '../../src/identity/users.ts';
import { ManualClock, toNumericDate } from '../../src/lib/clock.ts';
import { cryptoRandom } from '../../src/lib/random.ts';
import { registerClient } from '../../src/oauth/client-registration.ts';
import { fingerprint } from '../../src/observability/audit.ts';
import { AuditCapture } from '../helpers/audit.ts';
import { enrolTotp, giveRecoveryCodes } from '../helpers/factors.ts';
import { addUser, basic, postForm } from '../helpers/back-channel.ts';
import { DATABASES } from '../helpers/databases.ts';
import { authorizationUrl, browse, CookieJar, createTestClient, createTestUser, formAction, formFields, submit } from '../helpers/fixtures.ts';
import { assertLoginPage } from '../helpers/front-channel.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';
import { call } from './identity-api/helpers.ts';
import { AS_OPERATOR } from '../helpers/authority.ts';

const PASSWORD = 'correct horse battery staple';
const ACR = 'urn:example:loa:password';
const API_GROUP = 'Identity API Users';
const GENERIC = { error: 'invalid_grant', error_description: 'The username or password is incorrect.' };

for (const db of DATABASES) {
  describe(`password grant on ${db.name}`, () => {
    let server: RunningServer;
    const clock = new ManualClock(Date.now());
    const audit = new AuditCapture();
    let apiClientId: string;
    /** A confidential client registered for the password grant (and refresh tokens), allowed the API audience. */
    let client: Client;
    let secret: string;
    let next = 1;
    const address = () => `203.0.113.${next++}`;

    before(async () => {
      apiClientId = `identity-api-${randomUUID()}`;
      server = await startServer(db, { clock, audit, env: { GATEHOUSE_TRUSTED_PROXIES: '127.0.0.1', GATEHOUSE_ACR: ACR, GATEHOUSE_API_CLIENT_ID: apiClientId } });
      const store = server.gatehouse.store;
      await createTestClient(store, { clientId: apiClientId, name: 'CustomerID API', grantTypes: [], redirectUris: [], metadata: { resource_server: true } });
      await createGroup({ ...store, clock, random: cryptoRandom }, { name: API_GROUP }, AS_OPERATOR);
      const registered = await registerClient({ ...store, clock, random: cryptoRandom }, { client_name: 'Ubisecure script', grant_types: ['password', 'refresh_token'], aud: [apiClientId] });
      client = registered.client;
      secret = registered.clientSecret!;
    });
    after(async () => server.close());

    const token = (form: Record<string, string>, ip: string, credentials: { id: string; secret: string } = { id: client.clientId, secret }) =>
      postForm(`${server.url}/uas/oauth2/token`, { grant_type: 'password', ...form }, { authorization: basic(credentials.id, credentials.secret), 'x-forwarded-for': ip });
    const newUser = (overrides: Partial<User> = {}) => createTestUser(server.gatehouse.store, { password: PASSWORD, ...overrides });
    const userDeps = () => ({ ...server.gatehouse.store, clock });

    /** A login through the form as a browser behind a proxy that says it is `ip`. */
    async function loginThroughFormFrom(web: Client, ip: string, credentials: { username: string; password: string }): Promise<Response> {
      const jar = new CookieJar();
      const headers = { 'x-forwarded-for': ip };
      const query = { client_id: web.clientId, redirect_uri: web.redirectUris[0]!, response_type: 'code', scope: 'openid', state: 's' };
      const html = await assertLoginPage(await browse(authorizationUrl(server.url, query), jar, headers));
      const fields = formFields(html).map(([name, value]): [string, string] => [name, name === 'username' ? credentials.username : name === 'password' ? credentials.password : value]);
      return submit(new URL(formAction(html), server.url).toString(), fields, jar, headers);
    }

    test('openid-client: tokens as the login form gives them: amr pwd, the configured acr, auth_time now, a session_index that names no SSO session, refresh token, userinfo (PW-01)', async () => {
      const user = await newUser({ email: 'pw@example.com' });
      const config = await oidc.discovery(new URL(server.issuer), client.clientId, secret, oidc.ClientSecretBasic(secret), { execute: [oidc.allowInsecureRequests] });
      audit.clear();
      const tokens = await oidc.genericGrantRequest(config, 'password', { username: user.username, password: PASSWORD, scope: 'openid email' });
      assert.equal(tokens.token_type.toLowerCase(), 'bearer');
      assert.equal(tokens.scope, 'openid email');
      assert.ok(tokens.refresh_token, 'the client is configured for refresh tokens');
      const claims = tokens.claims()!;
      assert.equal(claims.sub, user.id);
      assert.equal(claims.aud, client.clientId);
      assert.equal(claims.azp, client.clientId);
      assert.deepEqual(claims.amr, ['pwd']);
      assert.equal(claims.acr, ACR);
      assert.equal(claims.auth_time, toNumericDate(clock.now()));
      assert.match(claims.session_index as string, /^_[0-9a-f]{40}$/);
      assert.equal(claims.nonce, undefined);

      // No SSO session was created: the session check knows none by this session_index (decisions PW8).
      const status = await fetch(`${server.url}/uas/status?${new URLSearchParams({ entityID: client.clientId, sessionIndex: claims.session_index as string })}`);
      assert.deepEqual(await status.json(), { valid: false, issueInstant: clock.now() });
      assert.equal(await server.gatehouse.store.sessions.endAllOfUser(user.id).then((ended) => ended.length), 0, 'the user has no SSO session');

      const userInfo = await oidc.fetchUserInfo(config, tokens.access_token, user.id);
      assert.equal(userInfo.email, 'pw@example.com');
      const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token!);
      assert.equal((await oidc.fetchUserInfo(config, refreshed.access_token, user.id)).sub, user.id);

      const succeeded = audit.of('login.succeeded').map(({ event, userId, username, clientId, session, via }) => ({ event, userId, username, clientId, session, via }));
      assert.deepEqual(succeeded, [{ event: 'login.succeeded', userId: user.id, username: user.username, clientId: client.clientId, session: fingerprint(claims.session_index as string), via: 'password_grant' }]);
      const issued = audit.of('token.issued');
      assert.equal(issued.length, 1);
      assert.equal(issued[0]!.grantType, 'password');
      assert.equal(issued[0]!.userId, user.id);
      assert.equal(issued[0]!.idToken, true);
      assert.equal(typeof issued[0]!.refreshToken, 'string');
    });

    test('no openid: no ID token; a client without refresh tokens gets none (PW-02)', async () => {
      const user = await newUser();
      const withoutOpenid = await token({ username: user.username, password: PASSWORD, scope: 'email' }, address());
      assert.equal(withoutOpenid.status, 200, JSON.stringify(withoutOpenid.body));
      assert.deepEqual(Object.keys(withoutOpenid.body).sort(), ['access_token', 'expires_in', 'refresh_token', 'scope', 'token_type']);
      const plain = await registerClient({ ...server.gatehouse.store, clock, random: cryptoRandom }, { client_name: 'no refresh', grant_types: ['password'] });
      const noRefresh = await token({ username: user.username, password: PASSWORD, scope: 'openid' }, address(), { id: plain.client.clientId, secret: plain.clientSecret! });
      assert.equal(noRefresh.status, 200, JSON.stringify(noRefresh.body));
      assert.deepEqual(Object.keys(noRefresh.body).sort(), ['access_token', 'expires_in', 'id_token', 'scope', 'token_type']);
    });

    test('unknown user, wrong password, disabled, locked and pending users: one and the same invalid_grant (PW-03)', async () => {
      const enabled = await newUser();
      const disabled = await newUser({ status: 'disabled' });
      const locked = await newUser({ status: 'locked' });
      const pending = await newUser({ status: 'pending' });
      audit.clear();
      const answers = [
        await token({ username: `nobody-${randomUUID()}`, password: PASSWORD }, address()),
        await token({ username: enabled.username, password: 'wrong password' }, address()),
        await token({ username: disabled.username, password: PASSWORD }, address()),
        await token({ username: locked.username, password: PASSWORD }, address()),
        await token({ username: pending.username, password: PASSWORD }, address()),
      ];
      for (const answer of answers) {
        assert.equal(answer.status, 400);
        assert.deepEqual(answer.body, GENERIC);
        assert.equal(answer.headers.get('cache-control'), 'no-store');
      }
      assert.deepEqual(audit.of('login.failed').map((e) => [e.reason, e.userId, e.via, e.clientId]), [
        ['unknown_user', undefined, 'password_grant', client.clientId],
        ['wrong_password', enabled.id, 'password_grant', client.clientId],
        ['not_enabled', disabled.id, 'password_grant', client.clientId],
        ['not_enabled', locked.id, 'password_grant', client.clientId],
        ['not_enabled', pending.id, 'password_grant', client.clientId],
      ]);
      assert.deepEqual(audit.of('token.issued'), []);
    });

    test('a user with a second factor: the grant cannot ask for it, so the right password gets invalid_grant saying a second factor is required, and no token; a wrong password gets the generic answer (issue 24)', async () => {
      const withTotp = await newUser();
      await enrolTotp(server.gatehouse.store, withTotp.id);
      const withCodesOnly = await newUser();
      await giveRecoveryCodes(server.gatehouse.store, withCodesOnly.id);
      audit.clear();
      for (const user of [withTotp, withCodesOnly]) {
        const refused = await token({ username: user.username, password: PASSWORD, scope: 'openid' }, address());
        assert.equal(refused.status, 400);
        assert.equal(refused.body.error, 'invalid_grant');
        assert.match(refused.body.error_description as string, /second factor/);
        assert.equal(refused.body.access_token, undefined);
      }
      // Only whoever knows the password learns that the user has a second factor.
      assert.deepEqual((await token({ username: withTotp.username, password: 'wrong password' }, address())).body, GENERIC);
      assert.deepEqual(audit.of('login.second_factor_required').map((e) => [e.userId, e.via, e.clientId]), [
        [withTotp.id, 'password_grant', client.clientId],
        [withCodesOnly.id, 'password_grant', client.clientId],
      ]);
      assert.deepEqual([audit.of('token.issued'), audit.of('login.succeeded')], [[], []]);
    });

    test('malformed requests: invalid_request; a client not registered for the grant, or public: unauthorized_client (PW-04)', async () => {
      const user = await newUser();
      const ip = address();
      assert.deepEqual((await token({ password: PASSWORD }, ip)).body, { error: 'invalid_request', error_description: 'The username parameter is missing.' });
      assert.deepEqual((await token({ username: user.username }, ip)).body, { error: 'invalid_request', error_description: 'The password parameter is missing.' });
      const repeated = await fetch(`${server.url}/uas/oauth2/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(client.clientId, secret) },
        body: `grant_type=password&username=${user.username}&password=a&password=b`,
      });
      assert.equal(repeated.status, 400);
      assert.deepEqual(await repeated.json(), { error: 'invalid_request', error_description: 'The password parameter is repeated.' });
      assert.deepEqual((await token({ username: user.username, password: PASSWORD, scope: 'openid "x' }, ip)).body, { error: 'invalid_scope', error_description: 'The scope parameter is malformed.' });
      // Hostile usernames are no account: the generic failure, never a 5xx (the server fails close() on any).
      for (const username of ['x'.repeat(5000), `${user.username}\n`, `${user.username}\u0000`, '%00', "' OR 1=1 --"]) {
        const answer = await token({ username, password: PASSWORD }, address());
        assert.equal(answer.status, 400, username.slice(0, 20));
        assert.deepEqual(answer.body, GENERIC);
      }

      const { client: codeOnly, clientSecret } = await createTestClient(server.gatehouse.store, { grantTypes: ['authorization_code', 'refresh_token'] });
      const notRegistered = await token({ username: user.username, password: PASSWORD }, ip, { id: codeOnly.clientId, secret: clientSecret });
      assert.equal(notRegistered.status, 400);
      assert.deepEqual(notRegistered.body, { error: 'unauthorized_client', error_description: 'This client may not use the password grant.' });

      // A public client's row holding the grant (registration refuses it; an old or hand-made row may not).
      const { client: publicClient } = await createTestClient(server.gatehouse.store, { tokenEndpointAuthMethod: 'none', grantTypes: ['authorization_code', 'password'] });
      audit.clear();
      const asPublic = await postForm(`${server.url}/uas/oauth2/token`, { grant_type: 'password', client_id: publicClient.clientId, username: user.username, password: PASSWORD }, { 'x-forwarded-for': ip });
      assert.equal(asPublic.status, 400);
      assert.deepEqual(asPublic.body, { error: 'unauthorized_client', error_description: 'The password grant is for confidential clients only.' });
      assert.deepEqual(audit.all().filter((e) => e.event.startsWith('login.')), [], 'no password was checked');
    });

    test('5 wrong passwords: the 5th is 429 slow_down with Retry-After; the right one waits too, from that address only; it works once the wait is over (PW-05)', async () => {
      const user = await newUser();
      const ip = address();
      audit.clear();
      for (let i = 1; i <= 4; i += 1) assert.deepEqual((await token({ username: user.username, password: `wrong-${i}` }, ip)).body, GENERIC);
      const fifth = await token({ username: user.username, password: 'wrong-5' }, ip);
      assert.equal(fifth.status, 429);
      assert.equal(fifth.headers.get('retry-after'), '1');
      assert.deepEqual(fifth.body, { error: 'slow_down', error_description: 'Too many failed sign-in attempts; retry in 1 s.' });
      const lockouts = audit.of('lockout');
      assert.deepEqual(lockouts.map((e) => [e.kind, e.by, e.failures, e.userId, e.clientId]), [['login', 'username', 5, user.id, client.clientId]]);

      const right = await token({ username: user.username, password: PASSWORD }, ip);
      assert.equal(right.status, 429);
      assert.equal(right.body.error, 'slow_down');
      const throttled = audit.of('login.throttled');
      assert.deepEqual(throttled.map((e) => [e.by, e.retryAfter, e.clientId, e.via]), [['username', 1, client.clientId, 'password_grant']]);
      assert.equal(audit.of('login.failed').length, 5, 'the refused attempt was not verified');

      // Another address has not failed on this user: the owner is not locked out (decisions H3).
      assert.equal((await token({ username: user.username, password: PASSWORD }, address())).status, 200);
      clock.advance(1000);
      assert.equal((await token({ username: user.username, password: PASSWORD }, ip)).status, 200);
    });

    test('the grant and the login form count against the same username: 3 failures on the form and 2 on the grant reach the wait, and then the form waits too (PW-06)', async () => {
      const user = await newUser();
      const ip = address();
      const { client: web } = await createTestClient(server.gatehouse.store);
      for (let i = 1; i <= 3; i += 1) await assertLoginPage(await loginThroughFormFrom(web, ip, { username: user.username, password: `form-${i}` }), 401);
      assert.deepEqual((await token({ username: user.username, password: 'grant-4' }, ip)).body, GENERIC);
      const fifth = await token({ username: user.username, password: 'grant-5' }, ip);
      assert.equal(fifth.status, 429);
      assert.equal(fifth.body.error, 'slow_down');
      const form = await loginThroughFormFrom(web, ip, { username: user.username, password: PASSWORD });
      await assertLoginPage(form, 429);
      assert.equal(form.headers.get('retry-after'), '1');
    });

    test('scope openid <API client_id>: a token the identity API accepts, as CustomerID scripts use it; a client without the audience is refused before any password check (PW-07)', async () => {
      const member = await newUser();
      await addMember(server.gatehouse.store, API_GROUP, member.id, AS_OPERATOR);
      const answer = await token({ username: member.username, password: PASSWORD, scope: `openid ${apiClientId}` }, address());
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      assert.equal(answer.body.scope, `openid ${apiClientId}`);
      const read = await call(server, 'GET', `/2.0/users/${member.id}`, { authorization: `Bearer ${answer.body.access_token as string}` });
      assert.equal(read.status, 200, read.text);
      assert.match(read.text, new RegExp(member.id));

      const noAud = await registerClient({ ...server.gatehouse.store, clock, random: cryptoRandom }, { client_name: 'no aud', grant_types: ['password'] });
      audit.clear();
      const refused = await token({ username: member.username, password: PASSWORD, scope: `openid ${apiClientId}` }, address(), { id: noAud.client.clientId, secret: noAud.clientSecret! });
      assert.equal(refused.status, 400);
      assert.deepEqual(refused.body, { error: 'invalid_scope', error_description: `The scope value ${apiClientId} is a client_id this client may not request as an audience (client metadata aud).` });
      assert.deepEqual(audit.all().filter((e) => e.event.startsWith('login.') || e.event === 'token.issued'), []);
      // Its ordinary token (no audience) does not open the API.
      const ordinary = await token({ username: member.username, password: PASSWORD, scope: 'openid' }, address(), { id: noAud.client.clientId, secret: noAud.clientSecret! });
      assert.equal(ordinary.status, 200);
      const denied = await call(server, 'GET', `/2.0/users/${member.id}`, { authorization: `Bearer ${ordinary.body.access_token as string}` });
      assert.equal(denied.status, 401, denied.text);
    });

    for (const [change, act] of [
      ['disabling the user', (user: User) => setStatus(userDeps(), user.id, 'disabled', AS_OPERATOR)],
      ['a new password', (user: User) => setPassword(userDeps(), user.id, 'a brand new password', AS_OPERATOR)],
    ] as const) {
      test(`${change} revokes the password grant's access and refresh tokens (PW-08)`, async () => {
        const user = await newUser();
        const issued = await token({ username: user.username, password: PASSWORD, scope: 'openid' }, address());
        assert.equal(issued.status, 200);
        const bearer = { authorization: `Bearer ${issued.body.access_token as string}` };
        assert.equal((await fetch(`${server.url}/uas/oauth2/userinfo`, { headers: bearer })).status, 200);
        await act(user);
        assert.equal((await fetch(`${server.url}/uas/oauth2/userinfo`, { headers: bearer })).status, 401);
        const introspected = await postForm(`${server.url}/uas/oauth2/introspection`, { token: issued.body.access_token as string }, { authorization: basic(client.clientId, secret) });
        assert.deepEqual(introspected.body, { active: false });
        const refreshed = await postForm(`${server.url}/uas/oauth2/token`, { grant_type: 'refresh_token', refresh_token: issued.body.refresh_token as string }, { authorization: basic(client.clientId, secret) });
        assert.deepEqual(refreshed.body, { error: 'invalid_grant', error_description: 'The refresh token has been revoked.' });
      });
    }

    test('a password changed while the old one was being checked: no token (PW-09)', async () => {
      const user = await newUser();
      const users = server.gatehouse.store.users;
      const original = users.getCredentials.bind(users);
      // The check reads the old hash; the change commits before the grant stores its tokens.
      let changed = false;
      users.getCredentials = async (name: string) => {
        const found = await original(name);
        if (!changed) {
          changed = true;
          await setPassword(userDeps(), user.id, 'changed meanwhile 123', AS_OPERATOR);
        }
        return found;
      };
      try {
        audit.clear();
        const answer = await token({ username: user.username, password: PASSWORD }, address());
        assert.equal(answer.status, 400);
        assert.deepEqual(answer.body, GENERIC);
        assert.deepEqual(audit.of('token.issued'), []);
      } finally {
        users.getCredentials = original;
      }
    });

    test('a hash upgraded at sign-in does not overwrite a password set meanwhile: the reset stays, and no token (PW-09)', async () => {
      const store = server.gatehouse.store;
      const user = await addUser(store);
      // A hash made with older argon2 parameters: a successful check upgrades it (verify-credentials.ts).
      await store.users.setPasswordHash(user.id, await argon2Hash(PASSWORD, { algorithm: 2 as Algorithm, memoryCost: 4096, timeCost: 3, parallelism: 1 }), clock.now());
      const users = store.users;
      const original = users.getCredentials.bind(users);
      let changed = false;
      users.getCredentials = async (name: string) => {
        const found = await original(name);
        if (!changed) {
          changed = true;
          await setPassword(userDeps(), user.id, 'reset by an administrator', AS_OPERATOR);
        }
        return found;
      };
      try {
        const answer = await token({ username: user.username, password: PASSWORD }, address());
        assert.deepEqual(answer.body, GENERIC);
      } finally {
        users.getCredentials = original;
      }
      const stored = (await store.users.getCredentials(user.username))!.passwordHash;
      assert.equal(await verifyPassword(stored, 'reset by an administrator'), true, 'the reset password is kept');
      assert.equal(await verifyPassword(stored, PASSWORD), false);
    });
  });
}
