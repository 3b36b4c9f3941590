/**
 * Passkeys over HTTP (issue 24; docs/second-factors.md "Passkeys", docs/authorization.md "Signing
 * in with a passkey"; decisions SA60–SA69), with a software authenticator (test/helpers/webauthn.ts)
 * against a real server: enrolment on the account security page, the passkey as the second step
 * after a password, the username-less sign-in and the amr each gives in the ID token; a replayed
 * challenge, another origin or RP ID, a counter that goes back, another user's credential or user
 * handle, a user who may not sign in, and malformed bodies are refused — 4xx, never a 5xx (the
 * test server fails close() on any 5xx).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Client } from '../../src/domain/client.ts';
import type { User } from '../../src/domain/user.ts';
import { ManualClock } from '../../src/lib/clock.ts';
import { hashSecret } from '../../src/lib/hash.ts';
import { AuditCapture } from '../helpers/audit.ts';
import { basic, postForm } from '../helpers/back-channel.ts';
import { DATABASES } from '../helpers/databases.ts';
import { enrolTotp } from '../helpers/factors.ts';
import { authorizationUrl, browse, CookieJar, createTestClient, createTestUser, formAction, formFields, loginThroughForm, redirectParams, submit } from '../helpers/fixtures.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';
import { FLAGS, passkeyForm, SoftAuthenticator } from '../helpers/webauthn.ts';

const PASSWORD = 'a password and a passkey';

type Json = Record<string, unknown> & { challenge: string };

for (const db of DATABASES) {
  describe(`passkeys on ${db.name}`, () => {
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

    const query = (extra: Record<string, string> = {}) => ({ client_id: client.clientId, redirect_uri: client.redirectUris[0]!, response_type: 'code', scope: 'openid', state: 'st', ...extra });
    const post = (path: string, form: Record<string, string> | [string, string][], jar: CookieJar) => submit(`${server.url}${path}`, form, jar, { origin: server.url });
    const fieldsOf = (html: string) => Object.fromEntries(formFields(html));

    async function optionsOf(form: { options: string; fields: Record<string, string> }, jar: CookieJar): Promise<Json> {
      const response = await post(form.options, form.fields, jar);
      assert.equal(response.status, 200, await response.clone().text());
      assert.equal(response.headers.get('cache-control'), 'no-store');
      return (await response.json()) as Json;
    }

    /** A user signed in on the account page with their password; the browser. */
    async function accountSession(user: User): Promise<CookieJar> {
      const jar = new CookieJar();
      const html = await (await browse(`${server.url}/uas/account/security`, jar)).text();
      const answer = await post(formAction(html), { ...fieldsOf(html), username: user.username, password: PASSWORD }, jar);
      assert.equal(answer.status, 303);
      return jar;
    }

    /** Enrols a passkey of `authenticator` for `user` on the account page; the page's answer. */
    async function enrol(user: User, authenticator: SoftAuthenticator, name = 'my laptop', jar?: CookieJar): Promise<{ status: number; html: string; options: Json }> {
      const browser = jar ?? (await accountSession(user));
      const form = passkeyForm(await (await browse(`${server.url}/uas/account/security`, browser)).text());
      const options = await optionsOf(form, browser);
      const answer = await post(form.action, { ...form.fields, name, response: JSON.stringify(authenticator.register(options as never)) }, browser);
      return { status: answer.status, html: await answer.text(), options };
    }

    async function aUserWithPasskey(options: { synced?: boolean; counting?: boolean } = {}): Promise<{ user: User; authenticator: SoftAuthenticator }> {
      const user = await createTestUser(server.gatehouse.store, { password: PASSWORD });
      const authenticator = new SoftAuthenticator({ origin, ...options });
      assert.equal((await enrol(user, authenticator)).status, 200);
      authenticatorOf.set(user.id, authenticator);
      return { user, authenticator };
    }

    /** The login page in a new browser, and its passkey form. */
    async function loginPage(extra: Record<string, string> = {}) {
      const jar = new CookieJar();
      const html = await (await browse(authorizationUrl(server.url, query(extra)), jar)).text();
      return { jar, html, form: passkeyForm(html) };
    }

    /** The ID token's amr for a code (the token endpoint, as the client would). */
    async function amrOf(code: string): Promise<unknown> {
      const tokens = await postForm(`${server.url}/uas/oauth2/token`, { grant_type: 'authorization_code', code, redirect_uri: client.redirectUris[0]! }, { authorization: basic(client.clientId, clientSecret) });
      assert.equal(tokens.status, 200, JSON.stringify(tokens.body));
      const payload = JSON.parse(Buffer.from(String(tokens.body.id_token).split('.')[1]!, 'base64url').toString()) as { amr?: unknown };
      return payload.amr;
    }

    test('enrolment on the account page: options for a discoverable credential with user verification, attestation none, ES256/EdDSA/RS256, a random user handle; the passkey is listed and audited', async () => {
      const user = await createTestUser(server.gatehouse.store, { password: PASSWORD });
      const authenticator = new SoftAuthenticator({ origin });
      const jar = await accountSession(user);
      audit.clear();
      const { status, html, options } = await enrol(user, authenticator, 'work laptop', jar);
      assert.equal(status, 200);
      assert.match(html, /The passkey was added/);
      assert.deepEqual((options.rp as { id: string }).id, new URL(server.issuer).hostname);
      assert.deepEqual(options.authenticatorSelection, { residentKey: 'required', requireResidentKey: true, userVerification: 'required' });
      assert.equal(options.attestation, 'none');
      assert.deepEqual((options.pubKeyCredParams as { alg: number }[]).map((p) => p.alg), [-7, -8, -257]);
      const handle = (options.user as { id: string }).id;
      assert.notEqual(Buffer.from(handle, 'base64url').toString(), user.id);
      assert.equal(Buffer.from(handle, 'base64url').length, 32);
      assert.equal(await server.gatehouse.store.factors.userOfHandle(handle), user.id);
      const factors = await server.gatehouse.store.factors.list(user.id);
      assert.deepEqual(factors.map((f) => [f.kind, f.name, f.backupEligible]), [['passkey', 'work laptop', false]]);
      assert.match(html, /<th scope="row">work laptop<\/th>\n<td>Passkey<\/td>/);
      assert.deepEqual(audit.all().filter((e) => e.event === 'factor.enrolled').map((e) => [e.event, 'kind' in e ? e.kind : undefined]), [['factor.enrolled', 'passkey']]);

      // A second enrolment excludes the first credential (no double registration of one authenticator).
      const again = await enrol(user, new SoftAuthenticator({ origin }), 'phone', jar);
      assert.deepEqual((again.options.excludeCredentials as { id: string }[]).map((c) => c.id), [authenticator.credentials.map((c) => c.id.toString('base64url'))[0]]);
    });

    test('enrolment refuses a replayed registration, another origin, another RP ID, no user verification; a bad name is a 400', async () => {
      const user = await createTestUser(server.gatehouse.store, { password: PASSWORD });
      const jar = await accountSession(user);
      const register = async (tamper: Parameters<SoftAuthenticator['register']>[1], name = 'key') => {
        const form = passkeyForm(await (await browse(`${server.url}/uas/account/security`, jar)).text());
        const options = await optionsOf(form, jar);
        const response = JSON.stringify(new SoftAuthenticator({ origin }).register(options as never, tamper));
        const answer = await post(form.action, { ...form.fields, name, response }, jar);
        return { answer, form, response };
      };
      const ok = await register({});
      assert.equal(ok.answer.status, 200);
      const replay = await post(ok.form.action, { ...ok.form.fields, name: 'again', response: ok.response }, jar);
      assert.equal(replay.status, 400);
      assert.match(await replay.text(), /The passkey was not added/);
      for (const tamper of [{ origin: 'https://evil.example' }, { rpId: 'evil.example' }, { flags: FLAGS.UP }, { type: 'webauthn.get' }]) {
        const { answer } = await register(tamper);
        assert.equal(answer.status, 400, JSON.stringify(tamper));
      }
      assert.equal((await register({}, 'x'.repeat(65))).answer.status, 400);
      assert.deepEqual((await server.gatehouse.store.factors.list(user.id)).length, 1);
    });

    test('username-less sign-in: the options allow any credential; the assertion names the user; a code whose ID token says amr ["hwk","mfa"]', async () => {
      const { user } = await aUserWithPasskey();
      // Another user's passkey exists too: the assertion alone says whose sign-in it is.
      await aUserWithPasskey();
      const mine = (await server.gatehouse.store.factors.passkeys(user.id))[0]!;
      const { jar, form } = await loginPage();
      const options = await optionsOf(form, jar);
      assert.deepEqual([options.allowCredentials, options.userVerification, options.rpId], [[], 'required', new URL(server.issuer).hostname]);
      // The user's own authenticator answers (the one enrolled for `user`).
      const own = authenticatorOf.get(user.id)!;
      audit.clear();
      const answer = await post(form.action, { ...form.fields, response: JSON.stringify(own.assert(options)) }, jar);
      assert.equal(answer.status, 303, await answer.clone().text());
      assert.deepEqual(
        audit.all().map((e) => e.event),
        ['factor.verified', 'login.succeeded'],
      );
      assert.deepEqual(await amrOf(redirectParams(answer).get('code')!), ['hwk', 'mfa']);
      const used = (await server.gatehouse.store.factors.passkeys(user.id))[0]!;
      assert.deepEqual([used.signCount, used.factor.lastUsedAt], [mine.signCount + 1, clock.now()]);
    });

    test('a synced passkey (backup-eligible) gives amr ["swk","mfa"]; one that keeps no counter (always 0) signs in again and again', async () => {
      const { user } = await aUserWithPasskey({ synced: true, counting: false });
      const own = authenticatorOf.get(user.id)!;
      for (let i = 0; i < 2; i += 1) {
        const { jar, form } = await loginPage();
        const answer = await post(form.action, { ...form.fields, response: JSON.stringify(own.assert(await optionsOf(form, jar))) }, jar);
        assert.equal(answer.status, 303);
        assert.deepEqual(await amrOf(redirectParams(answer).get('code')!), ['swk', 'mfa']);
      }
    });

    test('a replayed challenge, another origin or RP ID, no user verification, a counter that goes back, another user\'s handle: refused (401, the login page), no code', async () => {
      const { user } = await aUserWithPasskey();
      const { user: other } = await aUserWithPasskey();
      const own = authenticatorOf.get(user.id)!;
      const attempt = async (make: (options: Json) => Record<string, unknown>) => {
        const { jar, form } = await loginPage();
        const options = await optionsOf(form, jar);
        return { answer: await post(form.action, { ...form.fields, response: JSON.stringify(make(options)) }, jar), jar, form, options };
      };
      const first = await attempt((o) => own.assert(o));
      assert.equal(first.answer.status, 303);
      // The same response again: its challenge is used. Audited as a failure of the credential's owner.
      audit.clear();
      const replayed = await post(first.form.action, { ...first.form.fields, response: JSON.stringify(own.assert(first.options)) }, first.jar);
      assert.equal(replayed.status, 401);
      assert.match(await replayed.text(), /The passkey was not accepted/);
      assert.deepEqual(audit.all().map((e) => [e.event, 'userId' in e ? e.userId : undefined]), [['factor.failed', user.id]]);
      // The counter the server last accepted (the authenticator's own went on with the replay).
      const counter = (await server.gatehouse.store.factors.passkeys(user.id))[0]!.signCount;
      const otherHandle = authenticatorOf.get(other.id)!.credentials[0]!.userHandle;
      for (const tamper of [{ origin: 'https://evil.example' }, { rpId: 'evil.example' }, { flags: FLAGS.UP }, { counter }, { counter: counter - 1 }, { userHandle: otherHandle }, { type: 'webauthn.create' }]) {
        const { answer } = await attempt((o) => own.assert(o, tamper));
        assert.equal(answer.status, 401, JSON.stringify(tamper));
        assert.equal(answer.headers.get('location'), null);
      }
      // Refused ceremonies changed nothing: the next right one still signs in.
      assert.equal((await attempt((o) => own.assert(o))).answer.status, 303);
    });

    test('a challenge serves only the request it was made for', async () => {
      const { user } = await aUserWithPasskey();
      const own = authenticatorOf.get(user.id)!;
      const one = await loginPage({ state: 'one' });
      const options = await optionsOf(one.form, one.jar);
      const two = await loginPage({ state: 'two' });
      const answer = await post(two.form.action, { ...two.form.fields, response: JSON.stringify(own.assert(options)) }, two.jar);
      assert.equal(answer.status, 401);
    });

    test('a disabled user is refused as a password sign-in is', async () => {
      const { user } = await aUserWithPasskey();
      const own = authenticatorOf.get(user.id)!;
      const stored = (await server.gatehouse.store.users.get(user.id))!;
      await server.gatehouse.store.users.update({ ...stored, status: 'disabled' });
      const { jar, form } = await loginPage();
      audit.clear();
      const answer = await post(form.action, { ...form.fields, response: JSON.stringify(own.assert(await optionsOf(form, jar))) }, jar);
      assert.equal(answer.status, 401);
      assert.deepEqual(audit.all().map((e) => [e.event, 'reason' in e ? e.reason : undefined]), [['login.failed', 'not_enabled']]);
    });

    test('as the second factor after the password: the page offers the passkey only for a passkey-only user; its options allow only that user\'s credentials; amr ["pwd","hwk","mfa"]', async () => {
      const { user } = await aUserWithPasskey();
      const own = authenticatorOf.get(user.id)!;
      const jar = new CookieJar();
      const page = await loginThroughForm({ baseUrl: server.url, jar }, query(), { username: user.username, password: PASSWORD });
      assert.equal(page.status, 200);
      const html = await page.text();
      assert.doesNotMatch(html, /name="code"/, 'no code field for a user without a code factor');
      const form = passkeyForm(html);
      assert.equal(form.action, '/uas/oauth2/authorization/second-factor/passkey');
      const options = await optionsOf(form, jar);
      assert.deepEqual((options.allowCredentials as { id: string }[]).map((c) => c.id), [own.credentials[0]!.id.toString('base64url')]);
      const answer = await post(form.action, { ...form.fields, response: JSON.stringify(own.assert(options)) }, jar);
      assert.equal(answer.status, 303);
      assert.deepEqual(await amrOf(redirectParams(answer).get('code')!), ['pwd', 'hwk', 'mfa']);
    });

    test('the second factor refuses another user\'s credential, counts failures in the throttle, and offers codes beside the passkey to a user with both', async () => {
      const { user } = await aUserWithPasskey();
      await enrolTotp(server.gatehouse.store, user.id, clock.now());
      const { user: stranger } = await aUserWithPasskey();
      const theirs = authenticatorOf.get(stranger.id)!;
      const jar = new CookieJar();
      const html = await (await loginThroughForm({ baseUrl: server.url, jar }, query(), { username: user.username, password: PASSWORD })).text();
      assert.match(html, /name="code"/);
      const form = passkeyForm(html);
      audit.clear();
      for (let i = 1; i <= 4; i += 1) {
        const options = await optionsOf(form, jar);
        const answer = await post(form.action, { ...form.fields, response: JSON.stringify(theirs.assert(options, { credential: theirs.credentials[0]! })) }, jar);
        assert.equal(answer.status, 401);
      }
      const fifth = await post(form.action, { ...form.fields, response: JSON.stringify(theirs.assert(await optionsOf(form, jar), { credential: theirs.credentials[0]! })) }, jar);
      assert.deepEqual([fifth.status, fifth.headers.get('retry-after')], [429, '1']);
      assert.equal(audit.all().filter((e) => e.event === 'factor.failed').length, 5);
      assert.equal(jar.cookies.has('gatehouse_session'), false);
    });

    test('the device page asks for the passkey after the password as the login page does; the confirmation follows, the session\'s amr ["pwd","hwk","mfa"]', async () => {
      const { user } = await aUserWithPasskey();
      const own = authenticatorOf.get(user.id)!;
      const { client: tv } = await createTestClient(server.gatehouse.store, { name: 'TV', tokenEndpointAuthMethod: 'none', redirectUris: [], grantTypes: ['urn:ietf:params:oauth:grant-type:device_code'] });
      const issued = await postForm(`${server.url}/uas/oauth2/device_authorization`, { client_id: tv.clientId, scope: 'openid' });
      assert.equal(issued.status, 200);
      const jar = new CookieJar();
      const pageUrl = `${server.url}/uas/oauth2/device`;
      const entry = fieldsOf(await (await browse(pageUrl, jar)).text());
      const login = await (await submit(pageUrl, { csrf_token: entry.csrf_token!, user_code: String(issued.body.user_code) }, jar)).text();
      const second = await (await submit(`${server.url}${formAction(login)}`, { ...fieldsOf(login), username: user.username, password: PASSWORD }, jar)).text();
      assert.doesNotMatch(second, /name="code"/);
      const form = passkeyForm(second);
      assert.equal(form.action, '/uas/oauth2/device/second-factor/passkey');
      const options = await optionsOf(form, jar);
      const answer = await post(form.action, { ...form.fields, response: JSON.stringify(own.assert(options)) }, jar);
      assert.equal(answer.status, 200);
      assert.match(await answer.text(), /name="decision"/);
      const session = await server.gatehouse.store.sessions.findLive(hashSecret(jar.cookies.get('gatehouse_session')!), clock.now());
      assert.deepEqual(session?.amr, ['pwd', 'hwk', 'mfa']);
    });

    test('signing in to the account page: the password, then the passkey; the new session may change factors', async () => {
      const { user } = await aUserWithPasskey();
      const own = authenticatorOf.get(user.id)!;
      const jar = new CookieJar();
      const html = await (await browse(`${server.url}/uas/account/security`, jar)).text();
      const second = await (await post(formAction(html), { ...fieldsOf(html), username: user.username, password: PASSWORD }, jar)).text();
      const form = passkeyForm(second);
      assert.equal(form.action, '/uas/account/security/second-factor/passkey');
      const wrong = await post(form.action, { ...form.fields, response: JSON.stringify(own.assert(await optionsOf(form, jar), { origin: 'https://evil.example' })) }, jar);
      assert.equal(wrong.status, 401);
      const answer = await post(form.action, { ...form.fields, response: JSON.stringify(own.assert(await optionsOf(form, jar))) }, jar);
      assert.equal(answer.status, 303);
      const session = await server.gatehouse.store.sessions.findLive(hashSecret(jar.cookies.get('gatehouse_session')!), clock.now());
      assert.deepEqual(session?.amr, ['pwd', 'hwk', 'mfa']);
      assert.match(await (await browse(`${server.url}/uas/account/security`, jar)).text(), /Add a passkey/);
    });

    test('username-less options: at most GATEHOUSE_PASSKEY_SIGN_INS_PER_ADDRESS (600) per address and minute (each stores a challenge), then 429 with Retry-After; the next minute again', async () => {
      const PASSKEY_SIGN_INS_PER_MINUTE = server.config.passkeySignInsPerAddress;
      assert.equal(PASSKEY_SIGN_INS_PER_MINUTE, 600, 'the default');
      clock.advance(61_000);
      const { jar, form } = await loginPage();
      const statuses = new Map<number, number>();
      for (let i = 0; i <= PASSKEY_SIGN_INS_PER_MINUTE; i += 1) {
        const answer = await post(form.options, form.fields, jar);
        await answer.arrayBuffer();
        statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
        if (answer.status === 429) assert.equal(answer.headers.get('retry-after'), '60');
      }
      assert.deepEqual([...statuses], [
        [200, PASSKEY_SIGN_INS_PER_MINUTE],
        [429, 1],
      ]);
      clock.advance(60_000);
      assert.equal((await post(form.options, form.fields, jar)).status, 200);
    });

    test('malformed bodies: 400 (options without a request, a response that is not JSON or too long), 401 for JSON of the wrong shape; never a 5xx', async () => {
      const { jar, form } = await loginPage();
      assert.equal((await post(form.options, {}, jar)).status, 400);
      assert.equal((await post(form.options, { ...form.fields, csrf_token: 'x'.repeat(43) }, jar)).status, 403);
      assert.equal((await post('/uas/oauth2/authorization/second-factor/passkey/options', form.fields, jar)).status, 400, 'no held sign-in');
      for (const response of ['', 'not json', '{', 'x'.repeat(20_000)]) assert.equal((await post(form.action, { ...form.fields, response }, jar)).status, 400, response.slice(0, 20));
      const b64 = (text: string) => Buffer.from(text).toString('base64url');
      for (const value of [
        [],
        42,
        null,
        { id: 1 },
        { type: 'public-key', id: 'a', rawId: 'b', response: {} },
        { type: 'public-key', id: 'AAAA', rawId: 'AAAA', response: { clientDataJSON: '!!!', authenticatorData: 'AA', signature: 'AA' } },
        { type: 'public-key', id: 'AAAA', rawId: 'AAAA', response: { clientDataJSON: b64('not json'), authenticatorData: 'AA', signature: 'AA' } },
        { type: 'public-key', id: 'AAAA', rawId: 'AAAA', response: { clientDataJSON: b64(JSON.stringify({ challenge: 7 })), authenticatorData: 'AA', signature: 'AA' } },
        { type: 'public-key', id: 'AAAA', rawId: 'AAAA', response: { clientDataJSON: b64(JSON.stringify({ challenge: 'A'.repeat(43) })), authenticatorData: 'AA', signature: 'AA', userHandle: 5 } },
      ]) {
        const answer = await post(form.action, { ...form.fields, response: JSON.stringify(value) }, jar);
        assert.equal(answer.status, 401, JSON.stringify(value));
      }
      // The same on the account page's enrolment.
      const user = await createTestUser(server.gatehouse.store, { password: PASSWORD });
      const account = await accountSession(user);
      const enrolForm = passkeyForm(await (await browse(`${server.url}/uas/account/security`, account)).text());
      const options = await optionsOf(enrolForm, account);
      for (const response of ['', 'nope', JSON.stringify({ type: 'public-key', id: 'AAAA', rawId: 'AAAA', response: { clientDataJSON: b64(JSON.stringify({ challenge: options.challenge })), attestationObject: 'AAAA' } })]) {
        assert.equal((await post(enrolForm.action, { ...enrolForm.fields, name: 'k', response }, account)).status, 400);
      }
    });
  });
}

/** Each user's software authenticator, as enrolled by aUserWithPasskey. */
const authenticatorOf = new Map<string, SoftAuthenticator>();
