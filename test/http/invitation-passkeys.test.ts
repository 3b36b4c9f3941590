/**
 * Accepting an invitation with a passkey (issue 25 item 4; docs/invitations.md "With a passkey";
 * decisions AM100–AM104), over HTTP with the software authenticator (test/helpers/webauthn.ts), on
 * every database: the page's passkey form, its options (tied to the invitation and the account it
 * will make), the account made with the passkey and no password and signed in with the passkey's
 * amr, then a sign-in with that passkey alone. Expired, used and tampered links and attestations;
 * a challenge of one invitation answered on another; another origin; and many submissions of one
 * invitation at once, which make exactly one account. 4xx, never a 5xx (the test server fails
 * close() on any 5xx).
 */
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { Client } from '../../src/domain/client.ts';
import { ManualClock } from '../../src/lib/clock.ts';
import { hashSecret } from '../../src/lib/hash.ts';
import { AuditCapture } from '../helpers/audit.ts';
import { basic, postForm } from '../helpers/back-channel.ts';
import { DATABASES } from '../helpers/databases.ts';
import { authorizationUrl, browse, CookieJar, createTestClient, formAction, formFields, redirectParams, submit } from '../helpers/fixtures.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';
import { FLAGS, passkeyForm, SoftAuthenticator } from '../helpers/webauthn.ts';

type Json = Record<string, unknown> & { challenge: string; rp: { id: string }; user: { id: string; name: string; displayName: string } };
const HOUR = 3_600_000;

for (const db of DATABASES) {
  describe(`invitations accepted with a passkey on ${db.name}`, () => {
    const clock = new ManualClock(Date.now());
    const audit = new AuditCapture();
    let server: RunningServer;
    let client: Client;
    let clientSecret: string;
    let origin: string;

    before(async () => {
      server = await startServer(db, { clock, audit });
      ({ client, clientSecret } = await createTestClient(server.gatehouse.store));
      origin = new URL(server.issuer).origin;
    });
    after(async () => server.close());

    /** A pending invitation to a new address, as the administrators' acts write it; its link. */
    async function invitation(extra: { givenName?: string; familyName?: string } = {}): Promise<{ id: string; email: string; link: string; token: string }> {
      const token = randomBytes(32).toString('base64url');
      const id = randomUUID();
      const email = `invitee.${id.slice(0, 8)}@example.com`;
      const now = clock.now();
      await server.gatehouse.store.invitations.insert({
        id,
        tokenHash: hashSecret(token),
        email,
        givenName: extra.givenName,
        familyName: extra.familyName,
        organizationId: undefined,
        invitedBy: 'cli:test',
        locale: 'en',
        status: 'pending',
        createdAt: now,
        expiresAt: now + 24 * HOUR,
        endedAt: undefined,
        userId: undefined,
      });
      return { id, email, token, link: `${server.issuer}/account/invitation?token=${token}` };
    }

    const post = (path: string, form: Record<string, string>, jar: CookieJar, headers: Record<string, string> = { origin }) => submit(new URL(path, server.url).toString(), form, jar, headers);

    /** The invitation page in a new browser, and its passkey form. */
    async function page(link: string): Promise<{ jar: CookieJar; html: string; response: Response; form: ReturnType<typeof passkeyForm> }> {
      const jar = new CookieJar();
      const response = await browse(link, jar);
      assert.equal(response.status, 200);
      const html = await response.text();
      return { jar, html, response, form: passkeyForm(html) };
    }

    async function optionsOf(form: ReturnType<typeof passkeyForm>, jar: CookieJar): Promise<Json> {
      const answer = await post(form.options, form.fields, jar);
      assert.equal(answer.status, 200, await answer.clone().text());
      assert.equal(answer.headers.get('cache-control'), 'no-store');
      return (await answer.json()) as Json;
    }

    /** The ID token's amr for a code (the token endpoint, as the client would). */
    async function amrOf(code: string): Promise<unknown> {
      const tokens = await postForm(`${server.url}/uas/oauth2/token`, { grant_type: 'authorization_code', code, redirect_uri: client.redirectUris[0]! }, { authorization: basic(client.clientId, clientSecret) });
      assert.equal(tokens.status, 200, JSON.stringify(tokens.body));
      return (JSON.parse(Buffer.from(String(tokens.body.id_token).split('.')[1]!, 'base64url').toString()) as { amr?: unknown }).amr;
    }

    const query = (extra: Record<string, string> = {}) => ({ client_id: client.clientId, redirect_uri: client.redirectUris[0]!, response_type: 'code', scope: 'openid', state: 'st', ...extra });

    test('the passkey makes the account (no password, the address verified), signs the invitee in with amr ["hwk","mfa"]; that passkey alone signs in later', async () => {
      const invited = await invitation({ givenName: 'Ines', familyName: 'Invitee' });
      const { jar, response, form } = await page(invited.link);
      assert.deepEqual([response.headers.get('referrer-policy'), response.headers.get('cache-control')], ['no-referrer', 'no-store']);
      assert.match(response.headers.get('content-security-policy') ?? '', /script-src 'self'/);
      assert.deepEqual([form.action, form.options], ['/uas/account/invitation/passkey', '/uas/account/invitation/passkey/options']);
      assert.deepEqual(Object.keys(form.fields).sort(), ['csrf_token', 'response', 'token', 'ui_locales']);

      const options = await optionsOf(form, jar);
      assert.equal(options.rp.id, new URL(server.issuer).hostname);
      assert.deepEqual(options.authenticatorSelection, { residentKey: 'required', requireResidentKey: true, userVerification: 'required' });
      assert.deepEqual([options.user.name, options.user.displayName, options.attestation], [invited.email, 'Ines Invitee', 'none']);
      assert.equal(Buffer.from(options.user.id, 'base64url').length, 32);
      assert.equal(await server.gatehouse.store.users.getByUsername(invited.email), undefined, 'options make no account');

      const authenticator = new SoftAuthenticator({ origin });
      audit.clear();
      const answer = await post(form.action, { ...form.fields, response: JSON.stringify(authenticator.register(options)) }, jar);
      assert.equal(answer.status, 303, await answer.clone().text());
      assert.equal(answer.headers.get('location'), '/uas/account/security?ui_locales=en');

      const user = await server.gatehouse.store.users.getByUsername(invited.email);
      assert.ok(user);
      assert.deepEqual([user.username, user.email, user.emailVerified, user.givenName, user.familyName, user.status], [invited.email, invited.email, true, 'Ines', 'Invitee', 'enabled']);
      assert.equal((await server.gatehouse.store.users.getCredentials(invited.email))?.passwordHash, undefined, 'no password');
      assert.equal(await server.gatehouse.store.factors.userOfHandle(options.user.id), user.id, 'the handle the authenticator keeps names the account');
      assert.deepEqual((await server.gatehouse.store.factors.list(user.id)).map((f) => [f.kind, f.name]), [['passkey', 'Passkey']]);
      assert.deepEqual((await server.gatehouse.store.invitations.get(invited.id))?.status, 'accepted');
      assert.deepEqual((await server.gatehouse.store.invitations.get(invited.id))?.userId, user.id);
      assert.deepEqual(
        audit.all().map((e) => e.event),
        ['invitation.accepted', 'factor.enrolled', 'login.succeeded'],
      );

      // The session made by the acceptance is a passkey sign-in's: an authorization in this browser gives amr ["hwk","mfa"].
      const sso = await browse(authorizationUrl(server.url, query()), jar);
      assert.equal(sso.status, 302, 'signed in already: straight back to the client');
      assert.deepEqual(await amrOf(redirectParams(sso).get('code')!), ['hwk', 'mfa']);
      // The account page's password section, signed in, offers to set a password (there is none to change).
      const account = await browse(`${server.url}/uas/account/password`, jar);
      assert.equal(account.status, 200);
      const passwordSection = await account.text();
      assert.match(passwordSection, /<p id="password-intro">You have no password yet: you sign in with a passkey\. You can set a password here\.<\/p>/);
      assert.doesNotMatch(passwordSection, /id="current_password"/);

      // Later, in another browser: the passkey alone (username-less) signs in.
      const login = new CookieJar();
      const loginHtml = await (await browse(authorizationUrl(server.url, query()), login)).text();
      const signIn = passkeyForm(loginHtml);
      const assertion = authenticator.assert(await optionsOf(signIn, login));
      const signedIn = await post(signIn.action, { ...signIn.fields, response: JSON.stringify(assertion) }, login);
      assert.equal(signedIn.status, 303, await signedIn.clone().text());
      assert.deepEqual(await amrOf(redirectParams(signedIn).get('code')!), ['hwk', 'mfa']);

      // And the password form, for an account without a password, refuses as for a wrong one (401, never a 5xx).
      const other = new CookieJar();
      const html = await (await browse(authorizationUrl(server.url, query()), other)).text();
      const refused = await submit(new URL(formAction(html), server.url).toString(), { ...Object.fromEntries(formFields(html)), username: invited.email, password: 'any password at all' }, other);
      assert.equal(refused.status, 401);
    });

    test('a used link: the page, the options and the passkey POST answer 410', async () => {
      const invited = await invitation();
      const { jar, form } = await page(invited.link);
      const options = await optionsOf(form, jar);
      const second = await optionsOf(form, jar);
      assert.equal((await post(form.action, { ...form.fields, response: JSON.stringify(new SoftAuthenticator({ origin }).register(options)) }, jar)).status, 303);
      assert.equal((await browse(invited.link)).status, 410);
      assert.equal((await post(form.options, form.fields, jar)).status, 410);
      const again = await post(form.action, { ...form.fields, response: JSON.stringify(new SoftAuthenticator({ origin }).register(second)) }, jar);
      assert.equal(again.status, 410);
      assert.match(await again.text(), /can no longer be used/);
    });

    test('an expired link: the options and the passkey POST answer 410, and make nothing', async () => {
      const invited = await invitation();
      const { jar, form } = await page(invited.link);
      const options = await optionsOf(form, jar);
      clock.advance(24 * HOUR);
      assert.equal((await post(form.options, form.fields, jar)).status, 410);
      assert.equal((await post(form.action, { ...form.fields, response: JSON.stringify(new SoftAuthenticator({ origin }).register(options)) }, jar)).status, 410);
      assert.equal(await server.gatehouse.store.users.getByUsername(invited.email), undefined);
    });

    test('a tampered token is gone; a tampered attestation (origin, RP ID, no user verification, a get) or a malformed one is a 400 that spends nothing', async () => {
      const invited = await invitation();
      const { jar, form } = await page(invited.link);
      const tampered = { ...form.fields, token: `${invited.token.slice(0, -1)}${invited.token.endsWith('A') ? 'B' : 'A'}` };
      assert.equal((await post(form.options, tampered, jar)).status, 410);
      assert.equal((await post(form.action, { ...tampered, response: '{}' }, jar)).status, 410);
      for (const tamper of [{ origin: 'https://evil.example' }, { rpId: 'evil.example' }, { flags: FLAGS.UP }, { type: 'webauthn.get' }]) {
        const response = JSON.stringify(new SoftAuthenticator({ origin }).register(await optionsOf(form, jar), tamper));
        const answer = await post(form.action, { ...form.fields, response }, jar);
        assert.equal(answer.status, 400, JSON.stringify(tamper));
        assert.match(await answer.text(), /The passkey was not made/);
      }
      for (const response of ['', 'not json', '{"type":"public-key"}', JSON.stringify({ id: 'x', rawId: 'x', type: 'public-key', response: { clientDataJSON: 'e30', attestationObject: 'oA' } })]) {
        assert.equal((await post(form.action, { ...form.fields, response }, jar)).status, 400, response);
      }
      // A right one answered twice: the challenge serves one try.
      const ok = JSON.stringify(new SoftAuthenticator({ origin }).register(await optionsOf(form, jar)));
      assert.equal((await server.gatehouse.store.invitations.get(invited.id))?.status, 'pending', 'nothing spent so far');
      assert.equal((await post(form.action, { ...form.fields, response: ok }, jar)).status, 303);
    });

    test("a challenge made for one invitation is refused on another's link, which stays usable", async () => {
      const first = await invitation();
      const second = await invitation();
      const a = await page(first.link);
      const b = await page(second.link);
      const response = JSON.stringify(new SoftAuthenticator({ origin }).register(await optionsOf(a.form, a.jar)));
      const answer = await post(b.form.action, { ...b.form.fields, response }, b.jar);
      assert.equal(answer.status, 400);
      assert.equal(await server.gatehouse.store.users.getByUsername(second.email), undefined);
      assert.equal((await server.gatehouse.store.invitations.get(second.id))?.status, 'pending');
      // The answer is still good for the invitation it was made for (its challenge was not taken by the refusal).
      assert.equal((await post(a.form.action, { ...a.form.fields, response }, a.jar)).status, 303);
      assert.equal((await server.gatehouse.store.users.getByUsername(first.email))?.username, first.email);
    });

    test('another origin, by Origin or by Sec-Fetch-Site, and a missing CSRF token are refused (403), nothing made', async () => {
      const invited = await invitation();
      const { jar, form } = await page(invited.link);
      assert.equal((await post(form.options, form.fields, jar, { origin: 'https://evil.example' })).status, 403);
      assert.equal((await post(form.options, form.fields, jar, { 'sec-fetch-site': 'cross-site' })).status, 403);
      assert.equal((await post(form.options, { ...form.fields, csrf_token: '' }, jar)).status, 403);
      const response = JSON.stringify(new SoftAuthenticator({ origin }).register(await optionsOf(form, jar)));
      assert.equal((await post(form.action, { ...form.fields, response }, jar, { origin: 'https://evil.example' })).status, 403);
      assert.equal((await post(form.action, { ...form.fields, response }, jar, { 'sec-fetch-site': 'same-site' })).status, 403);
      // The browser's own POST from this no-referrer page: Origin null, Sec-Fetch-Site same-origin.
      assert.equal((await post(form.action, { ...form.fields, response }, jar, { origin: 'null', 'sec-fetch-site': 'same-origin' })).status, 303);
    });

    test('many submissions of one invitation at once, each with its own right passkey, make exactly one account', async () => {
      const invited = await invitation();
      const { jar, form } = await page(invited.link);
      const responses: string[] = [];
      for (let i = 0; i < 8; i += 1) responses.push(JSON.stringify(new SoftAuthenticator({ origin }).register(await optionsOf(form, jar))));
      audit.clear();
      const answers = await Promise.all(responses.map((response) => post(form.action, { ...form.fields, response }, jar)));
      assert.deepEqual(answers.map((a) => a.status).sort(), [303, 410, 410, 410, 410, 410, 410, 410]);
      const user = await server.gatehouse.store.users.getByUsername(invited.email);
      assert.ok(user);
      assert.equal((await server.gatehouse.store.factors.list(user.id)).length, 1);
      assert.deepEqual(audit.all().filter((e) => e.event === 'invitation.accepted').map((e) => ('userId' in e ? e.userId : undefined)), [user.id]);
    });
  });
}
