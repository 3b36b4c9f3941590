/**
 * Conformance: `amr` (RFC 8176) and `acr` (OIDC Core §2) are EXACT, not merely present, in the ID
 * token, UserInfo and introspection (RFC 7662 §2.2), for each way of signing in with a password
 * that exists today — the password alone, then a TOTP code, a recovery code or a passkey; a passkey
 * alone, device-bound or synced — and after a
 * refresh (the new access token keeps the original authentication's values in introspection and
 * UserInfo; gatehouse sends no ID token on refresh, which OIDC Core §12.2 allows), with GATEHOUSE_ACR set and unset (issue 24, item 4; decisions
 * SA25, SA104). The sign-in goes through the real login page over HTTP, as a browser would.
 *
 * The expected values are one table (EXPECTED), of what is implemented: levels of authentication
 * (acr per method, step-up) are another suite's, and would change the acr column there.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Client } from '../../src/domain/client.ts';
import type { User } from '../../src/domain/user.ts';
import { basic, postForm } from '../helpers/back-channel.ts';
import { DATABASES } from '../helpers/databases.ts';
import { enrolTotp, giveRecoveryCodes, totpAt } from '../helpers/factors.ts';
import { authorizationUrl, browse, createTestClient, createTestUser, formAction, formFields, submit } from '../helpers/fixtures.ts';
import { assertCodeRedirect } from '../helpers/front-channel.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';
import { passkeyForm, SoftAuthenticator } from '../helpers/webauthn.ts';
import { assertTokenResponse, clockAtNow, codeRequest, CookieJar, redeem, submitLogin, userInfo, verifyIdToken } from './helpers.ts';

const PASSWORD = 'conformance amr and acr';
const ACR = 'urn:gatehouse:ac:password';

type Path = 'password' | 'password+totp' | 'password+recovery code' | 'passkey' | 'synced passkey' | 'password+passkey';

/** What each path's tokens say, whatever the endpoint: RFC 8176 values, `mfa` once a second factor completed the sign-in (SA4, SA25). */
const EXPECTED: Record<Path, { amr: string[] }> = {
  password: { amr: ['pwd'] },
  'password+totp': { amr: ['pwd', 'otp', 'mfa'] },
  'password+recovery code': { amr: ['pwd', 'otp', 'mfa'] },
  // A passkey always verifies the user (SA62): `hwk` for a device-bound credential, `swk` for a
  // synced (backup-eligible) one, then `mfa` (SA63).
  passkey: { amr: ['hwk', 'mfa'] },
  'synced passkey': { amr: ['swk', 'mfa'] },
  'password+passkey': { amr: ['pwd', 'hwk', 'mfa'] },
};

/** The amr and acr members of a claim set, exactly: `acr` is absent (not null, not "") when none is configured. */
function authentication(claims: Record<string, unknown>): { amr: unknown; acr?: unknown } {
  return 'acr' in claims ? { amr: claims.amr, acr: claims.acr } : { amr: claims.amr };
}

for (const db of DATABASES) {
  for (const acr of [undefined, ACR]) {
    describe(`conformance: exact amr and acr on ${db.name}, GATEHOUSE_ACR ${acr === undefined ? 'unset' : 'set'}`, () => {
      const clock = clockAtNow();
      let server: RunningServer;
      let rp: { client: Client; clientSecret: string };
      let resourceServer: Record<string, string>;
      before(async () => {
        server = await startServer(db, { clock, ...(acr === undefined ? {} : { env: { GATEHOUSE_ACR: acr } }) });
        rp = await createTestClient(server.gatehouse.store, { refreshTokens: true });
        const rs = await createTestClient(server.gatehouse.store, { grantTypes: [] });
        resourceServer = { authorization: basic(rs.client.clientId, rs.clientSecret) };
      });
      after(async () => server.close());

      const expected = (path: Path) => ({ ...EXPECTED[path], ...(acr === undefined ? {} : { acr }) });
      const introspect = async (token: string) => {
        const answer = await postForm(`${server.url}/uas/oauth2/introspection`, { token }, resourceServer);
        assert.equal(answer.status, 200);
        assert.equal(answer.body.active, true);
        return answer.body;
      };

      /** A new browser signs `user` in by the login page: the password, then `code` when given; the code the client gets. */
      async function signIn(user: User, code?: () => string): Promise<string> {
        const jar = new CookieJar();
        const request = codeRequest(rp.client);
        const afterPassword = await submitLogin(server, jar, await browse(authorizationUrl(server.url, request), jar), { username: user.username, password: PASSWORD });
        let answer = afterPassword;
        if (code !== undefined) {
          assert.equal(afterPassword.status, 200, 'the second factor is asked for');
          const page = await afterPassword.text();
          answer = await submit(new URL(formAction(page), server.url).toString(), { ...Object.fromEntries(formFields(page)), code: code() }, jar);
        }
        return assertCodeRedirect(answer, { redirectUri: rp.client.redirectUris[0]!, state: request.state, issuer: server.issuer, status: 303 });
      }

      const origin = () => new URL(server.issuer).origin;
      /** A browser's POST of a page's form, with the Origin a browser sends. */
      const post = (path: string, form: Record<string, string>, jar: CookieJar) => submit(new URL(path, server.url).toString(), form, jar, { origin: server.url });
      /** The page's passkey form answered by `authenticator` (options first, then the signed response). */
      async function answerPasskeyForm(html: string, jar: CookieJar, authenticator: SoftAuthenticator, ceremony: 'register' | 'assert' = 'assert', extra: Record<string, string> = {}) {
        const form = passkeyForm(html);
        const options = await post(form.options, form.fields, jar);
        assert.equal(options.status, 200);
        const asked = (await options.json()) as never;
        const response = ceremony === 'register' ? authenticator.register(asked) : authenticator.assert(asked);
        return post(form.action, { ...form.fields, ...extra, response: JSON.stringify(response) }, jar);
      }

      /** A user with a passkey of a new software authenticator, added on the account security page after the password. */
      async function withPasskey(synced = false): Promise<{ user: User; authenticator: SoftAuthenticator }> {
        const user = await createTestUser(server.gatehouse.store, { password: PASSWORD });
        const authenticator = new SoftAuthenticator({ origin: origin(), synced });
        const jar = new CookieJar();
        const html = await (await browse(`${server.url}/uas/account/security`, jar)).text();
        assert.equal((await post(formAction(html), { ...Object.fromEntries(formFields(html)), username: user.username, password: PASSWORD }, jar)).status, 303);
        const page = await (await browse(`${server.url}/uas/account/security`, jar)).text();
        assert.equal((await answerPasskeyForm(page, jar, authenticator, 'register', { name: 'laptop' })).status, 200);
        return { user, authenticator };
      }

      /** A new browser signs in with the passkey alone, from the login page's "Sign in with a passkey"; the code the client gets. */
      async function signInWithPasskey(authenticator: SoftAuthenticator): Promise<string> {
        const jar = new CookieJar();
        const request = codeRequest(rp.client);
        const html = await (await browse(authorizationUrl(server.url, request), jar)).text();
        return assertCodeRedirect(await answerPasskeyForm(html, jar, authenticator), { redirectUri: rp.client.redirectUris[0]!, state: request.state, issuer: server.issuer, status: 303 });
      }

      /** Every place the authentication shows, for tokens fresh from a code and again after a refresh. */
      async function assertExact(path: Path, code: string): Promise<void> {
        const want = expected(path);
        const tokens = assertTokenResponse(await redeem(server, rp.client, rp.clientSecret, code));
        assert.deepEqual(authentication((await verifyIdToken(server, tokens.id_token as string)).payload), want, `${path}: ID token`);
        const info = await userInfo(server, tokens.access_token as string);
        assert.equal(info.status, 200);
        assert.deepEqual(authentication(info.body), want, `${path}: UserInfo`);
        assert.deepEqual(authentication(await introspect(tokens.access_token as string)), want, `${path}: introspection`);

        clock.advance(60_000);
        const refreshed = await postForm(`${server.url}/uas/oauth2/token`, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token as string }, { authorization: basic(rp.client.clientId, rp.clientSecret) });
        const again = assertTokenResponse(refreshed);
        assert.notEqual(again.access_token, tokens.access_token);
        // gatehouse sends no ID token on refresh (OIDC Core §12.2 allows either; RT-08 in
        // refresh.test.ts): the refreshed access token is where the original authentication must show.
        assert.equal(again.id_token, undefined);
        assert.deepEqual(authentication(await introspect(again.access_token as string)), want, `${path}: introspection of the refreshed access token`);
        assert.deepEqual(authentication((await userInfo(server, again.access_token as string)).body), want, `${path}: UserInfo with the refreshed access token`);
      }

      test('password only: amr exactly ["pwd"] and acr exactly as configured in the ID token, UserInfo and introspection, also after a refresh (AM-01)', async () => {
        const user = await createTestUser(server.gatehouse.store, { password: PASSWORD });
        await assertExact('password', await signIn(user));
      });

      test('password, then a TOTP code: amr exactly ["pwd", "otp", "mfa"] and acr exactly as configured everywhere, also after a refresh (AM-02)', async () => {
        const user = await createTestUser(server.gatehouse.store, { password: PASSWORD });
        const secret = await enrolTotp(server.gatehouse.store, user.id, clock.now());
        await assertExact('password+totp', await signIn(user, () => totpAt(secret, clock.now())));
      });

      test('password, then a recovery code: amr exactly ["pwd", "otp", "mfa"] and acr exactly as configured everywhere, also after a refresh (AM-03)', async () => {
        const user = await createTestUser(server.gatehouse.store, { password: PASSWORD });
        await enrolTotp(server.gatehouse.store, user.id, clock.now());
        const [recoveryCode] = await giveRecoveryCodes(server.gatehouse.store, user.id, clock.now());
        await assertExact('password+recovery code', await signIn(user, () => recoveryCode!));
      });

      test('a passkey alone (username-less): amr exactly ["hwk", "mfa"], a synced one ["swk", "mfa"], acr exactly as configured everywhere, also after a refresh (AM-04)', async () => {
        const { authenticator } = await withPasskey();
        await assertExact('passkey', await signInWithPasskey(authenticator));
        const synced = await withPasskey(true);
        await assertExact('synced passkey', await signInWithPasskey(synced.authenticator));
      });

      test('password, then a passkey as the second step: amr exactly ["pwd", "hwk", "mfa"] and acr exactly as configured everywhere, also after a refresh (AM-05)', async () => {
        const { user, authenticator } = await withPasskey();
        const jar = new CookieJar();
        const request = codeRequest(rp.client);
        const afterPassword = await submitLogin(server, jar, await browse(authorizationUrl(server.url, request), jar), { username: user.username, password: PASSWORD });
        assert.equal(afterPassword.status, 200, 'the second factor is asked for');
        const code = assertCodeRedirect(await answerPasskeyForm(await afterPassword.text(), jar, authenticator), { redirectUri: rp.client.redirectUris[0]!, state: request.state, issuer: server.issuer, status: 303 });
        await assertExact('password+passkey', code);
      });
    });
  }
}
