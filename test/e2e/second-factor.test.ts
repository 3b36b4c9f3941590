/**
 * amr tells the truth (issue 24 item 4), end to end with openid-client as the relying party: a
 * login with the password and a TOTP code (computed here by `otpauth` from the secret, at the
 * server's injected clock) gives `["pwd", "otp", "mfa"]` in the ID token, userinfo and
 * introspection, and in the SSO session that every later code (and /uas/status) comes from; a
 * refresh keeps the original values; a password-only login says `["pwd"]`. A recovery code works
 * once; the device flow's tokens say the same. The login form, the device page and the second
 * factor's page are driven over HTTP as a browser posts them.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import * as oidc from 'openid-client';
import type { User } from '../../src/domain/user.ts';
import { hashSecret } from '../../src/lib/hash.ts';
import { ManualClock } from '../../src/lib/clock.ts';
import { cryptoRandom } from '../../src/lib/random.ts';
import { registerClient } from '../../src/oauth/client-registration.ts';
import { postForm } from '../helpers/back-channel.ts';
import { DATABASES } from '../helpers/databases.ts';
import { enrolTotp, giveRecoveryCodes, totpAt } from '../helpers/factors.ts';
import { browse, CookieJar, createTestUser, formAction, formFields, loginThroughForm, submit } from '../helpers/fixtures.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';

const PASSWORD = 'two factors are better than one';
const REDIRECT = 'https://web.example.com/callback';
const MFA = ['pwd', 'otp', 'mfa'];

for (const db of DATABASES) {
  describe(`amr with a second factor, openid-client as relying party, on ${db.name}`, () => {
    const clock = new ManualClock(Date.now());
    let server: RunningServer;
    let config: oidc.Configuration;
    let clientId: string;

    before(async () => {
      server = await startServer(db, { clock });
      const { store } = server.gatehouse;
      const web = await registerClient({ clients: store.clients, transaction: store.transaction, clock, random: cryptoRandom }, { client_name: 'Web app', redirect_uris: [REDIRECT], grant_types: ['authorization_code', 'refresh_token'], refresh_tokens: true });
      clientId = web.client.clientId;
      // allowInsecureRequests: the test issuer is http on loopback.
      config = await oidc.discovery(new URL(server.issuer), clientId, web.clientSecret, oidc.ClientSecretBasic(web.clientSecret!), { execute: [oidc.allowInsecureRequests] });
    });
    after(async () => server.close());

    /**
     * The authorization request in a "browser" (`jar`): the login form when the page asks, then the
     * second factor's page when it asks, with `code()`; the tokens, or the answer that was not a redirect.
     */
    async function authorize(jar: CookieJar, user: User, code?: () => string) {
      const verifier = oidc.randomPKCECodeVerifier();
      const state = oidc.randomState();
      const nonce = oidc.randomNonce();
      const url = oidc.buildAuthorizationUrl(config, { redirect_uri: REDIRECT, scope: 'openid', code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256', state, nonce });
      let answer = await browse(url.href, jar);
      if (answer.status === 200) answer = await loginThroughForm({ baseUrl: server.url, jar }, Object.fromEntries(url.searchParams), { username: user.username, password: PASSWORD });
      if (answer.status === 200 && code !== undefined) {
        const html = await answer.text();
        assert.match(html, /autocomplete="one-time-code"/, 'the second factor\'s page');
        answer = await submit(new URL(formAction(html), server.url).toString(), { ...Object.fromEntries(formFields(html)), code: code() }, jar);
      }
      const location = answer.headers.get('location');
      if (answer.status !== 303 && answer.status !== 302) return { answer, tokens: undefined };
      const tokens = await oidc.authorizationCodeGrant(config, new URL(location!), { pkceCodeVerifier: verifier, expectedState: state, expectedNonce: nonce, idTokenExpected: true });
      return { answer, tokens };
    }

    /** The amr (and auth_time) introspection and userinfo give for an access token. */
    async function amrOf(accessToken: string, sub: string) {
      const introspected = await oidc.tokenIntrospection(config, accessToken);
      const userInfo = await oidc.fetchUserInfo(config, accessToken, sub);
      return { introspection: introspected.amr, userinfo: userInfo.amr, authTime: [introspected.auth_time, userInfo.auth_time] };
    }

    test('password + TOTP: amr ["pwd","otp","mfa"] in the ID token, userinfo, introspection and the SSO session; a refresh and a later single sign-on keep it', async () => {
      const user = await createTestUser(server.gatehouse.store, { password: PASSWORD });
      const secret = await enrolTotp(server.gatehouse.store, user.id, clock.now());
      const jar = new CookieJar();
      const { tokens } = await authorize(jar, user, () => totpAt(secret, clock.now()));
      assert.ok(tokens);
      const claims = tokens.claims()!;
      assert.deepEqual(claims.amr, MFA);
      const authTime = claims.auth_time;
      assert.deepEqual(await amrOf(tokens.access_token, user.id), { introspection: MFA, userinfo: MFA, authTime: [authTime, authTime] });

      // The SSO session holds it: /uas/status finds it, and a later code (single sign-on) carries it.
      const session = await server.gatehouse.store.sessions.findLive(hashSecret(jar.cookies.get('gatehouse_session')!), clock.now());
      assert.deepEqual(session?.amr, MFA);
      const status = await browse(`${server.url}/uas/status?${new URLSearchParams({ entityID: clientId, sessionIndex: claims.session_index as string })}`);
      assert.equal(((await status.json()) as { valid: boolean }).valid, true);

      clock.advance(60_000);
      const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token!);
      assert.deepEqual(await amrOf(refreshed.access_token, user.id), { introspection: MFA, userinfo: MFA, authTime: [authTime, authTime] }, 'a refresh keeps the original authentication');

      const again = await authorize(jar, user);
      assert.equal(again.answer.status, 302, 'single sign-on: no form');
      assert.deepEqual([again.tokens?.claims()?.amr, again.tokens?.claims()?.auth_time], [MFA, authTime]);
    });

    test('password only: amr ["pwd"] everywhere', async () => {
      const user = await createTestUser(server.gatehouse.store, { password: PASSWORD });
      const { tokens } = await authorize(new CookieJar(), user);
      assert.ok(tokens);
      assert.deepEqual(tokens.claims()!.amr, ['pwd']);
      const { introspection, userinfo } = await amrOf(tokens.access_token, user.id);
      assert.deepEqual([introspection, userinfo], [['pwd'], ['pwd']]);
    });

    test('a recovery code signs in once (amr ["pwd","otp","mfa"]); the same code the second time is refused and issues nothing', async () => {
      const user = await createTestUser(server.gatehouse.store, { password: PASSWORD });
      await enrolTotp(server.gatehouse.store, user.id, clock.now());
      const [code] = await giveRecoveryCodes(server.gatehouse.store, user.id, clock.now());
      const first = await authorize(new CookieJar(), user, () => code!);
      assert.deepEqual(first.tokens?.claims()?.amr, MFA);

      const second = await authorize(new CookieJar(), user, () => code!);
      assert.equal(second.answer.status, 401);
      assert.equal(second.tokens, undefined);
      assert.match(await second.answer.text(), /aria-invalid="true"/);
    });

    test('the device flow: password + TOTP on the device page gives the device an ID token with amr ["pwd","otp","mfa"]', async () => {
      const user = await createTestUser(server.gatehouse.store, { password: PASSWORD });
      const secret = await enrolTotp(server.gatehouse.store, user.id, clock.now());
      const tv = await registerClient({ clients: server.gatehouse.store.clients, transaction: server.gatehouse.store.transaction, clock, random: cryptoRandom }, { client_name: 'TV', token_endpoint_auth_method: 'none', grant_types: ['urn:ietf:params:oauth:grant-type:device_code'] });
      const issued = await postForm(`${server.url}/uas/oauth2/device_authorization`, { client_id: tv.client.clientId, scope: 'openid' });
      assert.equal(issued.status, 200);
      const jar = new CookieJar();
      const page = `${server.url}/uas/oauth2/device`;
      /** Posts the form on `html` with these fields filled in; the next page. */
      const fill = async (html: string, fields: Record<string, string>) => (await submit(new URL(formAction(html), server.url).toString(), { ...Object.fromEntries(formFields(html)), ...fields }, jar)).text();
      const login = await fill(await (await browse(page, jar)).text(), { user_code: issued.body.user_code as string });
      const factor = await fill(login, { username: user.username, password: PASSWORD });
      assert.match(factor, /autocomplete="one-time-code"/);
      const confirm = await fill(factor, { code: totpAt(secret, clock.now()) });
      assert.match(confirm, /name="decision"/);
      await fill(confirm, { decision: 'approve' });
      const tokens = await postForm(`${server.url}/uas/oauth2/token`, { grant_type: 'urn:ietf:params:oauth:grant-type:device_code', device_code: issued.body.device_code as string, client_id: tv.client.clientId });
      assert.equal(tokens.status, 200, JSON.stringify(tokens.body));
      const idToken = JSON.parse(Buffer.from((tokens.body.id_token as string).split('.')[1]!, 'base64url').toString('utf8')) as { amr: string[] };
      assert.deepEqual(idToken.amr, MFA);
    });
  });
}
