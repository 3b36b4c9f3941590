/**
 * Conformance: the authorization endpoint as the OpenID Foundation Basic OP plan drives it
 * (research/conformance.md §1 modules, §2.3-2.7 AZ-*), end to end over HTTP: the login form,
 * the code, the token endpoint and UserInfo. Time moves on a ManualClock; nothing sleeps.
 * docs/conformance.md maps every checklist row to its test.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Client } from '../../src/domain/client.ts';
import type { User } from '../../src/domain/user.ts';
import { DATABASES } from '../helpers/databases.ts';
import { authorizationUrl, browse, createTestClient, createTestUser } from '../helpers/fixtures.ts';
import { assertErrorPage, assertErrorRedirect, assertLoginPage } from '../helpers/front-channel.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';
import { assertTokenResponse, authorize, clockAtNow, codeRequest, CookieJar, expectedAtHash, redeem, seconds, userInfo, verifyIdToken, type Credentials } from './helpers.ts';

const PASSWORD = 'conformance authorization 1';

for (const db of DATABASES) {
  describe(`conformance: authorization endpoint, Basic OP modules, on ${db.name}`, () => {
    const clock = clockAtNow();
    let server: RunningServer;
    let client: Client;
    let secret: string;
    let user: User;
    let credentials: Credentials;

    /** Redeems with client_secret_basic and returns the verified ID token claims and the token response. */
    const tokensFor = async (code: string, rp = { client, secret }) => {
      const body = assertTokenResponse(await redeem(server, rp.client, rp.secret, code));
      const { payload } = await verifyIdToken(server, body.id_token as string);
      return { body, idToken: payload };
    };

    before(async () => {
      server = await startServer(db, { clock });
      ({ client, clientSecret: secret } = await createTestClient(server.gatehouse.store, { refreshTokens: true }));
      user = await createTestUser(server.gatehouse.store, { password: PASSWORD, givenName: 'Ada', familyName: 'Lovelace', email: 'ada@example.test' });
      credentials = { username: user.username, password: PASSWORD };
    });
    after(async () => server.close());

    test('oidcc-server: login, a 256-bit code with state and iss only, tokens with client_secret_basic, UserInfo with the same sub (module 1; AZ-06, AZ-12, AC-01, UI-04)', async () => {
      const { code } = await authorize(server, new CookieJar(), codeRequest(client, { nonce: 'n-0S6_WzA2Mj' }), credentials, { expectLogin: true });
      const { body, idToken } = await tokensFor(code);
      assert.equal(idToken.iss, server.issuer);
      assert.equal(idToken.aud, client.clientId);
      assert.equal(idToken.sub, user.id);
      assert.equal(idToken.nonce, 'n-0S6_WzA2Mj');
      assert.equal(idToken.at_hash, expectedAtHash(body.access_token as string));
      assert.equal(idToken.iat, seconds(clock));
      assert.equal(idToken.auth_time, seconds(clock));
      const info = await userInfo(server, body.access_token as string);
      assert.equal(info.status, 200);
      assert.equal(info.body.sub, idToken.sub);
    });

    test('oidcc-alternate-happy-flow: parameters in another order and scope values reversed give the same grant (module 14; AZ-03)', async () => {
      const params: [string, string][] = [
        ['state', 'alternate'],
        ['scope', 'email profile openid'],
        ['redirect_uri', client.redirectUris[0]!],
        ['nonce', 'alt-nonce'],
        ['client_id', client.clientId],
        ['response_type', 'code'],
      ];
      const { code } = await authorize(server, new CookieJar(), params, credentials, { expectLogin: true });
      const { body, idToken } = await tokensFor(code);
      assert.deepEqual((body.scope as string).split(' ').sort(), ['email', 'openid', 'profile']);
      assert.equal(idToken.sub, user.id);
      assert.equal(idToken.nonce, 'alt-nonce');
      const info = await userInfo(server, body.access_token as string);
      assert.equal(info.body.email, 'ada@example.test');
      assert.equal(info.body.name, 'Ada Lovelace');
    });

    test('oidcc-ensure-request-with-unknown-parameter-succeeds: extra=foobar is ignored and the flow completes (module 22; AZ-02)', async () => {
      const { code } = await authorize(server, new CookieJar(), codeRequest(client, { extra: 'foobar' }), credentials, { expectLogin: true });
      const { idToken } = await tokensFor(code);
      assert.equal(idToken.sub, user.id);
      assert.equal(idToken.extra, undefined);
    });

    test('optional parameters never cause an error: display, login_hint, ui_locales, claims_locales, acr_values, claims, registration each complete the flow (modules 15, 16, 24-27, 35; AZ-09, AZ-37, AZ-39)', async () => {
      const variants: Record<string, string>[] = [
        { display: 'page' },
        { display: 'popup' },
        { display: 'touch' },
        { display: 'wap' },
        { login_hint: user.username },
        { ui_locales: 'se fi' },
        { claims_locales: 'se' },
        { acr_values: '1 2' },
        { claims: JSON.stringify({ userinfo: { name: { essential: true } } }) },
        { registration: JSON.stringify({ client_name: 'ignored' }) },
      ];
      for (const extra of variants) {
        const { code } = await authorize(server, new CookieJar(), codeRequest(client, extra), credentials, { expectLogin: true });
        const { idToken } = await tokensFor(code);
        assert.equal(idToken.sub, user.id, JSON.stringify(extra));
        // No acr is configured: acr_values is honoured by sending none rather than a wrong one (IDT-09).
        assert.equal(idToken.acr, undefined);
      }
    });

    test('oidcc-prompt-none-not-logged-in: login_required with a 128-character state of -._~ returned intact, no code (module 18; AZ-29, AZ-07, AZ-27)', async () => {
      const state = 'aZ09-._~'.repeat(16);
      assert.equal(state.length, 128);
      const response = await browse(authorizationUrl(server.url, codeRequest(client, { prompt: 'none', state })));
      const params = assertErrorRedirect(response, { redirectUri: client.redirectUris[0]!, error: 'login_required', state, issuer: server.issuer });
      assert.ok(response.headers.get('location')!.includes(`state=${state}`), 'byte for byte, not even percent-encoded');
      assert.equal(params.get('code'), null);
    });

    test('oidcc-prompt-none-logged-in: a silent code whose ID token has the same sub and auth_time (module 19; AZ-30, IDT-06, IDT-08)', async () => {
      const jar = new CookieJar();
      const first = await tokensFor((await authorize(server, jar, codeRequest(client), credentials, { expectLogin: true })).code);
      clock.advance(60_000);
      const second = await tokensFor((await authorize(server, jar, codeRequest(client, { prompt: 'none' }), credentials, { expectLogin: false })).code);
      assert.equal(second.idToken.sub, first.idToken.sub);
      assert.equal(second.idToken.auth_time, first.idToken.auth_time);
      assert.equal(second.idToken.iat, (first.idToken.iat as number) + 60);
    });

    test('oidcc-prompt-login: the login page again, and the second ID token has a later auth_time (module 17; AZ-31)', async () => {
      const jar = new CookieJar();
      const first = await tokensFor((await authorize(server, jar, codeRequest(client), credentials, { expectLogin: true })).code);
      clock.advance(5_000);
      const second = await tokensFor((await authorize(server, jar, codeRequest(client, { prompt: 'login' }), credentials, { expectLogin: true })).code);
      assert.equal(second.idToken.sub, first.idToken.sub);
      assert.equal(second.idToken.auth_time, (first.idToken.auth_time as number) + 5);
    });

    test('oidcc-max-age-1: two seconds later max_age=1 shows the login page; the new ID token has auth_time, later and now (module 20; AZ-33, IDT-08)', async () => {
      const jar = new CookieJar();
      const first = await tokensFor((await authorize(server, jar, codeRequest(client), credentials, { expectLogin: true })).code);
      clock.advance(2_000);
      const second = await tokensFor((await authorize(server, jar, codeRequest(client, { max_age: '1' }), credentials, { expectLogin: true })).code);
      assert.equal(typeof second.idToken.auth_time, 'number');
      assert.ok((second.idToken.auth_time as number) > (first.idToken.auth_time as number));
      assert.equal(second.idToken.auth_time, seconds(clock));
      assert.equal(second.idToken.sub, first.idToken.sub);
    });

    test('oidcc-max-age-10000: max_age=15000 then max_age=10000 need one login; both ID tokens carry the same auth_time and sub (module 21; AZ-34, IDT-08)', async () => {
      const jar = new CookieJar();
      const first = await tokensFor((await authorize(server, jar, codeRequest(client, { max_age: '15000' }), credentials, { expectLogin: true })).code);
      clock.advance(30_000);
      const second = await tokensFor((await authorize(server, jar, codeRequest(client, { max_age: '10000' }), credentials, { expectLogin: false })).code);
      assert.equal(typeof first.idToken.auth_time, 'number');
      assert.equal(second.idToken.auth_time, first.idToken.auth_time);
      assert.equal(second.idToken.sub, first.idToken.sub);
    });

    test('oidcc-id-token-hint: prompt=none with the first ID token as id_token_hint answers silently, same sub and auth_time (module 23; AZ-36)', async () => {
      const jar = new CookieJar();
      const first = await tokensFor((await authorize(server, jar, codeRequest(client), credentials, { expectLogin: true })).code);
      clock.advance(10_000);
      const hint = first.body.id_token as string;
      const second = await tokensFor((await authorize(server, jar, codeRequest(client, { prompt: 'none', id_token_hint: hint }), credentials, { expectLogin: false })).code);
      assert.equal(second.idToken.sub, first.idToken.sub);
      assert.equal(second.idToken.auth_time, first.idToken.auth_time);
    });

    test('oidcc-ensure-post-request-succeeds: the authorization request as a form POST completes the flow (module 31; AZ-01)', async () => {
      const { code } = await authorize(server, new CookieJar(), codeRequest(client, { nonce: 'posted' }), credentials, { post: true, expectLogin: true });
      const { idToken } = await tokensFor(code);
      assert.equal(idToken.nonce, 'posted');
      // And with a session, a POST answers silently like a GET.
      const jar = new CookieJar();
      await authorize(server, jar, codeRequest(client), credentials, { expectLogin: true });
      await authorize(server, jar, codeRequest(client, { prompt: 'none' }), credentials, { post: true, expectLogin: false });
    });

    test('oidcc-ensure-request-object-with-redirect-uri: a request object with an unregistered redirect_uri outside it gets the error page, never a redirect (module 36; AZ-19, AZ-38)', async () => {
      const inner = Buffer.from(JSON.stringify({ alg: 'none' })).toString('base64url') + '.' + Buffer.from(JSON.stringify({ redirect_uri: client.redirectUris[0], state: 's' })).toString('base64url') + '.';
      await assertErrorPage(await browse(authorizationUrl(server.url, codeRequest(client, { redirect_uri: 'https://attacker.example.test/cb', request: inner }))), 'invalid_redirect_uri');
      await assertErrorPage(await browse(authorizationUrl(server.url, codeRequest(client, { redirect_uri: 'https://attacker.example.test/cb', request_uri: 'https://rp.example.test/r.jwt' }))), 'invalid_redirect_uri');
      // With the registered redirect_uri outside, the refusal is redirected (request_not_supported).
      assertErrorRedirect(await browse(authorizationUrl(server.url, codeRequest(client, { request: inner }))), { redirectUri: client.redirectUris[0]!, error: 'request_not_supported', state: 'conformance-state', issuer: server.issuer });
    });

    test('a registered redirect_uri with a query keeps it in the success redirect, and that URI redeems the code (AZ-10)', async () => {
      const uri = 'https://rp.example.test/cb?tenant=a&x=1';
      const rp = await createTestClient(server.gatehouse.store, { redirectUris: [uri] });
      const { code, redirect } = await authorize(server, new CookieJar(), codeRequest(rp.client), credentials, { expectLogin: true });
      assert.equal(redirect.searchParams.get('tenant'), 'a');
      assert.equal(redirect.searchParams.get('x'), '1');
      assert.ok(redirect.href.startsWith(`${uri}&code=`), redirect.href);
      const { idToken } = await tokensFor(code, { client: rp.client, secret: rp.clientSecret });
      assert.equal(idToken.aud, rp.client.clientId);
    });

    test('a registered redirect_uri with a query: a changed, reordered, extended or removed query is the error page (AZ-16)', async () => {
      const uri = 'https://rp.example.test/cb?tenant=a&x=1';
      const rp = await createTestClient(server.gatehouse.store, { redirectUris: [uri] });
      for (const variant of ['https://rp.example.test/cb?tenant=b&x=1', 'https://rp.example.test/cb?x=1&tenant=a', 'https://rp.example.test/cb?tenant=a&x=1&y=2', 'https://rp.example.test/cb', 'https://rp.example.test/cb?tenant=a']) {
        await assertErrorPage(await browse(authorizationUrl(server.url, codeRequest(rp.client, { redirect_uri: variant }))), 'invalid_redirect_uri');
      }
      await assertLoginPage(await browse(authorizationUrl(server.url, codeRequest(rp.client))));
    });

    test('offline_access is dropped without an error: not in the granted scope, and no refresh token for a client without them (AZ-40, RT-11)', async () => {
      const rp = await createTestClient(server.gatehouse.store, { refreshTokens: false });
      const { code } = await authorize(server, new CookieJar(), codeRequest(rp.client, { scope: 'openid offline_access', prompt: 'consent' }), credentials, { expectLogin: true });
      const body = assertTokenResponse(await redeem(server, rp.client, rp.clientSecret, code));
      assert.equal(body.scope, 'openid');
      assert.equal(body.refresh_token, undefined);
      assert.equal(typeof body.id_token, 'string');
    });

    test('a failure after the redirect_uri is verified is redirected as server_error or temporarily_unavailable, not a 5xx page (AZ-26)', async () => {
      const sessions = server.gatehouse.store.sessions as unknown as Record<string, unknown>;
      const jar = new CookieJar();
      jar.cookies.set('gatehouse_session', 'A'.repeat(43));
      try {
        sessions.findUsable = async () => {
          throw Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
        };
        const unavailable = await browse(authorizationUrl(server.url, codeRequest(client, { state: 'down' })), jar);
        assertErrorRedirect(unavailable, { redirectUri: client.redirectUris[0]!, error: 'temporarily_unavailable', state: 'down', issuer: server.issuer });
        sessions.findUsable = async () => {
          throw new Error('an unexpected bug');
        };
        const broken = await browse(authorizationUrl(server.url, codeRequest(client, { state: 'bug' })), jar);
        const params = assertErrorRedirect(broken, { redirectUri: client.redirectUris[0]!, error: 'server_error', state: 'bug', issuer: server.issuer });
        assert.doesNotMatch(params.get('error_description') ?? '', /unexpected bug/, 'internals are not shown');
      } finally {
        delete sessions.findUsable;
      }
      await assertLoginPage(await browse(authorizationUrl(server.url, codeRequest(client)), jar));
    });
  });
}
