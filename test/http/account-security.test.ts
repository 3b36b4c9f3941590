/**
 * The account security page (issue 24 item 7; docs/second-factors.md, "Self-service"; decisions
 * SA50–SA55): a user signs in there by the login page's steps, lists their factors, adds an
 * authenticator app (the code computed by `otpauth` at the injected clock), makes recovery codes
 * (shown once, then each usable once at the login page), removes a factor; a change after the
 * recent-auth window needs the password (and the factor) again, which starts a new session; every
 * POST needs the CSRF token and the issuer's Origin; hostile input is a clear answer, never a 5xx
 * (the test server fails close() on any 5xx) and never touches another user.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Client } from '../../src/domain/client.ts';
import type { User } from '../../src/domain/user.ts';
import { ManualClock } from '../../src/lib/clock.ts';
import { AuditCapture } from '../helpers/audit.ts';
import { DATABASES } from '../helpers/databases.ts';
import { enrolTotp, giveRecoveryCodes, totpAt } from '../helpers/factors.ts';
import { browse, CookieJar, createTestClient, createTestUser, formAction, formFields, loginThroughForm, submit } from '../helpers/fixtures.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';

const PASSWORD = 'my own account, my own phone';

for (const db of DATABASES) {
  describe(`the account security page on ${db.name}`, () => {
    const clock = new ManualClock(Date.now());
    const audit = new AuditCapture();
    let server: RunningServer;
    let client: Client;
    const page = () => `${server.url}/uas/account/security`;

    before(async () => {
      server = await startServer(db, { clock, audit });
      ({ client } = await createTestClient(server.gatehouse.store));
    });
    after(async () => server.close());

    /** A form post as a browser on the page sends it: with the issuer's Origin. */
    const post = (path: string, form: Record<string, string> | [string, string][], jar: CookieJar, headers: Record<string, string> = { origin: server.url }) => submit(`${server.url}${path}`, form, jar, headers);
    const fieldsOf = (html: string) => Object.fromEntries(formFields(html));

    /** Signs `user` in on the page itself (password, then the TOTP code when they have one); the browser. */
    async function signedIn(user: User, secret?: string): Promise<CookieJar> {
      const jar = new CookieJar();
      const html = await (await browse(page(), jar)).text();
      const answer = await post(formAction(html), { ...fieldsOf(html), username: user.username, password: PASSWORD }, jar);
      if (secret === undefined) {
        assert.equal(answer.status, 303);
        return jar;
      }
      const codePage = await answer.text();
      const done = await post(formAction(codePage), { ...fieldsOf(codePage), code: totpAt(secret, clock.now()) }, jar);
      assert.equal(done.status, 303, 'a right code signs in');
      return jar;
    }

    async function overview(jar: CookieJar): Promise<string> {
      const response = await browse(page(), jar);
      assert.equal(response.status, 200);
      return response.text();
    }

    /** The form of the overview whose action ends with `suffix`, as the browser would post it. */
    function formOf(html: string, suffix: string, extra: Record<string, string> = {}): { action: string; fields: Record<string, string> } {
      const match = [...html.matchAll(/<form\b[^>]*\baction="([^"]*)"[^>]*>([\s\S]*?)<\/form>/g)].find((m) => m[1]!.endsWith(suffix));
      assert.ok(match, `a form posting to …${suffix}`);
      return { action: match[1]!, fields: { ...fieldsOf(match[2]!), ...extra } };
    }

    test('without a session: a sign-in form of its own, no-store, the strict CSP, same-origin referrer policy', async () => {
      const jar = new CookieJar();
      const response = await browse(page(), jar);
      assert.equal(response.status, 200);
      assert.equal(response.headers.get('cache-control'), 'no-store');
      assert.match(response.headers.get('content-security-policy') ?? '', /default-src 'none'/);
      assert.doesNotMatch(response.headers.get('content-security-policy') ?? '', /script-src/);
      assert.equal(response.headers.get('referrer-policy'), 'same-origin');
      const html = await response.text();
      assert.equal(formAction(html), '/uas/account/security/sign-in');
      assert.match(html, /name="password"/);
      assert.match(html, /<meta name="referrer" content="same-origin">/);
    });

    test('a wrong password: 401 and the form again; a right one: a session and the overview', async () => {
      const user = await createTestUser(server.gatehouse.store, { password: PASSWORD });
      const jar = new CookieJar();
      const html = await (await browse(page(), jar)).text();
      const wrong = await post(formAction(html), { ...fieldsOf(html), username: user.username, password: 'not it' }, jar);
      assert.equal(wrong.status, 401);
      assert.match(await wrong.text(), /aria-invalid="true"/);
      const signedInJar = await signedIn(user);
      const shown = await overview(signedInJar);
      assert.match(shown, /You have no second factor/);
      assert.ok(audit.of('login.succeeded').some((e) => e.userId === user.id && e.clientId === 'gatehouse:account'));
    });

    test('add an authenticator app: the QR code inline and the key as text; a wrong code refused; the right one stores the factor', async () => {
      const user = await createTestUser(server.gatehouse.store, { password: PASSWORD });
      const jar = await signedIn(user);
      const start = formOf(await overview(jar), '/totp');
      const started = await post(start.action, start.fields, jar);
      assert.equal(started.status, 200);
      const html = await started.text();
      assert.match(html, /<svg\b/);
      const fields = fieldsOf(html);
      assert.match(fields.secret!, /^[A-Z2-7]{32}$/);
      assert.match(html, new RegExp(fields.secret!.slice(0, 4)));

      const wrong = await post(formAction(html), { ...fields, code: '000000' === totpAt(fields.secret!, clock.now()) ? '111111' : '000000' }, jar);
      assert.equal(wrong.status, 400);
      const again = await wrong.text();
      assert.match(again, /That code does not match/);
      assert.equal(fieldsOf(again).secret, fields.secret, 'the same secret shown again');
      assert.deepEqual(await server.gatehouse.store.factors.list(user.id), []);

      const forgedSecret = await post(formAction(html), { ...fields, secret: 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP', code: totpAt('JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP', clock.now()) }, jar);
      assert.equal(forgedSecret.status, 400, 'a secret the server did not make is refused');
      assert.deepEqual(await server.gatehouse.store.factors.list(user.id), []);

      const right = await post(formAction(html), { ...fields, code: totpAt(fields.secret!, clock.now()) }, jar);
      assert.equal(right.status, 200);
      assert.match(await right.text(), /The authenticator app was added/);
      const factors = await server.gatehouse.store.factors.list(user.id);
      assert.deepEqual(factors.map((f) => f.kind), ['totp']);
      const enrolled = audit.of('factor.enrolled').find((e) => e.userId === user.id);
      assert.equal(enrolled?.kind, 'totp');
      assert.equal(enrolled?.actor, undefined, 'the user, for themselves');
      assert.doesNotMatch(JSON.stringify(audit.all()), new RegExp(fields.secret!));
    });

    test('the enrolment is bound to its session: another session of the same user cannot confirm it', async () => {
      const user = await createTestUser(server.gatehouse.store, { password: PASSWORD });
      const jar = await signedIn(user);
      const start = formOf(await overview(jar), '/totp');
      const html = await (await post(start.action, start.fields, jar)).text();
      const fields = fieldsOf(html);
      const other = await signedIn(user);
      const csrf = fieldsOf(await overview(other)).csrf_token!;
      const answer = await post(formAction(html), { ...fields, csrf_token: csrf, code: totpAt(fields.secret!, clock.now()) }, other);
      assert.equal(answer.status, 400);
      assert.match(await answer.text(), /The setup took too long/);
      assert.deepEqual(await server.gatehouse.store.factors.list(user.id), []);
    });

    test('new recovery codes: shown once, the old ones stop working, each new one works once at the login page', async () => {
      const user = await createTestUser(server.gatehouse.store, { password: PASSWORD });
      const secret = await enrolTotp(server.gatehouse.store, user.id, clock.now());
      const old = await giveRecoveryCodes(server.gatehouse.store, user.id, clock.now());
      const jar = await signedIn(user, secret);
      const form = formOf(await overview(jar), '/recovery-codes');
      const made = await post(form.action, form.fields, jar);
      assert.equal(made.status, 200);
      const html = await made.text();
      const codes = [...html.matchAll(/<li>([^<]+)<\/li>/g)].map((m) => m[1]!);
      assert.equal(codes.length, 10);
      assert.match(html, /Your earlier recovery codes no longer work/);
      const later = await overview(jar);
      for (const code of codes) assert.doesNotMatch(later, new RegExp(code), 'shown once only');
      assert.match(later, /<td>10<\/td>/, 'ten codes left');

      const query = { client_id: client.clientId, redirect_uri: client.redirectUris[0]!, response_type: 'code', scope: 'openid', state: 's' };
      const loginWith = async (code: string) => {
        const browser = new CookieJar();
        const codePage = await (await loginThroughForm({ baseUrl: server.url, jar: browser }, query, { username: user.username, password: PASSWORD })).text();
        return submit(`${server.url}${formAction(codePage)}`, { ...fieldsOf(codePage), code }, browser);
      };
      assert.equal((await loginWith(old[0]!)).status, 401, 'an old code no longer works');
      assert.equal((await loginWith(codes[0]!)).status, 303, 'a new code works');
      assert.equal((await loginWith(codes[0]!)).status, 401, 'once');
    });

    test('remove a factor: own factor removed and audited; an unknown id or another user\'s factor: 404, nothing removed', async () => {
      const user = await createTestUser(server.gatehouse.store, { password: PASSWORD });
      const secret = await enrolTotp(server.gatehouse.store, user.id, clock.now());
      await giveRecoveryCodes(server.gatehouse.store, user.id, clock.now());
      const someoneElse = await createTestUser(server.gatehouse.store, { password: PASSWORD });
      await enrolTotp(server.gatehouse.store, someoneElse.id, clock.now());
      const [theirs] = await server.gatehouse.store.factors.list(someoneElse.id);
      const jar = await signedIn(user, secret);
      const html = await overview(jar);
      const totp = (await server.gatehouse.store.factors.list(user.id)).find((f) => f.kind === 'totp');
      const form = formOf(html, '/remove');

      for (const factorId of [theirs!.id, 'no-such-factor', 'x'.repeat(4_000), '']) {
        const answer = await post(form.action, { ...form.fields, factor_id: factorId }, jar);
        assert.equal(answer.status, 404, `refused: ${factorId.slice(0, 20)}`);
      }
      assert.equal((await server.gatehouse.store.factors.list(someoneElse.id)).length, 1, 'never touched');
      assert.equal((await server.gatehouse.store.factors.list(user.id)).length, 2);

      const removed = await post(form.action, { ...form.fields, factor_id: totp!.id }, jar);
      assert.equal(removed.status, 200);
      assert.match(await removed.text(), /The second factor was removed/);
      assert.deepEqual((await server.gatehouse.store.factors.list(user.id)).map((f) => f.kind), ['recovery_codes']);
      const event = audit.of('factor.removed').find((e) => e.userId === user.id);
      assert.deepEqual([event?.factorId, event?.kind, event?.actor], [totp!.id, 'totp', undefined]);
    });

    test('rename a factor: the own factor renamed and audited; a bad name 400 and an unknown id or another user\'s factor 404, nothing renamed; a stale session signs in again first', async () => {
      const user = await createTestUser(server.gatehouse.store, { password: PASSWORD });
      const secret = await enrolTotp(server.gatehouse.store, user.id, clock.now());
      const someoneElse = await createTestUser(server.gatehouse.store, { password: PASSWORD });
      await enrolTotp(server.gatehouse.store, someoneElse.id, clock.now());
      const [theirs] = await server.gatehouse.store.factors.list(someoneElse.id);
      const [totp] = await server.gatehouse.store.factors.list(user.id);
      const jar = await signedIn(user, secret);
      const html = await overview(jar);
      assert.match(html, new RegExp(`<label for="name-${totp!.id}">New name for phone</label> <input id="name-${totp!.id}" name="name" type="text" maxlength="64" required value="phone"`));
      const form = formOf(html, '/rename');
      assert.deepEqual(Object.keys(form.fields).sort(), ['csrf_token', 'factor_id', 'name']);

      for (const [factorId, name, status] of [[theirs!.id, 'mine', 404], ['no-such-factor', 'mine', 404], [totp!.id, '', 400], [totp!.id, 'x'.repeat(65), 400], [totp!.id, 'new\nline', 400], [totp!.id, 'x'.repeat(4_000), 400]] as const) {
        const answer = await post(form.action, { ...form.fields, factor_id: factorId, name }, jar);
        assert.equal(answer.status, status, `${factorId.slice(0, 20)} ${name.slice(0, 20)}`);
        if (status === 400) assert.match(await answer.text(), /A name is 1 to 64 characters, without control characters\. Nothing was changed\./);
      }
      assert.deepEqual((await server.gatehouse.store.factors.list(someoneElse.id)).map((f) => f.name), ['phone'], 'never touched');
      audit.clear();
      const renamed = await post(form.action, { ...form.fields, factor_id: totp!.id, name: '  work phone ' }, jar);
      assert.equal(renamed.status, 200);
      assert.match(await renamed.text(), /The second factor was renamed\.[\s\S]*<th scope="row">work phone<\/th>/);
      assert.deepEqual((await server.gatehouse.store.factors.list(user.id)).map((f) => f.name), ['work phone']);
      assert.deepEqual(
        audit.of('factor.renamed').map((e) => [e.userId, e.factorId, e.kind, e.name, e.actor, e.ip]),
        [[user.id, totp!.id, 'totp', 'work phone', undefined, '127.0.0.1']],
      );

      clock.advance(301_000);
      const stale = await post(form.action, { ...form.fields, factor_id: totp!.id, name: 'late' }, jar);
      assert.equal(stale.status, 401);
      assert.match(await stale.text(), /confirm it is you/);
      assert.deepEqual((await server.gatehouse.store.factors.list(user.id)).map((f) => f.name), ['work phone']);
    });

    test('a stale session must sign in again (password and factor) before a change; that starts a new session', async () => {
      const user = await createTestUser(server.gatehouse.store, { password: PASSWORD });
      const secret = await enrolTotp(server.gatehouse.store, user.id, clock.now());
      const jar = await signedIn(user, secret);
      const form = formOf(await overview(jar), '/recovery-codes');
      clock.advance(301_000);
      const refused = await post(form.action, form.fields, jar);
      assert.equal(refused.status, 401);
      const html = await refused.text();
      assert.match(html, /confirm it is you/);
      assert.equal(formAction(html), '/uas/account/security/sign-in');
      assert.equal(audit.of('factor.enrolled').filter((e) => e.userId === user.id).length, 0, 'nothing made');

      const oldSession = jar.cookies.get('gatehouse_session');
      const reauth = formOf(html, '/sign-in', { password: PASSWORD, username: 'someone-else' });
      const codePage = await (await post(reauth.action, reauth.fields, jar)).text();
      assert.match(codePage, /name="code"/, 'the second factor too');
      clock.advance(30_000);
      const done = await post(formAction(codePage), { ...fieldsOf(codePage), code: totpAt(secret, clock.now()) }, jar);
      assert.equal(done.status, 303);
      assert.notEqual(jar.cookies.get('gatehouse_session'), oldSession, 'a new session');
      assert.equal(await browse(page(), new CookieJar(), { cookie: `gatehouse_session=${oldSession}` }).then((r) => r.text()).then((t) => /name="username"/.test(t)), true, 'the old session ended');

      const fresh = formOf(await overview(jar), '/recovery-codes');
      assert.equal((await post(fresh.action, fresh.fields, jar)).status, 200);
    });

    test('a sign-in held by this page completes no login of a client, and a login\'s held sign-in completes nothing here', async () => {
      const user = await createTestUser(server.gatehouse.store, { password: PASSWORD });
      const secret = await enrolTotp(server.gatehouse.store, user.id, clock.now());
      const here = new CookieJar();
      const signIn = await (await browse(page(), here)).text();
      const codePage = await (await post(formAction(signIn), { ...fieldsOf(signIn), username: user.username, password: PASSWORD }, here)).text();
      assert.match(codePage, /name="code"/);

      const query = { client_id: client.clientId, redirect_uri: client.redirectUris[0]!, response_type: 'code', scope: 'openid', state: 'held' };
      const there = new CookieJar();
      const loginCodePage = await (await loginThroughForm({ baseUrl: server.url, jar: there }, query, { username: user.username, password: PASSWORD })).text();
      // The login page's form, sent with this page's pending cookie (and CSRF cookie): the wrong binding.
      const swapped = new CookieJar();
      for (const [name, value] of here.cookies) swapped.cookies.set(name, value);
      const loginFields = { ...fieldsOf(loginCodePage), csrf_token: here.cookies.get('gatehouse_csrf')!, code: totpAt(secret, clock.now()) };
      const crossed = await submit(`${server.url}${formAction(loginCodePage)}`, loginFields, swapped);
      assert.equal(crossed.status, 400, 'the login page refuses a sign-in held by the account page');
      assert.equal(swapped.cookies.has('gatehouse_session'), false);

      // And the other way round: the login's pending cookie on this page's second factor.
      const other = new CookieJar();
      for (const [name, value] of there.cookies) other.cookies.set(name, value);
      clock.advance(30_000);
      const back = await post(formAction(codePage), { ...fieldsOf(codePage), csrf_token: there.cookies.get('gatehouse_csrf')!, code: totpAt(secret, clock.now()) }, other);
      assert.equal(back.status, 400);
      assert.match(await back.text(), /The sign-in took too long or was already completed/);
      assert.equal(other.cookies.has('gatehouse_session'), false);
    });

    test('CSRF: no token, a wrong token, a foreign Origin or none: 403 and nothing changes', async () => {
      const user = await createTestUser(server.gatehouse.store, { password: PASSWORD });
      const jar = await signedIn(user);
      const form = formOf(await overview(jar), '/recovery-codes');
      const attempts: [Record<string, string>, Record<string, string>][] = [
        [{}, { origin: server.url }],
        [{ csrf_token: 'A'.repeat(43) }, { origin: server.url }],
        [form.fields, { origin: 'https://evil.example' }],
        [form.fields, { origin: 'null' }],
        [form.fields, {}],
      ];
      for (const [fields, headers] of attempts) assert.equal((await post(form.action, fields, jar, headers)).status, 403);
      assert.deepEqual(await server.gatehouse.store.factors.list(user.id), []);
      // With the page's Referer instead of an Origin (an older browser): accepted.
      assert.equal((await post(form.action, form.fields, jar, { referer: page() })).status, 200);
    });

    test('hostile input: oversized or malformed fields are clear answers, never a 5xx', async () => {
      const user = await createTestUser(server.gatehouse.store, { password: PASSWORD });
      const jar = await signedIn(user);
      const start = formOf(await overview(jar), '/totp');
      const html = await (await post(start.action, start.fields, jar)).text();
      const fields = fieldsOf(html);
      const huge = '9'.repeat(4_000);
      assert.equal((await post(formAction(html), { ...fields, code: '9'.repeat(1_000_000) }, jar)).status, 413, 'past the body limit');
      assert.equal((await post(formAction(html), { ...fields, code: huge }, jar)).status, 400);
      assert.equal((await post(formAction(html), { ...fields, expires_at: huge, code: '123456' }, jar)).status, 400);
      assert.equal((await post(formAction(html), { ...fields, secret: huge, code: '123456' }, jar)).status, 400);
      assert.equal((await post(formAction(html), [...Object.entries(fields), ['code', '1'], ['code', '2']], jar)).status, 400);
      const anonymous = new CookieJar();
      const signIn = await (await browse(page(), anonymous)).text();
      assert.equal((await post(formAction(signIn), { ...fieldsOf(signIn), username: huge, password: huge }, anonymous)).status, 401);
      assert.equal((await post('/uas/account/security/second-factor', { ...fieldsOf(signIn), code: huge }, anonymous)).status, 400);
      assert.equal((await post('/uas/account/security/remove', { ...fieldsOf(signIn), factor_id: 'x' }, anonymous)).status, 401);
      assert.deepEqual(await server.gatehouse.store.factors.list(user.id), []);
    });
  });
}
