/**
 * redirect_uri matching (RFC 6749 §3.1.2.3, RFC 9700 §2.1, §4.1.3, RFC 8252 §7.3): exact string
 * comparison; for the http loopback URIs of a native client only the port may differ, a web
 * client (the console's included) compares them exactly too. Every bypass trick from the
 * incidents of research/peers.md §5 gets the error page and no redirect.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Client } from '../../src/domain/client.ts';
import { DATABASES } from '../helpers/databases.ts';
import { CONSOLE_CLIENT_ID } from '../../src/manage/management-clients.ts';
import { authorizationUrl, browse, CookieJar, createTestClient, createTestUser, loginThroughForm, pkce } from '../helpers/fixtures.ts';
import { assertCodeRedirect, assertErrorPage, assertLoginPage } from '../helpers/front-channel.ts';
import { ensureManagementSetup } from '../helpers/manage.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';

const WEB = 'https://rp.example.test/cb';
const REGISTERED = [WEB, 'http://127.0.0.1:8080/cb', 'http://localhost/native/cb', 'http://[::1]/cb'];

const REJECTED: [string, string][] = [
  ['trailing slash', 'https://rp.example.test/cb/'],
  ['host case', 'https://RP.example.test/cb'],
  ['path case', 'https://rp.example.test/CB'],
  ['scheme case', 'HTTPS://rp.example.test/cb'],
  ['added query', 'https://rp.example.test/cb?x=1'],
  ['empty query', 'https://rp.example.test/cb?'],
  ['fragment', 'https://rp.example.test/cb#frag'],
  ['empty fragment', 'https://rp.example.test/cb#'],
  ['..;/ traversal', 'https://rp.example.test/cb/..;/evil'],
  ['..;/ before the path', 'https://rp.example.test/x/..;/cb'],
  ['%2e%2e traversal', 'https://rp.example.test/cb/%2e%2e/evil'],
  ['%2e%2e resolving to the path', 'https://rp.example.test/x/%2e%2e/cb'],
  ['double-encoded slash', 'https://rp.example.test/cb%252f..%252fevil'],
  ['encoded slash', 'https://rp.example.test/cb%2F'],
  ['userinfo before the host', 'https://rp.example.test@evil.example/cb'],
  ['userinfo a@', 'https://a@rp.example.test/cb'],
  ['backslash userinfo', 'https://rp.example.test\\@evil.example/cb'],
  ['longer host', 'https://rp.example.test.evil.example/cb'],
  ['explicit default port', 'https://rp.example.test:443/cb'],
  ['http instead of https', 'http://rp.example.test/cb'],
  ['extra path segment', 'https://rp.example.test/cb/extra'],
  ['prefix only', 'https://rp.example.test/c'],
  ['trailing space', 'https://rp.example.test/cb '],
  ['leading space', ' https://rp.example.test/cb'],
  ['javascript:', 'javascript:alert(1)//https://rp.example.test/cb'],
  ['JavaScript: mixed case', 'JavaScript:alert(document.domain)'],
  ['data:', 'data:text/html,<script>alert(1)</script>'],
  ['loopback: other path', 'http://127.0.0.1:51234/other'],
  ['loopback: trailing slash', 'http://127.0.0.1:51234/cb/'],
  ['loopback: added query', 'http://127.0.0.1:51234/cb?x=1'],
  ['loopback: other loopback name', 'http://localhost:8080/cb'],
  ['loopback: other address', 'http://127.0.0.2:8080/cb'],
  ['loopback: https', 'https://127.0.0.1:8080/cb'],
  ['loopback: localhost.evil.test', 'http://localhost.evil.test/native/cb'],
  ['loopback: localhost.evil.test with port', 'http://localhost.evil.test:8080/native/cb'],
  ['loopback: userinfo host', 'http://127.0.0.1@evil.example:8080/cb'],
  ['loopback: userinfo after port', 'http://127.0.0.1:8080@evil.example/cb'],
  ['loopback: %25@ trick', 'http://localhost:8090%25@example.com/native/cb'],
  ['loopback: upper-case host', 'http://LOCALHOST:3000/native/cb'],
  ['loopback: port out of range', 'http://127.0.0.1:99999/cb'],
  ['loopback: fragment', 'http://127.0.0.1:8080/cb#x'],
  ['loopback: path case', 'http://127.0.0.1:8080/CB'],
  ['loopback: ..;/', 'http://[::1]:4444/cb/..;/x'],
  ['loopback: %2e%2e', 'http://localhost:3000/native/%2e%2e/cb'],
  // Decision X5 (security test, issue 10, finding 12c): a port is 1-65535 without leading zeros.
  ['loopback: port 0', 'http://127.0.0.1:0/cb'],
  ['loopback: leading zeros', 'http://127.0.0.1:009/cb'],
  ['loopback: leading zeros on the registered port', 'http://127.0.0.1:08080/cb'],
  ['loopback: [::1] port 0', 'http://[::1]:0/cb'],
  ['loopback: localhost port 00080', 'http://localhost:00080/native/cb'],
  ['loopback: empty port', 'http://localhost:/native/cb'],
];

const PORT_RULE = 'The redirect_uri is not acceptable: a port must be a number from 1 to 65535 without leading zeros (RFC 8252 section 7.3).';

const ACCEPTED = [WEB, 'http://127.0.0.1:8080/cb', 'http://127.0.0.1:51234/cb', 'http://127.0.0.1/cb', 'http://localhost:3000/native/cb', 'http://[::1]:4444/cb'];

for (const db of DATABASES) {
  describe(`redirect_uri matching on ${db.name}`, () => {
    let server: RunningServer;
    let client: Client;
    const request = (redirectUri: string, client_id = client.clientId) =>
      browse(authorizationUrl(server.url, { client_id, redirect_uri: redirectUri, response_type: 'code', scope: 'openid', state: 'st' }));

    before(async () => {
      server = await startServer(db);
      ({ client } = await createTestClient(server.gatehouse.store, { redirectUris: REGISTERED, metadata: { application_type: 'native' } }));
    });
    after(async () => server.close());

    for (const [trick, uri] of REJECTED) {
      test(`refused with the error page: ${trick}`, async () => {
        const html = await assertErrorPage(await request(uri), 'invalid_redirect_uri');
        assert.ok(!html.includes('evil.example'), 'the page does not echo the URI');
      });
    }

    test('an exact match, and a loopback URI differing only in its port, are accepted for a native client (RFC 8252 §7.3)', async () => {
      for (const uri of ACCEPTED) await assertLoginPage(await request(uri));
    });

    test('a web client (no application_type, or "web") gets no port leeway on its loopback URIs; its exact URIs are accepted', async () => {
      for (const metadata of [{}, { application_type: 'web' }]) {
        const { client: web } = await createTestClient(server.gatehouse.store, { redirectUris: REGISTERED, metadata });
        for (const uri of ['http://127.0.0.1:51234/cb', 'http://127.0.0.1/cb', 'http://localhost:3000/native/cb', 'http://[::1]:4444/cb']) {
          await assertErrorPage(await request(uri, web.clientId), 'invalid_redirect_uri');
        }
        for (const uri of REGISTERED) await assertLoginPage(await request(uri, web.clientId));
      }
    });

    test("the console's redirect URI on another port gets the error page and no code, even for a signed-in administrator with prompt=none", async () => {
      await ensureManagementSetup(server);
      const admin = await createTestUser(server.gatehouse.store, { password: 'correct horse battery staple' });
      const jar = new CookieJar();
      const callback = `${new URL(server.issuer).origin}/manage/callback`;
      const query = (redirectUri: string) => ({ client_id: CONSOLE_CLIENT_ID, redirect_uri: redirectUri, response_type: 'code', scope: 'openid', state: 'st', code_challenge: pkce().challenge, code_challenge_method: 'S256' });
      // A real sign-in to the console first: the SSO session a silent request would ride on.
      assertCodeRedirect(await loginThroughForm({ baseUrl: server.url, jar }, query(callback), { username: admin.username, password: 'correct horse battery staple' }), { redirectUri: callback, state: 'st', issuer: server.issuer, status: 303 });
      const elsewhere = callback.replace(`:${new URL(callback).port}/`, `:${Number(new URL(callback).port) === 65535 ? 65534 : Number(new URL(callback).port) + 1}/`);
      assert.notEqual(elsewhere, callback);
      await assertErrorPage(await browse(authorizationUrl(server.url, { ...query(elsewhere), prompt: 'none' }), jar), 'invalid_redirect_uri');
      // The same session still gets its code at the registered URI: only the port was refused.
      assertCodeRedirect(await browse(authorizationUrl(server.url, { ...query(callback), prompt: 'none' }), jar), { redirectUri: callback, state: 'st', issuer: server.issuer });
    });

    test('a loopback port 0 or with leading zeros is refused with a clear error, even when registered exactly so', async () => {
      for (const uri of ['http://127.0.0.1:0/cb', 'http://localhost:009/native/cb']) {
        const html = await assertErrorPage(await request(uri), 'invalid_redirect_uri');
        assert.ok(html.includes(PORT_RULE), `the page says why: ${uri}`);
      }
      // Registered (straight into the store) before the rule existed: refused at use all the same.
      const { client: legacy } = await createTestClient(server.gatehouse.store, { redirectUris: ['http://127.0.0.1:0/cb'] });
      assert.ok((await assertErrorPage(await request('http://127.0.0.1:0/cb', legacy.clientId), 'invalid_redirect_uri')).includes(PORT_RULE));
    });

    test('another client’s registered URI is not accepted', async () => {
      const { client: other } = await createTestClient(server.gatehouse.store, { redirectUris: ['https://other.example.test/cb'] });
      await assertErrorPage(await request('https://other.example.test/cb'), 'invalid_redirect_uri');
      await assertErrorPage(await request(WEB, other.clientId), 'invalid_redirect_uri');
    });

    test('a script scheme is refused at use even if it was somehow registered', async () => {
      const { client: bad } = await createTestClient(server.gatehouse.store, { redirectUris: ['javascript:alert(1)', 'data:text/html,x'] });
      await assertErrorPage(await request('javascript:alert(1)', bad.clientId), 'invalid_redirect_uri');
      await assertErrorPage(await request('data:text/html,x', bad.clientId), 'invalid_redirect_uri');
    });
  });
}
