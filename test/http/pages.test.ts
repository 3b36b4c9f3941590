/**
 * The pages an end user sees, over HTTP: the landing page and favicon, the error pages (plain
 * words in the user's language, the code in small print, sign-in or sign-out, a way back to the
 * application only when it is safe), and the login page's client name by language, logo (with
 * the one widened img-src) and errors tied to their fields. In a browser, with axe-core:
 * test/e2e/accessibility.test.ts.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { en } from '../../src/http/interaction/i18n/en.ts';
import { fi } from '../../src/http/interaction/i18n/fi.ts';
import { sv } from '../../src/http/interaction/i18n/sv.ts';
import { DATABASES } from '../helpers/databases.ts';
import { authorizationUrl, browse, CookieJar, createTestClient, createTestUser, formAction, formFields, submit } from '../helpers/fixtures.ts';
import { assertErrorPage, assertLoginPage } from '../helpers/front-channel.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';

const BASE_CSP = "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";
/** The login page's: its passkey scripts and their options' fetch, from our origin only (issue 24). */
const LOGIN_CSP = BASE_CSP.replace("default-src 'none'", "default-src 'none'; script-src 'self'; connect-src 'self'");
const FAVICON = readFileSync(new URL('../../src/http/interaction/assets/favicon.ico', import.meta.url));

/** As Eta writes a text into the page. */
function escaped(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
}

/** The text of the page's first <h1>, and of the paragraph after it. */
function heading(html: string): { title: string | undefined; message: string | undefined } {
  const match = /<h1>([^<]*)<\/h1>\n<p>([^<]*)<\/p>/.exec(html);
  return { title: match?.[1], message: match?.[2] };
}

const backLinks = (html: string) => [...html.matchAll(/<a class="back" href="([^"]*)">([^<]*)<\/a>/g)].map((m) => [m[1], m[2]]);

for (const db of DATABASES) {
  describe(`pages a user sees on ${db.name}`, () => {
    let server: RunningServer;

    before(async () => {
      server = await startServer(db);
    });
    after(async () => server.close());

    test('GET and HEAD / and /uas: the landing page, in the browser’s language, under the default policy', async () => {
      for (const path of ['/', '/uas']) {
        const response = await fetch(`${server.url}${path}`, { headers: { 'accept-language': 'fi-FI, en;q=0.5' } });
        assert.equal(response.status, 200, path);
        assert.equal(response.headers.get('content-type'), 'text/html; charset=utf-8');
        assert.equal(response.headers.get('content-security-policy'), BASE_CSP);
        assert.equal(response.headers.get('cache-control'), 'no-store');
        const html = await response.text();
        assert.match(html, /<html lang="fi">/);
        assert.deepEqual(heading(html), { title: escaped(fi.landingTitle), message: escaped(fi.landingIntro) });
        assert.deepEqual(
          [...html.matchAll(/<a href="([^"]*)">/g)].map((m) => m[1]),
          ['/uas/.well-known/openid-configuration', '/uas/oauth2/metadata.jwks', '/health/ready', '/customerid-rest/openapi.json'],
        );
        assert.doesNotMatch(html, /<script|style=/, 'no script, no inline style');

        const head = await fetch(`${server.url}${path}`, { method: 'HEAD' });
        assert.equal(head.status, 200);
        assert.equal(head.headers.get('content-type'), 'text/html; charset=utf-8');
        assert.equal(head.headers.get('content-security-policy'), BASE_CSP);
        assert.equal(await head.text(), '');
      }
      const english = await (await fetch(`${server.url}/`)).text();
      assert.deepEqual(heading(english), { title: escaped(en.landingTitle), message: escaped(en.landingIntro) });
      // Every link answers.
      for (const href of [...english.matchAll(/<a href="([^"]*)">/g)].map((m) => m[1])) assert.equal((await fetch(`${server.url}${href}`)).status, 200, href);
    });

    test('the favicon at /favicon.ico and /uas/favicon.ico (linked by every page), GET and HEAD', async () => {
      for (const path of ['/favicon.ico', '/uas/favicon.ico']) {
        const response = await fetch(`${server.url}${path}`);
        assert.equal(response.status, 200, path);
        assert.equal(response.headers.get('content-type'), 'image/x-icon');
        assert.deepEqual(Buffer.from(await response.arrayBuffer()), FAVICON);
        assert.deepEqual([...FAVICON.subarray(0, 4)], [0, 0, 1, 0], 'an ICO file');
        assert.equal((await fetch(`${server.url}${path}`, { method: 'HEAD' })).status, 200);
      }
      assert.match(await (await fetch(`${server.url}/`)).text(), /<link rel="icon" href="\/uas\/favicon.ico">/);
    });

    test('an unknown client_id: invalid_client, "unknown application" in plain words in the user’s language, no way back', async () => {
      const cases = [
        ['en', en],
        ['fi', fi],
        ['sv', sv],
      ] as const;
      for (const [locale, t] of cases) {
        const html = await assertErrorPage(await browse(authorizationUrl(server.url, { client_id: 'no-such-client', redirect_uri: 'https://evil.example/cb', ui_locales: locale })), 'invalid_client');
        assert.match(html, new RegExp(`<html lang="${locale}">`));
        assert.deepEqual(heading(html), { title: escaped(t.errorTitle), message: escaped(t.signInErrors.invalid_client) });
        assert.match(html, new RegExp(`<p class="error-detail">${t.errorCode}: <code>invalid_client</code> &ndash; The client_id is unknown.</p>`));
        assert.deepEqual(backLinks(html), []);
        assert.ok(!html.includes('evil.example'), 'nothing the request sent is echoed');
      }
    });

    test('an unregistered redirect_uri of a known client: a link back to the origin of its registered web redirect URI only', async () => {
      const { client: web } = await createTestClient(server.gatehouse.store, { redirectUris: ['com.example.app:/cb', 'https://app.example.test:8443/oauth/cb?x=1'] });
      const html = await assertErrorPage(await browse(authorizationUrl(server.url, { client_id: web.clientId, redirect_uri: 'https://evil.example/cb', ui_locales: 'sv' })), 'invalid_redirect_uri');
      assert.deepEqual(heading(html), { title: escaped(sv.errorTitle), message: escaped(sv.signInErrors.invalid_redirect_uri) });
      assert.deepEqual(backLinks(html), [['https://app.example.test:8443', escaped(sv.backToApplication)]]);

      const { client: dev } = await createTestClient(server.gatehouse.store, { redirectUris: ['http://127.0.0.1:3000/callback'] });
      assert.deepEqual(backLinks(await (await browse(authorizationUrl(server.url, { client_id: dev.clientId, redirect_uri: 'http://127.0.0.1:3001/other' }))).text()), [['http://127.0.0.1:3000', en.backToApplication]]);

      // A native app (a loopback URI without a port, a private-use scheme) has no page to go back to.
      const { client: native } = await createTestClient(server.gatehouse.store, { redirectUris: ['http://127.0.0.1/callback', 'com.example.app:/cb'], tokenEndpointAuthMethod: 'none' });
      assert.deepEqual(backLinks(await assertErrorPage(await browse(authorizationUrl(server.url, { client_id: native.clientId, redirect_uri: 'https://evil.example/cb' })), 'invalid_redirect_uri')), []);
    });

    test('the logout error page speaks of signing out, in the user’s language', async () => {
      for (const [locale, t] of [
        ['en', en],
        ['fi', fi],
      ] as const) {
        const html = await assertErrorPage(await browse(`${server.url}/uas/oauth2/logout?post_logout_redirect_uri=${encodeURIComponent('https://evil.example/')}&ui_locales=${locale}`), 'invalid_request');
        assert.deepEqual(heading(html), { title: escaped(t.signOutErrorTitle), message: escaped(t.signOutErrors.invalid_request) });
        assert.ok(!html.includes(t.errorTitle), 'not a sign-in error');
      }
    });

    test('the login page: client_name#<language> and logo_uri, with img-src widened to the logo’s origin only', async () => {
      const { client } = await createTestClient(server.gatehouse.store, {
        name: 'Library',
        metadata: { 'client_name#fi': 'Kirjasto', 'client_name#sv-FI': 'Bibliotek', logo_uri: 'https://cdn.example.test/img/logo.png?v=2' },
      });
      const url = (extra: Record<string, string>) => authorizationUrl(server.url, { client_id: client.clientId, redirect_uri: client.redirectUris[0]!, response_type: 'code', scope: 'openid', ...extra });
      const names = [];
      for (const locale of ['fi', 'sv', 'en']) {
        const response = await browse(url({ ui_locales: locale }));
        assert.equal(response.headers.get('content-security-policy'), LOGIN_CSP.replace("img-src 'self'", "img-src 'self' https://cdn.example.test").replace("form-action 'self'", "form-action 'self' https://rp.example.test"));
        const html = await assertLoginPage(response);
        names.push(/<strong>([^<]*)<\/strong>/.exec(html)?.[1]);
        // alt: the client's name in the page's language; no Referer to the logo's server.
        assert.deepEqual([...html.matchAll(/<img class="logo" src="([^"]*)" alt="([^"]*)" referrerpolicy="no-referrer">/g)].map((m) => [m[1], m[2]]), [['https://cdn.example.test/img/logo.png?v=2', names.at(-1)]]);
      }
      assert.deepEqual(names, ['Kirjasto', 'Bibliotek', 'Library']);
      // display=touch shows them too.
      assert.match(await assertLoginPage(await browse(url({ ui_locales: 'fi', display: 'touch' }))), /<img class="logo" src="https:\/\/cdn.example.test\/img\/logo.png\?v=2" alt="Kirjasto" referrerpolicy="no-referrer">\n<h1>[^<]*<\/h1>\n<p class="client"><strong>Kirjasto<\/strong>/);

      // No logo, or one the policy cannot name (a row stored before logo_uri was validated): no image, img-src 'self'.
      for (const metadata of [{}, { logo_uri: 'https://[2001:db8::1]/logo.png' }, { logo_uri: 'javascript:alert(1)' }, { logo_uri: 42 }]) {
        const { client: plain } = await createTestClient(server.gatehouse.store, { metadata });
        const response = await browse(authorizationUrl(server.url, { client_id: plain.clientId, redirect_uri: plain.redirectUris[0]!, response_type: 'code', scope: 'openid' }));
        assert.equal(response.headers.get('content-security-policy'), LOGIN_CSP.replace("form-action 'self'", "form-action 'self' https://rp.example.test"), JSON.stringify(metadata));
        assert.doesNotMatch(await assertLoginPage(response), /<img/);
      }
    });

    test('a failed login marks both fields invalid and describes them with the message; other messages do not', async () => {
      const { client } = await createTestClient(server.gatehouse.store);
      const user = await createTestUser(server.gatehouse.store, { username: `pages-${Date.now()}`, password: 'pages password 1' });
      const jar = new CookieJar();
      const first = await assertLoginPage(await browse(authorizationUrl(server.url, { client_id: client.clientId, redirect_uri: client.redirectUris[0]!, response_type: 'code', scope: 'openid' }), jar));
      assert.doesNotMatch(first, /aria-invalid|aria-describedby|id="login-message"/);
      const fields = Object.fromEntries(formFields(first));
      const failed = await assertLoginPage(await submit(`${server.url}${formAction(first)}`, { ...fields, username: user.username, password: 'wrong password' }, jar), 401);
      const inputs = [...failed.matchAll(/<input id="(username|password)"[^>]*>/g)].map((m) => [m[1], /aria-invalid="([^"]*)"/.exec(m[0])?.[1], /aria-describedby="([^"]*)"/.exec(m[0])?.[1]]);
      assert.deepEqual(inputs, [
        ['username', 'true', 'login-message'],
        ['password', 'true', 'login-message'],
      ]);
      assert.match(failed, new RegExp(`<p class="message" role="alert" id="login-message">${escaped(en.loginFailed)}</p>`));
      // An expired form is not a mistake in the fields.
      const expired = await assertLoginPage(await submit(`${server.url}${formAction(first)}`, { ...fields, csrf_token: 'forged', username: user.username, password: 'x' }, jar), 403);
      assert.match(expired, /id="login-message"/);
      assert.doesNotMatch(expired, /aria-invalid/);
    });
  });
}
