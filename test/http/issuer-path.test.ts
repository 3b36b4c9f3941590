/**
 * The issuer's path is where the OpenID Provider lives (OIDC Discovery §4: metadata at issuer +
 * /.well-known/openid-configuration): with GATEHOUSE_ISSUER=https://sso.example.com/auth every
 * route, the login form's action, its stylesheet and discovery are under /auth, and nothing is
 * under /uas; the identity API and health checks stay at the root. A bare-host issuer serves the
 * same routes at the root.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Client } from '../../src/domain/client.ts';
import { basic, postForm } from '../helpers/back-channel.ts';
import { DATABASES } from '../helpers/databases.ts';
import { browse, CookieJar, createTestClient, createTestUser, formAction, formFields, pkce, redirectParams, submit } from '../helpers/fixtures.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';

const PASSWORD = 'issuer path pw';
const ENDPOINTS = {
  authorization_endpoint: '/oauth2/authorization',
  token_endpoint: '/oauth2/token',
  userinfo_endpoint: '/oauth2/userinfo',
  introspection_endpoint: '/oauth2/introspection',
  revocation_endpoint: '/oauth2/revocation',
  end_session_endpoint: '/oauth2/logout',
  jwks_uri: '/oauth2/metadata.jwks',
};

for (const db of DATABASES) {
  describe(`an issuer at https://sso.example.com/auth on ${db.name}`, () => {
    const issuer = 'https://sso.example.com/auth';
    let server: RunningServer;
    let client: Client;
    let clientSecret: string;
    let username: string;

    before(async () => {
      server = await startServer(db, { env: { GATEHOUSE_ISSUER: issuer } });
      ({ client, clientSecret } = await createTestClient(server.gatehouse.store));
      username = `path-${Date.now()}`;
      await createTestUser(server.gatehouse.store, { username, password: PASSWORD });
    });
    after(async () => server.close());

    test('discovery is at /auth/.well-known/…, names endpoints under /auth, and /uas serves nothing', async () => {
      for (const name of ['openid-configuration', 'oauth-authorization-server']) {
        const response = await fetch(`${server.url}/auth/.well-known/${name}`);
        assert.equal(response.status, 200, name);
        const metadata = (await response.json()) as Record<string, unknown>;
        assert.equal(metadata.issuer, issuer);
        assert.deepEqual(
          Object.fromEntries(Object.keys(ENDPOINTS).map((key) => [key, metadata[key]])),
          Object.fromEntries(Object.entries(ENDPOINTS).map(([key, path]) => [key, `${issuer}${path}`])),
        );
      }
      for (const path of ['/uas/.well-known/openid-configuration', '/uas/oauth2/metadata.jwks', '/uas/assets/login.css', '/uas/oauth2/authorization', '/uas/status', '/.well-known/openid-configuration']) {
        assert.equal((await fetch(`${server.url}${path}`)).status, 404, path);
      }
      assert.equal((await fetch(`${server.url}/auth/oauth2/metadata.jwks`)).status, 200);
    });

    test('a login runs entirely under /auth: page, stylesheet, form action, code, token, userinfo, status, logout', async () => {
      const jar = new CookieJar();
      const { verifier, challenge } = pkce();
      const query = new URLSearchParams({ client_id: client.clientId, redirect_uri: client.redirectUris[0]!, response_type: 'code', scope: 'openid', state: 's1', code_challenge: challenge, code_challenge_method: 'S256' });
      const page = await browse(`${server.url}/auth/oauth2/authorization?${query}`, jar);
      assert.equal(page.status, 200);
      const html = await page.text();
      assert.deepEqual([...html.matchAll(/<link rel="stylesheet" href="([^"]*)">/g)].map((m) => m[1]), ['/auth/assets/login.css']);
      const css = await fetch(`${server.url}/auth/assets/login.css`);
      assert.equal(css.status, 200);
      assert.match(css.headers.get('content-type') ?? '', /^text\/css/);
      assert.equal(formAction(html), '/auth/oauth2/authorization/login');

      const fields = formFields(html).map(([name, value]): [string, string] => [name, name === 'username' ? username : name === 'password' ? PASSWORD : value]);
      const done = await submit(new URL(formAction(html), server.url).toString(), fields, jar);
      assert.equal(done.status, 303);
      const params = redirectParams(done);
      assert.equal(params.get('iss'), issuer);
      // The session cookie is Path=/: the __Host- prefix requires it (RFC 6265bis §4.1.3.2), and it
      // covers the issuer's path whatever it is.
      assert.match(done.headers.getSetCookie().find((c) => c.startsWith('__Host-gatehouse_session=')) ?? '', /; Path=\/;/);

      const token = await postForm(`${server.url}/auth/oauth2/token`, { grant_type: 'authorization_code', code: params.get('code')!, redirect_uri: client.redirectUris[0]!, code_verifier: verifier }, { authorization: basic(client.clientId, clientSecret) });
      assert.equal(token.status, 200);
      const userinfo = await fetch(`${server.url}/auth/oauth2/userinfo`, { headers: { authorization: `Bearer ${token.body.access_token as string}` } });
      assert.equal(userinfo.status, 200);
      const introspection = await postForm(`${server.url}/auth/oauth2/introspection`, { token: token.body.access_token as string }, { authorization: basic(client.clientId, clientSecret) });
      assert.equal(introspection.body.active, true);
      assert.equal(introspection.body.iss, issuer);

      const sessionIndex = JSON.parse(Buffer.from((token.body.id_token as string).split('.')[1]!, 'base64url').toString()).session_index as string;
      const status = await fetch(`${server.url}/auth/status?${new URLSearchParams({ sessionIndex })}`);
      assert.equal(status.status, 200);

      const confirm = await browse(`${server.url}/auth/oauth2/logout`, jar);
      assert.equal(confirm.status, 200);
      const confirmHtml = await confirm.text();
      assert.equal(formAction(confirmHtml), '/auth/oauth2/logout');
      const signedOut = await submit(new URL(formAction(confirmHtml), server.url).toString(), formFields(confirmHtml), jar);
      assert.equal(signedOut.status, 200);
      assert.match(await signedOut.text(), /href="\/auth\/assets\/login\.css"/);
      assert.equal(jar.cookies.has('__Host-gatehouse_session'), false);
    });

    test('the error page links the stylesheet under /auth', async () => {
      const response = await fetch(`${server.url}/auth/oauth2/authorization?client_id=nobody&response_type=code`);
      assert.equal(response.status, 400);
      assert.deepEqual([...(await response.text()).matchAll(/<link rel="stylesheet" href="([^"]*)">/g)].map((m) => m[1]), ['/auth/assets/login.css']);
    });

    test('the identity API and the health checks stay at the root', async () => {
      assert.equal((await fetch(`${server.url}/health/live`)).status, 200);
      assert.equal((await fetch(`${server.url}/customerid-rest/openapi.json`)).status, 200);
      assert.equal((await fetch(`${server.url}/auth/customerid-rest/openapi.json`)).status, 404);
    });
  });

  describe(`an issuer without a path on ${db.name}`, () => {
    let server: RunningServer;
    before(async () => {
      server = await startServer(db, { env: { GATEHOUSE_ISSUER: 'https://sso.example.com', GATEHOUSE_SECURE_COOKIES: 'false' } });
    });
    after(async () => server.close());

    test('serves discovery and the endpoints at the root', async () => {
      const metadata = (await (await fetch(`${server.url}/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
      assert.equal(metadata.issuer, 'https://sso.example.com');
      assert.equal(metadata.token_endpoint, 'https://sso.example.com/oauth2/token');
      assert.equal((await fetch(`${server.url}/oauth2/metadata.jwks`)).status, 200);
      assert.equal((await fetch(`${server.url}/assets/login.css`)).status, 200);
      // The token endpoint exists (400 for a missing grant, not 404).
      assert.equal((await postForm(`${server.url}/oauth2/token`, {})).status, 400);
      assert.equal((await fetch(`${server.url}/uas/.well-known/openid-configuration`)).status, 404);
    });
  });
}
