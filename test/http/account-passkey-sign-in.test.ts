/**
 * The account page's "Sign in with a passkey" (docs/account.md; decisions AM108–AM113) over real
 * HTTP with the software authenticator (test/helpers/webauthn.ts), on every database: a user who
 * has only a passkey (made by an invitation accepted with one, AM100) follows the sign-in form's
 * link to the passkey page, signs in username-less and lands on the section asked for with its
 * client_id, the session's amr the passkey's, recent enough for changes; an unknown credential, a
 * wrong signature, a malformed answer, a forged POST are refused and sign no one in; the section is
 * by the allow-list only; "confirm it is you" offers the passkey and keeps to the session's user;
 * the password form still signs in. 4xx, never a 5xx (the test server fails close() on any 5xx).
 */
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { Client } from '../../src/domain/client.ts';
import { ManualClock } from '../../src/lib/clock.ts';
import { AuditCapture } from '../helpers/audit.ts';
import { basic, postForm } from '../helpers/back-channel.ts';
import { DATABASES } from '../helpers/databases.ts';
import { authorizationUrl, browse, CookieJar, createTestClient, createTestUser, formAction, formFields, redirectParams, submit } from '../helpers/fixtures.ts';
import { pendingInvitation } from '../helpers/invitations.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';
import { passkeyForm, SoftAuthenticator } from '../helpers/webauthn.ts';

type Json = Record<string, unknown> & { challenge: string; rp: { id: string }; user: { id: string } };
const PASSWORD = 'a password for the account page';
const REAUTH_WINDOW = 300;

for (const db of DATABASES) {
  describe(`the account page's passkey sign-in on ${db.name}`, () => {
    const clock = new ManualClock(Date.now());
    const audit = new AuditCapture();
    let server: RunningServer;
    let client: Client;
    let clientSecret: string;
    let origin: string;

    before(async () => {
      server = await startServer(db, { clock, audit, env: { GATEHOUSE_ACCOUNT_REAUTH_WINDOW: String(REAUTH_WINDOW) } });
      ({ client, clientSecret } = await createTestClient(server.gatehouse.store));
      origin = new URL(server.issuer).origin;
    });
    after(async () => server.close());

    const post = (path: string, form: Record<string, string>, jar: CookieJar, headers: Record<string, string> = { origin }) => submit(new URL(path, server.url).toString(), form, jar, headers);
    const clientQuery = () => `client_id=${encodeURIComponent(client.clientId)}`;

    async function optionsOf(form: ReturnType<typeof passkeyForm>, jar: CookieJar): Promise<Json> {
      const answer = await post(form.options, form.fields, jar);
      assert.equal(answer.status, 200, await answer.clone().text());
      assert.equal(answer.headers.get('cache-control'), 'no-store');
      return (await answer.json()) as Json;
    }

    /** A user with a passkey and no password, as an invitation accepted with a passkey makes one (AM100); its authenticator. */
    async function passkeyOnlyUser(): Promise<{ userId: string; authenticator: SoftAuthenticator }> {
      const email = `passkey.${randomUUID().slice(0, 8)}@example.com`;
      const { token } = await pendingInvitation(server.gatehouse.store, email, clock.now());
      const jar = new CookieJar();
      const form = passkeyForm(await (await browse(`${server.issuer}/account/invitation?token=${token}`, jar)).text());
      const authenticator = new SoftAuthenticator({ origin });
      const made = await post(form.action, { ...form.fields, response: JSON.stringify(authenticator.register(await optionsOf(form, jar))) }, jar);
      assert.equal(made.status, 303, await made.clone().text());
      const user = await server.gatehouse.store.users.getByUsername(email);
      assert.ok(user);
      assert.equal((await server.gatehouse.store.users.getCredentials(email))?.passwordHash, undefined, 'no password');
      return { userId: user.id, authenticator };
    }

    /** The passkey page as a browser opens it from a link; its response, html and passkey form. */
    async function passkeyPage(href: string, jar: CookieJar): Promise<{ response: Response; html: string; form: ReturnType<typeof passkeyForm> }> {
      const response = await browse(new URL(href, server.url).toString(), jar);
      assert.equal(response.status, 200);
      const html = await response.text();
      return { response, html, form: passkeyForm(html) };
    }

    /** The sign-in form's passkey link (templates/account-passkey-link.eta), unescaped. */
    const passkeyLink = (html: string) => {
      const href = /<p class="passkey-link"><a href="([^"]*)">/.exec(html)?.[1];
      assert.ok(href !== undefined, 'a passkey link');
      return href.replace(/&amp;/g, '&');
    };

    /** The ID token's amr of the browser's session: an authorization in it, then the token endpoint as the client would. */
    async function amrOfSession(jar: CookieJar): Promise<unknown> {
      const answer = await browse(authorizationUrl(server.url, { client_id: client.clientId, redirect_uri: client.redirectUris[0]!, response_type: 'code', scope: 'openid', state: 's' }), jar);
      assert.equal(answer.status, 302, 'signed in: straight back to the client');
      const code = redirectParams(answer).get('code')!;
      const tokens = await postForm(`${server.url}/uas/oauth2/token`, { grant_type: 'authorization_code', code, redirect_uri: client.redirectUris[0]! }, { authorization: basic(client.clientId, clientSecret) });
      assert.equal(tokens.status, 200, JSON.stringify(tokens.body));
      return (JSON.parse(Buffer.from(String(tokens.body.id_token).split('.')[1]!, 'base64url').toString()) as { amr?: unknown }).amr;
    }

    /** Whether the security page shows this browser's session as recent (the change forms), else the "confirm it is you" form. */
    const freshOn = async (jar: CookieJar) => {
      const html = await (await browse(`${server.url}/uas/account/security`, jar)).text();
      assert.match(html, /Signed in as/);
      return html.includes('action="/uas/account/security/totp"');
    };

    test('a passkey-only user signs in by passkey from a section\'s sign-in form and lands on that section, with the client_id, amr ["hwk","mfa"], recent', async () => {
      const { userId, authenticator } = await passkeyOnlyUser();
      const jar = new CookieJar();
      const section = await browse(`${server.url}/uas/account/sessions?${clientQuery()}`, jar);
      assert.equal(section.status, 200);
      // The sign-in form's page keeps its CSP without script: the passkey is a link to a page of its own.
      const sectionCsp = section.headers.get('content-security-policy') ?? '';
      assert.match(sectionCsp, /default-src 'none'/);
      assert.doesNotMatch(sectionCsp, /script-src/);
      const href = passkeyLink(await section.text());
      assert.equal(href, `/uas/account/security/passkey-sign-in?section=sessions&${clientQuery()}`);

      const { response, html, form } = await passkeyPage(href, jar);
      assert.deepEqual([response.headers.get('cache-control'), response.headers.get('referrer-policy')], ['no-store', 'same-origin']);
      const csp = response.headers.get('content-security-policy') ?? '';
      assert.deepEqual(/script-src [^;]*/.exec(csp)?.[0], "script-src 'self'");
      assert.deepEqual(/connect-src [^;]*/.exec(csp)?.[0], "connect-src 'self'");
      assert.deepEqual(
        [...html.matchAll(/<script src="([^"]*)"/g)].map((m) => m[1]),
        ['/uas/assets/webauthn.js', '/uas/assets/passkey.js'],
      );
      assert.deepEqual([form.action, form.options], ['/uas/account/security/passkey-sign-in', '/uas/account/security/passkey-sign-in/options']);
      assert.deepEqual(form.fields, { section: 'sessions', client_id: client.clientId, csrf_token: form.fields.csrf_token ?? 'missing', response: '' });
      assert.match(html, /<a href="\/uas\/account\/sessions\?client_id=[^"]*">Sign in with a password instead<\/a>/);

      const options = await optionsOf(form, jar);
      assert.deepEqual([options.rpId, options.allowCredentials, options.userVerification], [new URL(server.issuer).hostname, [], 'required']);
      audit.clear();
      const answer = await post(form.action, { ...form.fields, response: JSON.stringify(authenticator.assert(options)) }, jar);
      assert.equal(answer.status, 303, await answer.clone().text());
      assert.equal(answer.headers.get('location'), `/uas/account/sessions?${clientQuery()}`);
      assert.deepEqual(
        audit.all().map((e) => [e.event, 'clientId' in e ? e.clientId : undefined, 'userId' in e ? e.userId : undefined]),
        [
          ['factor.verified', 'gatehouse:account', userId],
          ['login.succeeded', 'gatehouse:account', userId],
        ],
      );
      const landed = await browse(new URL(answer.headers.get('location')!, server.url).toString(), jar);
      assert.equal(landed.status, 200);
      assert.equal(/<h1>([^<]*)<\/h1>/.exec(await landed.text())?.[1], 'Your sessions');
      assert.equal(await freshOn(jar), true, 'the passkey sign-in is recent for the security page');
      assert.deepEqual(await amrOfSession(jar), ['hwk', 'mfa']);
    });

    test('an unknown credential, a wrong signature, a malformed answer and a forged POST are refused; no session; the section is by the allow-list', async () => {
      const { userId, authenticator } = await passkeyOnlyUser();
      const jar = new CookieJar();
      // Any other section value is the security page (account-nav.ts sectionOf), never a URL.
      const { form } = await passkeyPage('/uas/account/security/passkey-sign-in?section=//evil.example/x', jar);
      assert.equal(form.fields.section, 'security');

      const stranger = new SoftAuthenticator({ origin });
      stranger.register({ challenge: randomBytes(32).toString('base64url'), rp: {}, user: { id: randomBytes(32).toString('base64url') } });
      audit.clear();
      const unknown = await post(form.action, { ...form.fields, response: JSON.stringify(stranger.assert(await optionsOf(form, jar))) }, jar);
      assert.equal(unknown.status, 401);
      assert.match(await unknown.text(), /The passkey was not accepted/);
      assert.deepEqual(
        audit.all().map((e) => [e.event, 'reason' in e ? e.reason : undefined]),
        [['login.failed', 'unknown_user']],
      );

      audit.clear();
      const wrong = await post(form.action, { ...form.fields, response: JSON.stringify(authenticator.assert(await optionsOf(form, jar), { origin: 'https://evil.example' })) }, jar);
      assert.equal(wrong.status, 401);
      assert.deepEqual(
        audit.all().map((e) => [e.event, 'userId' in e ? e.userId : undefined]),
        [['factor.failed', userId]],
      );

      assert.equal((await post(form.action, { ...form.fields, response: 'not json' }, jar)).status, 400);
      // Another origin: the page again (403), the options a JSON error; nothing done.
      const options = await optionsOf(form, jar);
      assert.equal((await post(form.action, { ...form.fields, response: JSON.stringify(authenticator.assert(options)) }, jar, { origin: 'https://evil.example' })).status, 403);
      const optionsForged = await post(form.options, form.fields, jar, { origin: 'https://evil.example' });
      assert.deepEqual([optionsForged.status, await optionsForged.json()], [403, { error: 'form_expired' }]);
      assert.equal((await post(form.options, { ...form.fields, csrf_token: 'x' }, jar)).status, 403);
      assert.doesNotMatch(jar.header().cookie ?? '', /gatehouse_session=/, 'no session');
      assert.match(await (await browse(`${server.url}/uas/account`, jar)).text(), /name="password"/, 'still the sign-in form');

      // The challenge refused by the forged POST was never spent: the same browser still signs in with a fresh one, to the security page.
      const signedIn = await post(form.action, { ...form.fields, response: JSON.stringify(authenticator.assert(await optionsOf(form, jar))) }, jar);
      assert.equal(signedIn.status, 303);
      assert.equal(signedIn.headers.get('location'), '/uas/account/security');
    });

    test('"confirm it is you" offers the passkey to a passkey-only user; it comes back recent, and keeps to the session\'s user', async () => {
      const { userId, authenticator } = await passkeyOnlyUser();
      const other = await passkeyOnlyUser();
      const jar = new CookieJar();
      const first = await passkeyPage('/uas/account/security/passkey-sign-in?section=security', jar);
      assert.equal((await post(first.form.action, { ...first.form.fields, response: JSON.stringify(authenticator.assert(await optionsOf(first.form, jar))) }, jar)).status, 303);
      clock.advance((REAUTH_WINDOW + 1) * 1000);
      assert.equal(await freshOn(jar), false);
      const html = await (await browse(`${server.url}/uas/account/security`, jar)).text();
      const href = passkeyLink(html);
      assert.equal(href, '/uas/account/security/passkey-sign-in?section=security');
      // The password section of a user without a password, signed in too long ago, links there too, coming back to it.
      assert.equal(passkeyLink(await (await browse(`${server.url}/uas/account/password`, jar)).text()), '/uas/account/security/passkey-sign-in?section=password');

      const { form } = await passkeyPage(href, jar);
      // Another user's passkey does not switch this browser's account (the session is the hint, AM110).
      audit.clear();
      const switched = await post(form.action, { ...form.fields, response: JSON.stringify(other.authenticator.assert(await optionsOf(form, jar))) }, jar);
      assert.equal(switched.status, 401);
      assert.deepEqual(
        audit.all().map((e) => [e.event, 'userId' in e ? e.userId : undefined]),
        [
          ['factor.verified', other.userId],
          ['login.hint_mismatch', other.userId],
        ],
      );
      assert.equal(await freshOn(jar), false, 'still the old session');

      audit.clear();
      const confirmed = await post(form.action, { ...form.fields, response: JSON.stringify(authenticator.assert(await optionsOf(form, jar))) }, jar);
      assert.equal(confirmed.status, 303);
      assert.equal(confirmed.headers.get('location'), '/uas/account/security');
      assert.deepEqual(
        audit.all().map((e) => [e.event, 'userId' in e ? e.userId : undefined]),
        [
          ['factor.verified', userId],
          ['login.succeeded', userId],
        ],
      );
      assert.equal(await freshOn(jar), true);
    });

    test('the password form beside the link still signs in, back to the section', async () => {
      const user = await createTestUser(server.gatehouse.store, { password: PASSWORD });
      const jar = new CookieJar();
      const html = await (await browse(`${server.url}/uas/account/applications?${clientQuery()}`, jar)).text();
      assert.equal(passkeyLink(html), `/uas/account/security/passkey-sign-in?section=applications&${clientQuery()}`);
      const answer = await post(formAction(html), { ...Object.fromEntries(formFields(html)), username: user.username, password: PASSWORD }, jar);
      assert.equal(answer.status, 303);
      assert.equal(answer.headers.get('location'), `/uas/account/applications?${clientQuery()}`);
      assert.deepEqual(await amrOfSession(jar), ['pwd']);
    });
  });

  describe(`the account page's passkey sign-in shares the login page's budget on ${db.name}`, () => {
    let server: RunningServer;
    before(async () => {
      server = await startServer(db, { env: { GATEHOUSE_PASSKEY_SIGN_INS_PER_ADDRESS: '2' } });
    });
    after(async () => server.close());

    test("one budget per address for both pages: the login page's ceremony and the account page's count together; then 429 with Retry-After", async () => {
      const { client } = await createTestClient(server.gatehouse.store);
      const origin = new URL(server.issuer).origin;
      const post = (path: string, form: Record<string, string>, jar: CookieJar) => submit(new URL(path, server.url).toString(), form, jar, { origin });
      const login = new CookieJar();
      const loginForm = passkeyForm(await (await browse(authorizationUrl(server.url, { client_id: client.clientId, redirect_uri: client.redirectUris[0]!, response_type: 'code', scope: 'openid', state: 's' }), login)).text());
      assert.equal((await post(loginForm.options, loginForm.fields, login)).status, 200);
      const jar = new CookieJar();
      const form = passkeyForm(await (await browse(`${server.url}/uas/account/security/passkey-sign-in`, jar)).text());
      assert.equal((await post(form.options, form.fields, jar)).status, 200);
      const spent = await post(form.options, form.fields, jar);
      assert.deepEqual([spent.status, spent.headers.get('retry-after'), await spent.json()], [429, '60', { error: 'too_many_requests' }]);
      assert.equal((await post(loginForm.options, loginForm.fields, login)).status, 429, "the login page's too");
    });
  });
}
