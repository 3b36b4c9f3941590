/**
 * A passkey enrolled on the login path (issue 24, item 2; docs/authorization.md, "Levels of
 * authentication", Enrolment; decisions SA120–SA122), with the software authenticator: a user
 * without a second factor, at a client whose policy requires `phr`, is offered only "Create a
 * passkey" after the password; its registration gives the code with amr ["pwd","hwk","mfa"] and
 * acr `phr`, nothing before. At `multi` the app and the passkey are both offered. At `phrh` a
 * synced passkey is kept but leaves the level unmet: the page says so, nothing is issued, and a
 * device-bound one then goes on. A refused registration stores nothing; a sign-in held for a
 * second factor cannot be used to enrol a passkey instead of giving it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Client } from '../../src/domain/client.ts';
import { parsePolicyDocument } from '../../src/domain/policy.ts';
import type { User } from '../../src/domain/user.ts';
import { ManualClock } from '../../src/lib/clock.ts';
import { basic, postForm } from '../helpers/back-channel.ts';
import { DATABASES } from '../helpers/databases.ts';
import { enrolTotp, totpAt } from '../helpers/factors.ts';
import { authorizationUrl, browse, CookieJar, createTestClient, createTestUser, formAction, formFields, redirectParams, submit } from '../helpers/fixtures.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';
import { passkeyForm, SoftAuthenticator } from '../helpers/webauthn.ts';

const PASSWORD = 'enrol a passkey at login';
const LEVELS = 'urn:test:pwd=single,urn:test:mfa=multi,phr,phrh';

for (const db of DATABASES) {
  describe(`a passkey enrolled on the login path on ${db.name}`, () => {
    const clock = new ManualClock(Date.now());
    let server: RunningServer;
    let origin: string;
    const clients = new Map<string, { client: Client; clientSecret: string }>();

    before(async () => {
      server = await startServer(db, { clock, env: { GATEHOUSE_ACR_LEVELS: LEVELS } });
      origin = new URL(server.issuer).origin;
      const { store } = server.gatehouse;
      for (const level of ['multi', 'phr', 'phrh'] as const) {
        await store.policies.insert({ document: parsePolicyDocument({ name: `needs-${level}`, minimum_authentication: level }), version: 1, createdAt: clock.now(), updatedAt: clock.now() });
        clients.set(level, await createTestClient(store, { authorizationPolicy: `needs-${level}` }));
      }
    });
    after(async () => server.close());

    const post = (path: string, form: Record<string, string>, jar: CookieJar) => submit(new URL(path, server.url).toString(), form, jar, { origin: server.url });

    /** The password at `level`'s client: the page after it (200), in the browser `jar`. */
    async function afterPassword(level: string, user: User, jar: CookieJar): Promise<string> {
      const { client } = clients.get(level)!;
      const login = await (await browse(authorizationUrl(server.url, { client_id: client.clientId, redirect_uri: client.redirectUris[0]!, response_type: 'code', scope: 'openid', state: level }), jar)).text();
      const page = await post(formAction(login), { ...Object.fromEntries(formFields(login)), username: user.username, password: PASSWORD }, jar);
      assert.equal(page.status, 200);
      return page.text();
    }

    /** Creates a passkey of `authenticator` on the page's passkey form; the answer. */
    async function create(html: string, authenticator: SoftAuthenticator, jar: CookieJar, tamper: Parameters<SoftAuthenticator['register']>[1] = {}): Promise<Response> {
      const form = passkeyForm(html);
      const options = await post(form.options, form.fields, jar);
      assert.equal(options.status, 200, await options.clone().text());
      assert.equal(options.headers.get('cache-control'), 'no-store');
      return post(form.action, { ...form.fields, response: JSON.stringify(authenticator.register((await options.json()) as never, tamper)) }, jar);
    }

    /** The ID token's amr and acr for a code of `level`'s client. */
    async function claimsOf(level: string, answer: Response): Promise<[unknown, unknown]> {
      assert.equal(answer.status, 303);
      const { client, clientSecret } = clients.get(level)!;
      const tokens = await postForm(`${server.url}/uas/oauth2/token`, { grant_type: 'authorization_code', code: redirectParams(answer).get('code')!, redirect_uri: client.redirectUris[0]! }, { authorization: basic(client.clientId, clientSecret) });
      assert.equal(tokens.status, 200, JSON.stringify(tokens.body));
      const claims = JSON.parse(Buffer.from(String(tokens.body.id_token).split('.')[1]!, 'base64url').toString()) as { amr: unknown; acr: unknown };
      return [claims.amr, claims.acr];
    }

    const kindsOf = async (user: User) => (await server.gatehouse.store.factors.list(user.id)).map((f) => [f.kind, f.backupEligible]);

    test('phr: only "Create a passkey" after the password; its registration gives amr ["pwd","hwk","mfa"] (a synced one ["pwd","swk","mfa"]); the passkey is the user\'s', async () => {
      const user = await createTestUser(server.gatehouse.store, { password: PASSWORD });
      const jar = new CookieJar();
      const html = await afterPassword('phr', user, jar);
      assert.deepEqual([/name="secret"/.test(html), /name="code"/.test(html), /name="password"/.test(html)], [false, false, false], 'no app, no code, no password');
      assert.match(html, /This application requires signing in with a passkey\./);
      assert.equal(passkeyForm(html).action, '/uas/oauth2/authorization/enrol/passkey');
      assert.equal(jar.cookies.has('gatehouse_session'), false, 'nothing started before the passkey');
      // The request names no acr value: the acr is the strongest configured level met (a device-bound passkey: phrh).
      const answer = await create(html, new SoftAuthenticator({ origin }), jar);
      assert.deepEqual(await claimsOf('phr', answer), [['pwd', 'hwk', 'mfa'], 'phrh']);
      assert.deepEqual(await kindsOf(user), [['passkey', false]]);
      // A synced one meets phr as well: amr ["pwd","swk","mfa"], acr phr.
      const other = await createTestUser(server.gatehouse.store, { password: PASSWORD });
      const otherJar = new CookieJar();
      assert.deepEqual(await claimsOf('phr', await create(await afterPassword('phr', other, otherJar), new SoftAuthenticator({ origin, synced: true }), otherJar)), [['pwd', 'swk', 'mfa'], 'phr']);
    });

    test('multi: the app and the passkey both offered; the passkey goes on with amr ["pwd","hwk","mfa"]', async () => {
      const user = await createTestUser(server.gatehouse.store, { password: PASSWORD });
      const jar = new CookieJar();
      const html = await afterPassword('multi', user, jar);
      assert.deepEqual([/name="secret"/.test(html), /name="code"/.test(html), /data-passkey="register"/.test(html)], [true, true, true]);
      assert.match(html, /Add an authenticator app or create a passkey now to continue\./);
      assert.deepEqual(await claimsOf('multi', await create(html, new SoftAuthenticator({ origin }), jar)), [['pwd', 'hwk', 'mfa'], 'phrh']);
    });

    test('phrh: a synced passkey is kept but the level stays unmet (the page says so, nothing issued); a device-bound one then goes on', async () => {
      const user = await createTestUser(server.gatehouse.store, { password: PASSWORD });
      const jar = new CookieJar();
      const html = await afterPassword('phrh', user, jar);
      assert.match(html, /requires a passkey that stays on one device/);
      const synced = await create(html, new SoftAuthenticator({ origin, synced: true }), jar);
      assert.equal(synced.status, 401);
      const again = await synced.text();
      assert.match(again, /role="alert"[^>]*>The passkey was added to your account, but it is synced between devices/);
      assert.deepEqual([synced.headers.get('location'), jar.cookies.has('gatehouse_session')], [null, false]);
      assert.deepEqual(await kindsOf(user), [['passkey', true]]);
      assert.deepEqual(await claimsOf('phrh', await create(again, new SoftAuthenticator({ origin }), jar)), [['pwd', 'hwk', 'mfa'], 'phrh']);
    });

    test('a refused registration stores nothing and shows the page again; a sign-in held for a second factor cannot enrol a passkey instead', async () => {
      const user = await createTestUser(server.gatehouse.store, { password: PASSWORD });
      const jar = new CookieJar();
      const html = await afterPassword('phr', user, jar);
      const wrong = await create(html, new SoftAuthenticator({ origin }), jar, { origin: 'https://evil.example' });
      assert.equal(wrong.status, 401);
      assert.match(await wrong.text(), /The passkey was not added/);
      assert.deepEqual(await kindsOf(user), []);

      // A user with an app, at multi: the password holds the sign-in for the app's code; the enrolment's routes know no such sign-in.
      const withApp = await createTestUser(server.gatehouse.store, { password: PASSWORD });
      await enrolTotp(server.gatehouse.store, withApp.id, clock.now());
      const appJar = new CookieJar();
      const codePage = await afterPassword('multi', withApp, appJar);
      const fields = Object.fromEntries(formFields(codePage));
      const options = await post('/uas/oauth2/authorization/enrol/passkey/options', fields, appJar);
      assert.deepEqual([options.status, await options.json()], [400, { error: 'sign_in_expired' }]);
      const forged = await post('/uas/oauth2/authorization/enrol/passkey', { ...fields, response: '{}' }, appJar);
      assert.deepEqual([forged.status, appJar.cookies.has('gatehouse_session')], [400, false], 'the login form again: nothing held for an enrolment');
      assert.deepEqual((await kindsOf(withApp)).map(([kind]) => kind), ['totp']);
    });
    test('a user with an app at phr: the password, the app\'s code, then a passkey to create; amr ["pwd","otp","mfa","hwk"]; from a multi session the same after a fresh sign-in; prompt=none is login_required', async () => {
      const user = await createTestUser(server.gatehouse.store, { password: PASSWORD });
      const secret = await enrolTotp(server.gatehouse.store, user.id, clock.now());
      const signIn = async (jar: CookieJar) => {
        const codePage = await afterPassword('phr', user, jar);
        assert.match(codePage, /autocomplete="one-time-code"/, 'the app first');
        assert.doesNotMatch(codePage, /data-passkey/, 'no passkey of theirs to use');
        const page = await post(formAction(codePage), { ...Object.fromEntries(formFields(codePage)), code: totpAt(secret, clock.now()) }, jar);
        assert.equal(page.status, 200);
        const html = await page.text();
        assert.deepEqual([/data-passkey="register"/.test(html), /name="secret"/.test(html), /name="code"/.test(html), jar.cookies.has('gatehouse_session')], [true, false, false, false]);
        return html;
      };
      const jar = new CookieJar();
      assert.deepEqual(await claimsOf('phr', await create(await signIn(jar), new SoftAuthenticator({ origin }), jar)), [['pwd', 'otp', 'mfa', 'hwk'], 'phrh']);

      // Another user with an app, signed in at multi: phr is out of reach of their factors, so a
      // silent request is login_required, and a page asks for everything again before the passkey.
      const other = await createTestUser(server.gatehouse.store, { password: PASSWORD });
      const otherSecret = await enrolTotp(server.gatehouse.store, other.id, clock.now());
      const session = new CookieJar();
      const codePage = await afterPassword('multi', other, session);
      assert.equal((await post(formAction(codePage), { ...Object.fromEntries(formFields(codePage)), code: totpAt(otherSecret, clock.now()) }, session)).status, 303);
      const { client } = clients.get('phr')!;
      const query = { client_id: client.clientId, redirect_uri: client.redirectUris[0]!, response_type: 'code', scope: 'openid', state: 'silent' };
      const silent = await browse(authorizationUrl(server.url, { ...query, prompt: 'none' }), session);
      assert.equal(redirectParams(silent).get('error'), 'login_required');
      const page = await (await browse(authorizationUrl(server.url, query), session)).text();
      assert.match(page, /name="password"/, 'a fresh sign-in first');
    });
  });
}
