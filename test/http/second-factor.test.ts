/**
 * The login page's second-factor step (issue 24; docs/authorization.md, "The second factor";
 * decisions SA20–SA24): the pending sign-in serves only the request it was held for, expires after
 * 5 minutes, is used once even by racing right codes, and its cookie is HttpOnly, SameSite=Lax and
 * scoped to the issuer's path; the page keeps the CSRF rule, switches to a recovery code without
 * script, says nothing about factors to whoever does not know the password, and a right code goes
 * on as a password-only login does (consent for a third-party client).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Client } from '../../src/domain/client.ts';
import type { User } from '../../src/domain/user.ts';
import { hashSecret } from '../../src/lib/hash.ts';
import { ManualClock } from '../../src/lib/clock.ts';
import { AuditCapture } from '../helpers/audit.ts';
import { DATABASES } from '../helpers/databases.ts';
import { enrolTotp, giveRecoveryCodes, totpAt } from '../helpers/factors.ts';
import { CookieJar, createTestClient, createTestUser, formAction, formFields, loginThroughForm, redirectParams, submit } from '../helpers/fixtures.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';

const PASSWORD = 'a password and a phone';

for (const db of DATABASES) {
  describe(`the login page's second factor on ${db.name}`, () => {
    const clock = new ManualClock(Date.now());
    const audit = new AuditCapture();
    let server: RunningServer;
    let client: Client;

    before(async () => {
      server = await startServer(db, { clock, audit });
      ({ client } = await createTestClient(server.gatehouse.store));
    });
    after(async () => server.close());

    const query = (extra: Record<string, string> = {}) => ({ client_id: client.clientId, redirect_uri: client.redirectUris[0]!, response_type: 'code', scope: 'openid', state: 'one', ...extra });

    async function aUserWithTotp(): Promise<{ user: User; secret: string; codes: string[] }> {
      const user = await createTestUser(server.gatehouse.store, { password: PASSWORD });
      const secret = await enrolTotp(server.gatehouse.store, user.id, clock.now());
      const codes = await giveRecoveryCodes(server.gatehouse.store, user.id, clock.now());
      return { user, secret, codes };
    }

    /** The password step in a new browser: the second factor's page, its fields and the browser. */
    async function atSecondFactor(user: User, extra: Record<string, string> = {}) {
      const jar = new CookieJar();
      const response = await loginThroughForm({ baseUrl: server.url, jar }, query(extra), { username: user.username, password: PASSWORD });
      assert.equal(response.status, 200);
      const html = await response.text();
      return { jar, html, response, fields: Object.fromEntries(formFields(html)) };
    }

    const post = (html: string, form: Record<string, string>, jar: CookieJar) => submit(`${server.url}${formAction(html)}`, form, jar);

    test('the pending cookie: HttpOnly, SameSite=Lax, the issuer\'s path, 5 minutes; the store holds only its SHA-256; no session yet', async () => {
      const { user } = await aUserWithTotp();
      const { jar, html, response } = await atSecondFactor(user);
      const cookie = response.headers.getSetCookie().find((c) => c.startsWith('gatehouse_pending='))!;
      assert.match(cookie, /; Max-Age=300/);
      assert.match(cookie, /; Path=\/uas(;|$)/);
      assert.match(cookie, /; HttpOnly/);
      assert.match(cookie, /; SameSite=Lax/);
      assert.equal(jar.cookies.has('gatehouse_session'), false);
      const value = jar.cookies.get('gatehouse_pending')!;
      const held = await server.gatehouse.store.pendingSignIns.find(hashSecret(value), clock.now());
      assert.deepEqual([held?.userId, held?.amr, held?.clientId, held?.expiresAt], [user.id, ['pwd'], client.clientId, clock.now() + 300_000]);
      assert.equal(await server.gatehouse.store.pendingSignIns.find(value, clock.now()), undefined, 'not stored in the clear');
      assert.equal(formAction(html), '/uas/oauth2/authorization/second-factor');
    });

    test('the sign-in serves only its own request: another request with the same cookie is refused (400, the login form) and starts nothing', async () => {
      const { user, secret } = await aUserWithTotp();
      const { jar, html, fields } = await atSecondFactor(user);
      const other = await post(html, { ...fields, state: 'another', code: totpAt(secret, clock.now()) }, jar);
      assert.equal(other.status, 400);
      const page = await other.text();
      assert.match(page, /The sign-in took too long or was already completed/);
      assert.match(page, /name="password"/);
      assert.equal(jar.cookies.has('gatehouse_session'), false);
    });

    test('expired after 5 minutes: the right code then gets the login form again', async () => {
      const { user, secret } = await aUserWithTotp();
      const { jar, html, fields } = await atSecondFactor(user);
      clock.advance(300_000);
      const late = await post(html, { ...fields, code: totpAt(secret, clock.now()) }, jar);
      assert.equal(late.status, 400);
      assert.equal(jar.cookies.has('gatehouse_session'), false);
      assert.equal(jar.cookies.has('gatehouse_pending'), false, 'the browser forgets it');
    });

    test('the wrong code that makes the user wait is answered 429 with Retry-After, as the password\'s is (SA26); after the wait the right code signs in', async () => {
      const { user, secret } = await aUserWithTotp();
      const { jar, html, fields } = await atSecondFactor(user);
      for (let i = 1; i <= 4; i += 1) assert.equal((await post(html, { ...fields, code: `00000${i}` }, jar)).status, 401);
      audit.clear();
      const fifth = await post(html, { ...fields, code: '000005' }, jar);
      assert.deepEqual([fifth.status, fifth.headers.get('retry-after')], [429, '1']);
      assert.deepEqual(audit.all().map((e) => e.event).filter((e) => e.startsWith('factor.')), ['factor.failed'], 'the code was checked');
      assert.equal(jar.cookies.has('gatehouse_session'), false);
      clock.advance(1000);
      const ok = await post(html, { ...fields, code: totpAt(secret, clock.now()) }, jar);
      assert.equal(ok.status, 303, 'the sign-in still waited for its code');
    });

    test('a wrong CSRF token: 403 and the login form, nothing checked', async () => {
      const { user, secret } = await aUserWithTotp();
      const { jar, html, fields } = await atSecondFactor(user);
      audit.clear();
      const forged = await post(html, { ...fields, csrf_token: 'x'.repeat(43), code: totpAt(secret, clock.now()) }, jar);
      assert.equal(forged.status, 403);
      assert.deepEqual(audit.all().map((e) => e.event), []);
      // The sign-in still waits: the right code with the right token goes through.
      const ok = await post(html, { ...fields, code: totpAt(secret, clock.now()) }, jar);
      assert.equal(ok.status, 303);
      assert.ok(redirectParams(ok).get('code'));
    });

    test('"Use a recovery code instead" shows a text field without inputmode numeric and checks nothing; the recovery code then signs in', async () => {
      const { user, codes } = await aUserWithTotp();
      const { jar, html, fields } = await atSecondFactor(user);
      assert.match(html, /<button type="submit" name="switch" value="recovery"[^>]*formnovalidate/);
      audit.clear();
      const switched = await post(html, { ...fields, switch: 'recovery' }, jar);
      assert.equal(switched.status, 200);
      const recoveryHtml = await switched.text();
      assert.match(recoveryHtml, /<label for="code">Recovery code<\/label>/);
      assert.doesNotMatch(recoveryHtml, /inputmode="numeric"/);
      assert.deepEqual(audit.all().map((e) => e.event), [], 'switching checks no code');
      const ok = await post(recoveryHtml, { ...Object.fromEntries(formFields(recoveryHtml)), code: codes[3]!.toUpperCase() }, jar);
      assert.equal(ok.status, 303);
      const session = await server.gatehouse.store.sessions.findLive(hashSecret(jar.cookies.get('gatehouse_session')!), clock.now());
      assert.deepEqual(session?.amr, ['pwd', 'otp', 'mfa']);
    });

    test('a wrong password says nothing about factors: the same 401 as for a user without one, no pending cookie', async () => {
      const { user } = await aUserWithTotp();
      const plain = await createTestUser(server.gatehouse.store, { password: PASSWORD });
      const answers = [];
      for (const username of [user.username, plain.username]) {
        const jar = new CookieJar();
        const response = await loginThroughForm({ baseUrl: server.url, jar }, query(), { username, password: 'wrong' });
        answers.push([response.status, jar.cookies.has('gatehouse_pending'), /<p class="message"[^>]*>([^<]*)/.exec(await response.text())?.[1]]);
      }
      assert.deepEqual(answers[0], answers[1]);
      assert.equal(answers[0]![0], 401);
    });

    test('two right codes at once with one pending cookie (a TOTP code and a recovery code): one session, one code', async () => {
      for (let round = 0; round < 3; round++) {
        const { user, secret, codes } = await aUserWithTotp();
        const { jar, html, fields } = await atSecondFactor(user);
        // Both carry the one browser's cookies (read before either answer is stored).
        const [a, b] = await Promise.all([post(html, { ...fields, code: totpAt(secret, clock.now()) }, jar), post(html, { ...fields, code: codes[0]! }, jar)]);
        assert.deepEqual([a.status, b.status].sort(), [303, 400], `round ${round}`);
        assert.equal((await server.gatehouse.store.sessions.pageOfUser(user.id, clock.now(), { limit: 10 })).length, 1);
      }
    });

    test('after the code, a third-party client\'s consent page comes next, as after a password alone; the session already says pwd, otp, mfa', async () => {
      const { client: partner } = await createTestClient(server.gatehouse.store, { name: 'Partner', metadata: { consent_required: true } });
      const { user, secret } = await aUserWithTotp();
      const jar = new CookieJar();
      const asked = await loginThroughForm({ baseUrl: server.url, jar }, { ...query(), client_id: partner.clientId, redirect_uri: partner.redirectUris[0]! }, { username: user.username, password: PASSWORD });
      const html = await asked.text();
      const consent = await post(html, { ...Object.fromEntries(formFields(html)), code: totpAt(secret, clock.now()) }, jar);
      assert.equal(consent.status, 200);
      assert.match(await consent.text(), /<h1>Allow access\?<\/h1>/);
      const session = await server.gatehouse.store.sessions.findLive(hashSecret(jar.cookies.get('gatehouse_session')!), clock.now());
      assert.deepEqual(session?.amr, ['pwd', 'otp', 'mfa']);
    });

    test('a user with recovery codes only is asked for a recovery code first (no numeric keyboard); one signs in', async () => {
      const user = await createTestUser(server.gatehouse.store, { password: PASSWORD });
      const [code] = await giveRecoveryCodes(server.gatehouse.store, user.id, clock.now());
      const { jar, html, fields } = await atSecondFactor(user);
      assert.match(html, /<label for="code">Recovery code<\/label>/);
      assert.doesNotMatch(html, /inputmode="numeric"/);
      assert.equal(fields.method, 'recovery');
      assert.equal((await post(html, { ...fields, code: code! }, jar)).status, 303);
    });
  });
}
