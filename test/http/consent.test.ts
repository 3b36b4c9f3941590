/**
 * The consent page of third-party clients (issue 13, item 4) over real HTTP, on every database:
 * shown before the first code, remembered per user, client and scope set, asked again for a wider
 * scope and under prompt=consent, consent_required under prompt=none, access_denied on deny,
 * withdrawn with the client's tokens, never shown to first-party clients, and its form guarded by
 * the CSRF token, the session binding and a full re-validation of the carried request.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { Client } from '../../src/domain/client.ts';
import { parsePolicyDocument } from '../../src/domain/policy.ts';
import type { User } from '../../src/domain/user.ts';
import { withdrawConsent } from '../../src/oauth/consents.ts';
import { AuditCapture } from '../helpers/audit.ts';
import { basic, postForm } from '../helpers/back-channel.ts';
import { DATABASES } from '../helpers/databases.ts';
import { authorizationUrl, browse, CookieJar, createTestClient, createTestUser, formAction, formFields, loginThroughForm, submit } from '../helpers/fixtures.ts';
import { assertCodeRedirect, assertErrorPage, assertErrorRedirect, assertLoginPage } from '../helpers/front-channel.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';
import { aGroup } from '../helpers/store.ts';

const PASSWORD = 'consent password 1';

/** The consent page: 200 HTML, never cached, whose form posts to the consent route. */
async function assertConsentPage(response: Response, status = 200): Promise<string> {
  assert.equal(response.status, status);
  assert.equal(response.headers.get('location'), null);
  assert.match(response.headers.get('content-type') ?? '', /^text\/html/);
  assert.equal(response.headers.get('cache-control'), 'no-store');
  const html = await response.text();
  assert.equal(formAction(html), '/uas/oauth2/authorization/consent');
  return html;
}

/** The items of the list labelled by the heading with this id, as the page shows them. */
function listItems(html: string, id: string): string[] {
  const list = new RegExp(`<ul[^>]*aria-labelledby="${id}"[^>]*>([\\s\\S]*?)</ul>`).exec(html)?.[1];
  return list === undefined ? [] : [...list.matchAll(/<li>([^<]*)<\/li>/g)].map((m) => m[1]!);
}

for (const db of DATABASES) {
  describe(`consent on ${db.name}`, () => {
    let server: RunningServer;
    let audit: AuditCapture;
    let thirdParty: { client: Client; clientSecret: string };
    let firstParty: Client;
    let resourceServer: Client;
    const PAYROLL_URI = `https://payroll-${randomUUID().slice(0, 8)}.example/api`;
    before(async () => {
      audit = new AuditCapture();
      server = await startServer(db, { audit });
      const store = server.gatehouse.store;
      ({ client: resourceServer } = await createTestClient(store, { name: 'Payroll API', grantTypes: [], redirectUris: [], metadata: { resource_server: true, resource_uris: [PAYROLL_URI] } }));
      thirdParty = await createTestClient(store, {
        name: 'Partner App',
        metadata: { consent_required: true, 'client_name#fi': 'Kumppanisovellus', logo_uri: 'https://partner.example/logo.png', aud: [resourceServer.clientId] },
      });
      ({ client: firstParty } = await createTestClient(store, { redirectUris: ['https://first.example.test/cb'] }));
    });
    after(async () => server.close());

    const newUser = () => createTestUser(server.gatehouse.store, { password: PASSWORD, givenName: 'Ada', email: 'ada@example.test' });
    const query = (client: Client, extra: Record<string, string> = {}) => ({ client_id: client.clientId, redirect_uri: client.redirectUris[0]!, response_type: 'code', scope: 'openid', state: 's', ...extra });
    const authorizeWith = (jar: CookieJar, client: Client, extra: Record<string, string> = {}) => browse(authorizationUrl(server.url, query(client, extra)), jar);
    /** Signs in through the login form for the third-party client: the consent page follows. */
    const signIn = async (user: User, extra: Record<string, string> = {}, jar = new CookieJar()) => {
      const response = await loginThroughForm({ baseUrl: server.url, jar }, query(thirdParty.client, extra), { username: user.username, password: PASSWORD });
      return { jar, html: await assertConsentPage(response) };
    };
    /** Posts the consent form as the browser would, with the button's decision. */
    const answer = (jar: CookieJar, html: string, decision: 'allow' | 'deny', change: (fields: [string, string][]) => [string, string][] = (f) => f) =>
      submit(new URL(formAction(html), server.url).toString(), change([...formFields(html), ['decision', decision]]), jar);
    const codeOf = (response: Response, status = 303) => assertCodeRedirect(response, { redirectUri: thirdParty.client.redirectUris[0]!, state: 's', issuer: server.issuer, status });
    const consentOf = (user: User) => server.gatehouse.store.consents.find(user.id, thirdParty.client.clientId);
    const exchange = async (code: string) => {
      const response = await postForm(`${server.url}/uas/oauth2/token`, { grant_type: 'authorization_code', code, redirect_uri: thirdParty.client.redirectUris[0]! }, { authorization: basic(thirdParty.client.clientId, thirdParty.clientSecret) });
      assert.equal(response.status, 200, JSON.stringify(response.body));
      return response.body;
    };

    test('the first code shows the consent page: name, logo, what the scope allows, the claims and the audiences (CN-01, CN-02)', async () => {
      const user = await newUser();
      const { html } = await signIn(user, { scope: `openid profile email ${resourceServer.clientId}` });
      assert.match(html, /<h1>Allow access\?<\/h1>/);
      assert.match(html, /<p class="client">Partner App asks for access to your account.<\/p>/);
      assert.match(html, /<img class="logo" src="https:\/\/partner.example\/logo.png" alt="Partner App logo" referrerpolicy="no-referrer">/);
      assert.deepEqual(listItems(html, 'consent-scopes'), ['Sign you in', 'See your name and username', 'See your email address']);
      assert.deepEqual(listItems(html, 'consent-claims'), ['An identifier for you', 'Your full name', 'Your first name', 'Your last name', 'Your username', 'When your profile last changed', 'Your email address', 'Whether your email address is verified']);
      assert.deepEqual(listItems(html, 'consent-audiences'), ['Payroll API']);
      assert.match(html, new RegExp(`Signed in as <strong>${user.username}</strong>`));
      assert.equal(await consentOf(user), undefined, 'nothing remembered before the answer');
    });

    test('the page speaks the ui_locales language with the localized client name (CN-02)', async () => {
      const { html } = await signIn(await newUser(), { ui_locales: 'fi' });
      assert.match(html, /<html lang="fi">/);
      assert.match(html, /<p class="client">Kumppanisovellus pyytää pääsyä tiliisi.<\/p>/);
      assert.deepEqual(listItems(html, 'consent-scopes'), ['Kirjata sinut sisään']);
    });

    test('allow: the code comes and is exchanged, the consent is remembered, and the next authorization needs no page (CN-03)', async () => {
      const user = await newUser();
      const { jar, html } = await signIn(user, { scope: 'openid profile' });
      const code = codeOf(await answer(jar, html, 'allow'));
      const tokens = await exchange(code);
      assert.equal(tokens.scope, 'openid profile');
      assert.deepEqual((await consentOf(user))?.scope, ['openid', 'profile']);
      codeOf(await authorizeWith(jar, thirdParty.client, { scope: 'openid profile' }), 302);
      codeOf(await authorizeWith(jar, thirdParty.client, { scope: 'profile' }), 302);
      assert.deepEqual(
        audit.of('consent.granted').filter((e) => e.userId === user.id).map((e) => e.scope),
        ['openid profile'],
      );
    });

    test('a resource indicator travels through the consent form: the page names its server, and the token carries it (CN-03, RFC 8707 §2)', async () => {
      const user = await newUser();
      const { jar, html } = await signIn(user, { resource: PAYROLL_URI });
      assert.deepEqual(listItems(html, 'consent-audiences'), ['Payroll API']);
      assert.deepEqual(formFields(html).filter(([name]) => name === 'resource'), [['resource', PAYROLL_URI]]);
      const tokens = await exchange(codeOf(await answer(jar, html, 'allow')));
      assert.equal(tokens.scope, `openid ${resourceServer.clientId}`);
      assert.deepEqual((await consentOf(user))?.scope, ['openid', resourceServer.clientId].sort());
    });

    test("the answer is a path to a code of its own: the client's authorization policy is checked again, and a user it no longer lets in gets access_denied (CN-12)", async () => {
      const store = server.gatehouse.store;
      const group = aGroup();
      await store.groups.insert(group);
      const policyName = `consent-policy-${randomUUID()}`;
      await store.policies.insert({ document: parsePolicyDocument({ name: policyName, access: { groups: [group.name] } }), version: 1, createdAt: 0, updatedAt: 0 });
      const guarded = await createTestClient(store, { name: 'Guarded Partner', redirectUris: ['https://guarded.example.test/cb'], authorizationPolicy: policyName, metadata: { consent_required: true } });
      const user = await newUser();
      await store.groups.addMember(group.id, user.id);
      const jar = new CookieJar();
      const page = await assertConsentPage(await loginThroughForm({ baseUrl: server.url, jar }, query(guarded.client), { username: user.username, password: PASSWORD }));
      // Removed from the group while the page was open.
      await store.groups.removeMember(group.id, user.id);
      assertErrorRedirect(await answer(jar, page, 'allow'), { redirectUri: guarded.client.redirectUris[0]!, error: 'access_denied', state: 's', issuer: server.issuer });
      assert.equal(await store.consents.find(user.id, guarded.client.clientId), undefined, 'nothing remembered');
    });

    test("the claims list names the client's policy claims the scope releases, after the standard ones, from each of the three paths to the page (CN-02)", async () => {
      const store = server.gatehouse.store;
      const policyName = `consent-claims-${randomUUID()}`;
      const document = parsePolicyDocument({
        name: policyName,
        claims: [
          { claim: 'department', from: 'attribute:department', in: ['id_token'], scope: 'profile' },
          { claim: 'groups', from: 'groups', in: ['access_token'] },
          { claim: 'mail_alias', from: 'attribute:alias', scope: 'email' },
          { claim: 'email', from: 'user.email', in: ['introspection'] },
          { claim: 'tenant', value: 'acme' },
        ],
      });
      await store.policies.insert({ document, version: 1, createdAt: 0, updatedAt: 0 });
      const mapped = await createTestClient(store, { name: 'Mapped Partner', redirectUris: ['https://mapped.example.test/cb'], authorizationPolicy: policyName, metadata: { consent_required: true } });
      const user = await newUser();
      const jar = new CookieJar();
      const profile = ['An identifier for you', 'Your full name', 'Your first name', 'Your last name', 'Your username', 'When your profile last changed'];
      // The login form's path: department (released by profile), groups in plain words, email (no standard email here), tenant; not mail_alias (email not asked).
      const afterLogin = await assertConsentPage(await loginThroughForm({ baseUrl: server.url, jar }, query(mapped.client, { scope: 'openid profile' }), { username: user.username, password: PASSWORD }));
      assert.deepEqual(listItems(afterLogin, 'consent-claims'), [...profile, 'department', 'The groups you belong to', 'Your email address', 'tenant']);
      // The authorization endpoint's path (single sign-on), with email asked: the standard email claim once, then mail_alias.
      const silent = await assertConsentPage(await authorizeWith(jar, mapped.client, { scope: 'openid email' }));
      assert.deepEqual(listItems(silent, 'consent-claims'), ['An identifier for you', 'Your email address', 'Whether your email address is verified', 'The groups you belong to', 'mail_alias', 'tenant']);
      // The consent answer's path (an expired form shows the page again), in Finnish.
      const finnish = await assertConsentPage(await authorizeWith(jar, mapped.client, { scope: 'openid', ui_locales: 'fi' }));
      const expired = await assertConsentPage(await answer(jar, finnish, 'allow', (fields) => fields.map(([n, v]): [string, string] => [n, n === 'csrf_token' ? 'A'.repeat(43) : v])), 403);
      assert.deepEqual(listItems(expired, 'consent-claims'), ['Sinua yksilöivän tunnisteen', 'Ryhmät, joihin kuulut', 'Sähköpostiosoitteesi', 'tenant']);
    });

    test('a wider scope asks again, and the answer widens the remembered set (CN-04)', async () => {
      const user = await newUser();
      const { jar, html } = await signIn(user);
      codeOf(await answer(jar, html, 'allow'));
      const wider = await assertConsentPage(await authorizeWith(jar, thirdParty.client, { scope: 'openid email' }));
      codeOf(await answer(jar, wider, 'allow'));
      assert.deepEqual((await consentOf(user))?.scope, ['email', 'openid']);
      codeOf(await authorizeWith(jar, thirdParty.client, { scope: 'openid email' }), 302);
    });

    test('prompt=consent asks again after single sign-on, without the login form (CN-05)', async () => {
      const user = await newUser();
      const { jar, html } = await signIn(user);
      codeOf(await answer(jar, html, 'allow'));
      const again = await assertConsentPage(await authorizeWith(jar, thirdParty.client, { prompt: 'consent' }));
      assert.doesNotMatch(again, /name="password"/);
      codeOf(await answer(jar, again, 'allow'));
    });

    test('a session from another client that needs consent shows the consent page, not the login form (CN-06)', async () => {
      const user = await newUser();
      const jar = new CookieJar();
      const first = await loginThroughForm({ baseUrl: server.url, jar }, query(firstParty, {}), { username: user.username, password: PASSWORD });
      assertCodeRedirect(first, { redirectUri: firstParty.redirectUris[0]!, state: 's', issuer: server.issuer, status: 303 });
      const html = await assertConsentPage(await authorizeWith(jar, thirdParty.client));
      codeOf(await answer(jar, html, 'allow'));
    });

    test('prompt=none without a covering consent is consent_required; with one, a code (CN-07)', async () => {
      const user = await newUser();
      const { jar, html } = await signIn(user);
      assertErrorRedirect(await authorizeWith(jar, thirdParty.client, { prompt: 'none' }), { redirectUri: thirdParty.client.redirectUris[0]!, error: 'consent_required', state: 's', issuer: server.issuer });
      codeOf(await answer(jar, html, 'allow'));
      codeOf(await authorizeWith(jar, thirdParty.client, { prompt: 'none' }), 302);
      assertErrorRedirect(await authorizeWith(jar, thirdParty.client, { prompt: 'none', scope: 'openid email' }), { redirectUri: thirdParty.client.redirectUris[0]!, error: 'consent_required', state: 's', issuer: server.issuer });
    });

    test('deny: access_denied by the response mode, nothing remembered, and the next request asks again (CN-08)', async () => {
      const user = await newUser();
      const { jar, html } = await signIn(user);
      assertErrorRedirect(await answer(jar, html, 'deny'), { redirectUri: thirdParty.client.redirectUris[0]!, error: 'access_denied', state: 's', issuer: server.issuer });
      assert.equal(await consentOf(user), undefined);
      await assertConsentPage(await authorizeWith(jar, thirdParty.client));
      const fragment = await signIn(user, { response_mode: 'fragment' });
      const response = await answer(fragment.jar, fragment.html, 'deny');
      const location = new URL(response.headers.get('location') ?? '');
      assert.equal(location.search, '');
      assert.equal(new URLSearchParams(location.hash.slice(1)).get('error'), 'access_denied');
    });

    test('withdrawn: the client\'s tokens for the user are inactive at introspection, and the page shows again (CN-09)', async () => {
      const user = await newUser();
      const { jar, html } = await signIn(user);
      const tokens = await exchange(codeOf(await answer(jar, html, 'allow')));
      const introspect = async () =>
        (await postForm(`${server.url}/uas/oauth2/introspection`, { token: tokens.access_token as string }, { authorization: basic(thirdParty.client.clientId, thirdParty.clientSecret) })).body.active;
      assert.equal(await introspect(), true);
      assert.deepEqual(await withdrawConsent(server.gatehouse.store, user.id, thirdParty.client.clientId, Date.now()), { withdrawn: true, revoked: 1 });
      assert.equal(await introspect(), false);
      await assertConsentPage(await authorizeWith(jar, thirdParty.client));
    });

    test('a first-party client never shows the page; its prompt=consent still shows the login form (CN-10, F2)', async () => {
      const user = await newUser();
      const jar = new CookieJar();
      const response = await loginThroughForm({ baseUrl: server.url, jar }, query(firstParty, { scope: 'openid profile email' }), { username: user.username, password: PASSWORD });
      assertCodeRedirect(response, { redirectUri: firstParty.redirectUris[0]!, state: 's', issuer: server.issuer, status: 303 });
      assertCodeRedirect(await authorizeWith(jar, firstParty), { redirectUri: firstParty.redirectUris[0]!, state: 's', issuer: server.issuer });
      await assertLoginPage(await authorizeWith(jar, firstParty, { prompt: 'consent' }));
      assert.equal(await server.gatehouse.store.consents.find(user.id, firstParty.clientId), undefined);
    });

    test('a post without the CSRF cookie, or with another token, is refused with the page again and no code (CN-11)', async () => {
      const user = await newUser();
      const { jar, html } = await signIn(user);
      const noCsrfCookie = new CookieJar();
      noCsrfCookie.cookies.set('gatehouse_session', jar.cookies.get('gatehouse_session')!);
      await assertConsentPage(await answer(noCsrfCookie, html, 'allow'), 403);
      const wrong = await answer(jar, html, 'allow', (fields) => fields.map(([n, v]): [string, string] => [n, n === 'csrf_token' ? 'A'.repeat(43) : v]));
      const again = await assertConsentPage(wrong, 403);
      assert.match(again, /The form expired. Please choose again./);
      assert.equal(await consentOf(user), undefined);
      codeOf(await answer(jar, again, 'allow'));
    });

    test('a tampered form gains nothing: another redirect_uri, an audience outside aud, a first-party client, another session (CN-12)', async () => {
      const user = await newUser();
      const { jar, html } = await signIn(user);
      const set = (name: string, value: string) => (fields: [string, string][]) => fields.map(([n, v]): [string, string] => [n, n === name ? value : v]);
      await assertErrorPage(await answer(jar, html, 'allow', set('redirect_uri', 'https://evil.example/cb')), 'invalid_redirect_uri');
      assertErrorRedirect(await answer(jar, html, 'allow', set('scope', `openid ${firstParty.clientId}`)), { redirectUri: thirdParty.client.redirectUris[0]!, error: 'invalid_scope', state: 's', issuer: server.issuer });
      const asFirstParty = await answer(jar, html, 'allow', (fields) => set('redirect_uri', firstParty.redirectUris[0]!)(set('client_id', firstParty.clientId)(fields)));
      assertErrorRedirect(asFirstParty, { redirectUri: firstParty.redirectUris[0]!, error: 'invalid_request', state: 's', issuer: server.issuer });
      await assertConsentPage(await answer(jar, html, 'allow', set('consent_session', 'AAAAAAAAAAAA')), 403);
      const undecided = await submit(new URL(formAction(html), server.url).toString(), formFields(html), jar);
      assertErrorRedirect(undecided, { redirectUri: thirdParty.client.redirectUris[0]!, error: 'invalid_request', state: 's', issuer: server.issuer });
      assert.equal(await consentOf(user), undefined);
      assert.equal(await server.gatehouse.store.consents.find(user.id, firstParty.clientId), undefined);
    });

    test('signed out while the page was open: the post shows the login form, then the consent page (CN-13)', async () => {
      const user = await newUser();
      const { html } = await signIn(user);
      const fresh = new CookieJar();
      await assertLoginPage(await answer(fresh, html, 'allow'));
    });
  });
}
