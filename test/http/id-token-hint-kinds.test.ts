/**
 * Only an ID token is an id_token_hint (issue 22, item 3). The server signs three kinds of JWT with
 * the same keys — ID tokens, JWT access tokens (RFC 9068, `typ: at+jwt`) and signed UserInfo
 * responses (OIDC Core §5.3.2, `typ: JWT`, no `azp`) — and the last two reach resource servers,
 * which must not be able to end the user's session without the confirmation page, nor name the
 * user at the authorization endpoint. Real tokens of each kind, minted by the server over HTTP.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { decodeProtectedHeader } from 'jose';
import type { Client } from '../../src/domain/client.ts';
import type { User } from '../../src/domain/user.ts';
import { hashSecret } from '../../src/lib/hash.ts';
import { basic, postForm } from '../helpers/back-channel.ts';
import { DATABASES } from '../helpers/databases.ts';
import { authorizationUrl, browse, CookieJar, createTestClient, createTestUser, loginThroughForm, submit } from '../helpers/fixtures.ts';
import { assertCodeRedirect, assertErrorPage, assertErrorRedirect } from '../helpers/front-channel.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';

const PASSWORD = 'hint kinds pw 1';

interface SignedIn {
  jar: CookieJar;
  sessionIndex: string;
  idToken: string;
  accessToken: string;
  signedUserInfo: string;
}

for (const db of DATABASES) {
  describe(`id_token_hint is an ID token and nothing else on ${db.name}`, () => {
    let server: RunningServer;
    let client: Client;
    let secret: string;
    let user: User;

    before(async () => {
      // Every access token a JWT; the client asks for signed UserInfo responses.
      server = await startServer(db, { env: { GATEHOUSE_ACCESS_TOKEN_FORMAT: 'jwt' } });
      ({ client, clientSecret: secret } = await createTestClient(server.gatehouse.store, { userinfoSignedResponseAlg: 'RS256' }));
      user = await createTestUser(server.gatehouse.store, { password: PASSWORD });
    });
    after(async () => server.close());

    const query = (extra: Record<string, string> = {}) => ({ response_type: 'code', client_id: client.clientId, redirect_uri: client.redirectUris[0]!, scope: 'openid', state: 'st', ...extra });

    /** A login through the form, its code redeemed, and UserInfo asked with the access token. */
    async function signIn(): Promise<SignedIn> {
      const jar = new CookieJar();
      // The login form's answer is a 303 (a POST's result is fetched with GET).
      const code = assertCodeRedirect(await loginThroughForm({ baseUrl: server.url, jar }, query(), { username: user.username, password: PASSWORD }), { redirectUri: client.redirectUris[0]!, state: 'st', issuer: server.issuer, status: 303 });
      const tokens = await postForm(`${server.url}/uas/oauth2/token`, { grant_type: 'authorization_code', code, redirect_uri: client.redirectUris[0]! }, { authorization: basic(client.clientId, secret) });
      assert.equal(tokens.status, 200, JSON.stringify(tokens.body));
      const accessToken = tokens.body.access_token as string;
      assert.equal(decodeProtectedHeader(accessToken).typ, 'at+jwt');
      const userInfo = await fetch(`${server.url}/uas/oauth2/userinfo`, { headers: { authorization: `Bearer ${accessToken}` } });
      assert.equal(userInfo.status, 200);
      assert.equal(userInfo.headers.get('content-type'), 'application/jwt');
      const signedUserInfo = await userInfo.text();
      assert.equal(decodeProtectedHeader(signedUserInfo).typ, 'JWT');
      const session = await server.gatehouse.store.sessions.findLive(hashSecret(jar.cookies.get('gatehouse_session')!), Date.now());
      return { jar, sessionIndex: session!.sessionIndex, idToken: tokens.body.id_token as string, accessToken, signedUserInfo };
    }

    const assertSessionLives = async (signedIn: SignedIn) => {
      assert.ok(await server.gatehouse.store.sessions.findLiveByIndex(signedIn.sessionIndex, Date.now()), 'the session lives');
      assert.equal((await server.gatehouse.store.tokens.find(hashSecret(signedIn.accessToken)))?.revokedAt, undefined, 'its access token lives');
    };

    const REFUSED = {
      accessToken: 'The id_token_hint is not an ID token: its typ is at+jwt.',
      signedUserInfo: 'The id_token_hint is not an ID token: it names no authorized party (azp) among its audiences.',
    } as const;

    test('logout: a JWT access token or a signed UserInfo response as id_token_hint is the error page, like a bad signature, and ends nothing', async () => {
      const signedIn = await signIn();
      for (const kind of ['accessToken', 'signedUserInfo'] as const) {
        for (const params of [{ id_token_hint: signedIn[kind] }, { id_token_hint: signedIn[kind], post_logout_redirect_uri: 'https://rp.example.test/bye' }] as Record<string, string>[]) {
          const html = await assertErrorPage(await browse(`${server.url}/uas/oauth2/logout?${new URLSearchParams(params)}`, signedIn.jar), 'invalid_request');
          assert.ok(html.includes(REFUSED[kind]), `${kind}: the page says why`);
          await assertSessionLives(signedIn);
        }
      }
      // The same token as a form POST (a relying party's form, no CSRF token): the same page.
      await assertErrorPage(await submit(`${server.url}/uas/oauth2/logout`, { id_token_hint: signedIn.accessToken }, signedIn.jar), 'invalid_request');
      await assertSessionLives(signedIn);
    });

    test('logout: the ID token from the same response is accepted and ends the session at once', async () => {
      const signedIn = await signIn();
      const response = await browse(`${server.url}/uas/oauth2/logout?${new URLSearchParams({ id_token_hint: signedIn.idToken })}`, signedIn.jar);
      assert.equal(response.status, 200);
      assert.equal(await server.gatehouse.store.sessions.findLiveByIndex(signedIn.sessionIndex, Date.now()), undefined);
      assert.ok((await server.gatehouse.store.tokens.find(hashSecret(signedIn.accessToken)))?.revokedAt !== undefined);
    });

    test('authorization endpoint: a JWT access token or a signed UserInfo response as id_token_hint is invalid_request; the ID token answers silently', async () => {
      const signedIn = await signIn();
      for (const kind of ['accessToken', 'signedUserInfo'] as const) {
        for (const prompt of [{ prompt: 'none' }, {}] as Record<string, string>[]) {
          const params = assertErrorRedirect(await browse(authorizationUrl(server.url, query({ ...prompt, id_token_hint: signedIn[kind] })), signedIn.jar), { redirectUri: client.redirectUris[0]!, error: 'invalid_request', state: 'st', issuer: server.issuer });
          assert.equal(params.get('error_description'), REFUSED[kind]);
        }
      }
      assertCodeRedirect(await browse(authorizationUrl(server.url, query({ prompt: 'none', id_token_hint: signedIn.idToken })), signedIn.jar), { redirectUri: client.redirectUris[0]!, state: 'st', issuer: server.issuer });
    });
  });
}
