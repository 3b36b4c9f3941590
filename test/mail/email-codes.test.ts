/**
 * E-mail one-time codes as a second factor, end to end, on every database (issue 25 item 5;
 * docs/second-factors.md, "E-mail codes"): real mail to a real SMTP server started here
 * (smtp-server), the code read from what arrived and typed as a browser would. The login page's
 * "Send a code by e-mail", the ID token's amr (exactly ['pwd', 'otp', 'mfa']), a code used once,
 * expired after GATEHOUSE_EMAIL_CODE_LIFETIME, wrong codes throttled as TOTP's are, sends budgeted
 * per hour, one code racing in many browsers signing in once, the device flow's and the account
 * page's second factor, and a server without SMTP saying so. The clock is injected.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { Client } from '../../src/domain/client.ts';
import type { User } from '../../src/domain/user.ts';
import { ManualClock } from '../../src/lib/clock.ts';
import { AuditCapture } from '../helpers/audit.ts';
import { basic, postForm } from '../helpers/back-channel.ts';
import { DATABASES } from '../helpers/databases.ts';
import { codeIn } from '../helpers/email-codes.ts';
import { enrolTotp } from '../helpers/factors.ts';
import { browse, CookieJar, createTestClient, createTestUser, formAction, formFields, loginThroughForm, redirectParams, submit } from '../helpers/fixtures.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';
import { startSmtpServer, type ReceivedMail, type TestSmtpServer } from '../helpers/smtp.ts';

const FROM = 'Gatehouse Test <sso@mail.example>';
const PASSWORD = 'a password and a mailbox';
const LIFETIME_SECONDS = 120;
const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

function mailEnv(smtp: TestSmtpServer, extra: Record<string, string> = {}): Record<string, string> {
  return { GATEHOUSE_SMTP_URL: smtp.url, GATEHOUSE_SMTP_STARTTLS: 'off', GATEHOUSE_MAIL_FROM: FROM, GATEHOUSE_SMTP_TIMEOUT: '5', GATEHOUSE_OUTBOX_INTERVAL: '0', GATEHOUSE_EMAIL_CODE_LIFETIME: String(LIFETIME_SECONDS), ...extra };
}

/** The fields of the page's form that holds `marker` (an input name or a button's name="…" value="…"), as a browser posts it. */
function formWith(html: string, marker: RegExp): { action: string; fields: [string, string][] } {
  const form = [...html.matchAll(/<form\b[\s\S]*?<\/form>/g)].map((m) => m[0]).find((f) => marker.test(f));
  assert.ok(form, `a form with ${marker}`);
  return { action: formAction(form), fields: formFields(form) };
}

for (const kind of DATABASES) {
  describe(`e-mail codes at sign-in on ${kind.name}`, () => {
    let smtp: TestSmtpServer;
    let server: RunningServer;
    let client: Client;
    let clientSecret: string;
    const clock = new ManualClock(Date.now());
    const audit = new AuditCapture();

    before(async () => {
      smtp = await startSmtpServer();
      server = await startServer(kind, { env: mailEnv(smtp), clock, audit });
      ({ client, clientSecret } = await createTestClient(server.gatehouse.store));
    });
    after(async () => {
      await server.close();
      await smtp.stop();
    });

    const query = () => ({ client_id: client.clientId, redirect_uri: client.redirectUris[0]!, response_type: 'code', scope: 'openid', state: 'one' });

    /** A user with an e-mail factor (stored as an enrolment leaves it) and, optionally, an authenticator app. */
    async function aUser(options: { totp?: boolean } = {}): Promise<User> {
      const user = await createTestUser(server.gatehouse.store, { password: PASSWORD, email: `${randomUUID().slice(0, 8)}@mail.example` });
      await server.gatehouse.store.factors.insertEmailFactor({ id: randomUUID(), userId: user.id, kind: 'email_otp', name: 'E-mail codes', createdAt: clock.now(), lastUsedAt: undefined, email: user.email! });
      if (options.totp === true) await enrolTotp(server.gatehouse.store, user.id, clock.now());
      return user;
    }

    /** The password step in a new browser: the second factor's page. */
    async function atSecondFactor(user: User) {
      const jar = new CookieJar();
      const response = await loginThroughForm({ baseUrl: server.url, jar }, query(), { username: user.username, password: PASSWORD });
      assert.equal(response.status, 200);
      return { jar, html: await response.text() };
    }

    /** Presses "Send a code by e-mail": the page that answers, and the mail that arrived (if any). */
    async function sendCode(html: string, jar: CookieJar): Promise<{ response: Response; page: string; mail: ReceivedMail | undefined }> {
      const before = smtp.received.length;
      const form = formWith(html, /name="send" value="email"/);
      const response = await submit(`${server.url}${form.action}`, [...form.fields, ['send', 'email']], jar);
      const page = await response.text();
      return { response, page, mail: smtp.received.slice(before).find((m) => m.to.length > 0) };
    }

    /** Types `code` in the page's code field. */
    async function typeCode(html: string, code: string, jar: CookieJar): Promise<Response> {
      const form = formWith(html, /name="code"/);
      return submit(`${server.url}${form.action}`, form.fields.map(([name, value]): [string, string] => [name, name === 'code' ? code : value]), jar);
    }

    async function idTokenClaims(response: Response): Promise<{ amr: string[]; sub: string }> {
      const code = redirectParams(response).get('code')!;
      const token = await postForm(`${server.url}/uas/oauth2/token`, { grant_type: 'authorization_code', code, redirect_uri: client.redirectUris[0]! }, { authorization: basic(client.clientId, clientSecret) });
      assert.equal(token.status, 200);
      return JSON.parse(Buffer.from((token.body.id_token as string).split('.')[1]!, 'base64url').toString()) as { amr: string[]; sub: string };
    }

    test('a user with only e-mail codes: the page offers "Send a code by e-mail" and sends nothing by itself; the code from the mail signs in with amr ["pwd", "otp", "mfa"]', async () => {
      const user = await aUser();
      const sentBefore = smtp.received.length;
      const { jar, html } = await atSecondFactor(user);
      assert.match(html, /<button type="submit" name="send" value="email" class="secondary">Send a code by e-mail<\/button>/);
      assert.match(html, /<label for="code">Code from the e-mail<\/label>/);
      assert.equal(smtp.received.length, sentBefore, 'nothing is sent until the user asks (AM96)');

      audit.clear();
      const { response, page, mail } = await sendCode(html, jar);
      assert.equal(response.status, 200);
      const masked = `${user.email![0]}***@mail.example`;
      // A notice, not an alert (AM107): styled as the account pages' notices and announced politely.
      assert.deepEqual(/<p class="([^"]*)" role="([^"]*)" id="code-message">We sent a code to ([^ ]*)\. It works once, for 2 minutes\./.exec(page)?.slice(1), ['notice', 'status', masked], 'the page says where the code went, masked');
      assert.ok(mail, 'the mail arrived');
      assert.deepEqual([mail.to, mail.subject], [[user.email], 'Your gatehouse sign-in code']);
      assert.deepEqual(audit.of('email_code.sent').map((e) => [e.userId, e.purpose]), [[user.id, 'sign_in']]);

      const signedIn = await typeCode(page, codeIn(mail).toLowerCase().replace('-', ' '), jar);
      assert.equal(signedIn.status, 303);
      const claims = await idTokenClaims(signedIn);
      assert.deepEqual(claims.amr, ['pwd', 'otp', 'mfa']);
      assert.deepEqual(audit.of('factor.verified').map((e) => [e.userId, e.kind]), [[user.id, 'email_otp']]);
      const [factor] = await server.gatehouse.store.factors.list(user.id);
      assert.equal(factor?.lastUsedAt, clock.now(), 'the factor records its last use');
    });

    test('a code works once: the same code in a new sign-in is refused', async () => {
      const user = await aUser();
      const first = await atSecondFactor(user);
      const { page, mail } = await sendCode(first.html, first.jar);
      const code = codeIn(mail!);
      assert.equal((await typeCode(page, code, first.jar)).status, 303);
      const second = await atSecondFactor(user);
      const again = await typeCode(second.html, code, second.jar);
      assert.equal(again.status, 401);
      // A refusal stays an alert (AM107: only the news that a code was sent is a notice).
      assert.match(await again.text(), /<p class="message" role="alert" id="code-message">That code is not valid, or it has already been used/);
    });

    test('a code expires after GATEHOUSE_EMAIL_CODE_LIFETIME; a new one then works', async () => {
      const user = await aUser();
      const { jar, html } = await atSecondFactor(user);
      const { page, mail } = await sendCode(html, jar);
      clock.advance(LIFETIME_SECONDS * 1000);
      assert.equal((await typeCode(page, codeIn(mail!), jar)).status, 401);
      const fresh = await sendCode(page, jar);
      assert.equal((await typeCode(fresh.page, codeIn(fresh.mail!), jar)).status, 303);
    });

    test('wrong codes are throttled as a TOTP code is (the same counters): the fifth failure waits, with Retry-After; the right code after the wait signs in', async () => {
      const user = await aUser({ totp: true });
      const { jar, html } = await atSecondFactor(user);
      // The page asks for the app's code first; the user switches to e-mail codes without script.
      const switched = await submit(`${server.url}${formWith(html, /name="code"/).action}`, [...formWith(html, /name="code"/).fields, ['switch', 'email']], jar);
      const emailPage = await switched.text();
      assert.match(emailPage, /Send a code by e-mail/);
      const { page, mail } = await sendCode(emailPage, jar);
      // Two wrong app codes and two wrong e-mail codes count together.
      assert.equal((await typeCode(page, '000001', jar)).status, 401);
      assert.equal((await typeCode(page, '000002', jar)).status, 401);
      assert.equal((await typeCode(page, 'AAAA-AAAA', jar)).status, 401);
      assert.equal((await typeCode(page, 'BBBB-BBBB', jar)).status, 401);
      const fifth = await typeCode(page, 'CCCC-CCCC', jar);
      assert.deepEqual([fifth.status, fifth.headers.get('retry-after')], [429, '1']);
      const waiting = await typeCode(page, codeIn(mail!), jar);
      assert.equal(waiting.status, 429, 'not checked while the user waits');
      clock.advance(1000);
      assert.equal((await typeCode(page, codeIn(mail!), jar)).status, 303, 'the code was not used up by the refused try');
    });

    test('sends are budgeted: the sixth in an hour is refused (429, Retry-After) and sends nothing; the next hour sends again', async () => {
      const user = await aUser();
      const { jar, html } = await atSecondFactor(user);
      let page = html;
      for (let i = 0; i < 5; i++) {
        const sent = await sendCode(page, jar);
        assert.equal(sent.response.status, 200);
        assert.ok(sent.mail);
        page = sent.page;
      }
      audit.clear();
      const refused = await sendCode(page, jar);
      assert.deepEqual([refused.response.status, refused.response.headers.get('retry-after'), refused.mail], [429, '3600', undefined]);
      assert.match(refused.page, /<p class="message" role="alert" id="code-message">Too many codes were sent\. Try again in/);
      assert.deepEqual(audit.of('email_code.refused').map((e) => [e.userId, e.reason]), [[user.id, 'throttled']]);
      clock.advance(3600_000);
      // The held sign-in expired meanwhile: sign in again, and a code goes.
      const again = await atSecondFactor(user);
      const sent = await sendCode(again.html, again.jar);
      assert.equal(sent.response.status, 200);
      assert.ok(sent.mail);
    });

    test('one code typed in 8 browsers at once signs in exactly one of them', async () => {
      const user = await aUser();
      const browsers = await Promise.all(Array.from({ length: 8 }, () => atSecondFactor(user)));
      const { page, mail } = await sendCode(browsers[0]!.html, browsers[0]!.jar);
      const code = codeIn(mail!);
      audit.clear();
      const answers = await Promise.all(browsers.map((b, i) => typeCode(i === 0 ? page : b.html, code, b.jar)));
      const statuses = answers.map((a) => a.status);
      assert.equal(statuses.filter((s) => s === 303).length, 1, String(statuses));
      assert.deepEqual(statuses.filter((s) => s !== 303 && s !== 401 && s !== 429), []);
      assert.equal(audit.of('factor.verified').length, 1);
    });

    test('without asking first, or for a user without an e-mail factor, nothing is sent; a forged send for another request gets the login form', async () => {
      const user = await createTestUser(server.gatehouse.store, { password: PASSWORD, email: 'no-factor@mail.example' });
      await enrolTotp(server.gatehouse.store, user.id, clock.now());
      const { jar, html } = await atSecondFactor(user);
      assert.doesNotMatch(html, /Send a code by e-mail/);
      const form = formWith(html, /name="code"/);
      const before = smtp.received.length;
      const forged = await submit(`${server.url}${form.action}`, [...form.fields, ['send', 'email']], jar);
      assert.equal(forged.status, 400);
      const other = await submit(`${server.url}${form.action}`, [...form.fields.map(([n, v]): [string, string] => [n, n === 'state' ? 'another' : v]), ['send', 'email']], jar);
      assert.equal(other.status, 400);
      assert.match(await other.text(), /name="password"/);
      assert.equal(smtp.received.length, before);
    });

    test("the device flow's second factor takes an e-mail code; the device gets tokens whose amr says so", async () => {
      const user = await aUser();
      const { client: tv } = await createTestClient(server.gatehouse.store, { name: 'TV', tokenEndpointAuthMethod: 'none', redirectUris: [], grantTypes: [DEVICE_GRANT] });
      const issued = await postForm(`${server.url}/uas/oauth2/device_authorization`, { client_id: tv.clientId, scope: 'openid' });
      assert.equal(issued.status, 200);
      const userCode = issued.body.user_code as string;
      const jar = new CookieJar();
      const entry = await (await browse(`${server.url}/uas/oauth2/device`, jar)).text();
      const login = await (await submit(`${server.url}/uas/oauth2/device`, { csrf_token: new Map(formFields(entry)).get('csrf_token')!, user_code: userCode }, jar)).text();
      const password = formWith(login, /name="password"/);
      const codePage = await submit(`${server.url}${password.action}`, password.fields.map(([n, v]): [string, string] => [n, n === 'username' ? user.username : n === 'password' ? PASSWORD : v]), jar);
      assert.equal(codePage.status, 200);
      const sent = await sendCode(await codePage.text(), jar);
      assert.equal(sent.response.status, 200);
      assert.deepEqual(sent.mail?.to, [user.email]);
      const confirm = await typeCode(sent.page, codeIn(sent.mail!), jar);
      assert.equal(confirm.status, 200);
      const confirmPage = await confirm.text();
      const approve = formWith(confirmPage, /name="decision"|value="approve"/);
      const done = await submit(`${server.url}${approve.action}`, [...approve.fields.filter(([n]) => n !== 'decision'), ['decision', 'approve']], jar);
      assert.equal(done.status, 200);
      const poll = await postForm(`${server.url}/uas/oauth2/token`, { grant_type: DEVICE_GRANT, device_code: issued.body.device_code as string, client_id: tv.clientId });
      assert.equal(poll.status, 200, JSON.stringify(poll.body));
      const claims = JSON.parse(Buffer.from((poll.body.id_token as string).split('.')[1]!, 'base64url').toString()) as { amr: string[] };
      assert.deepEqual(claims.amr, ['pwd', 'otp', 'mfa']);
    });

    test("the account page's own sign-in takes an e-mail code", async () => {
      const user = await aUser();
      const jar = new CookieJar();
      const page = await (await browse(`${server.url}/uas/account/security`, jar)).text();
      const signIn = formWith(page, /name="password"/);
      const origin = { origin: server.url };
      const codePage = await submit(`${server.url}${signIn.action}`, signIn.fields.map(([n, v]): [string, string] => [n, n === 'username' ? user.username : n === 'password' ? PASSWORD : v]), jar, origin);
      assert.equal(codePage.status, 200);
      const html = await codePage.text();
      const send = formWith(html, /name="send" value="email"/);
      const sentPage = await submit(`${server.url}${send.action}`, [...send.fields, ['send', 'email']], jar, origin);
      assert.equal(sentPage.status, 200);
      const mail = smtp.received.at(-1)!;
      assert.deepEqual(mail.to, [user.email]);
      const form = formWith(await sentPage.text(), /name="code"/);
      const done = await submit(`${server.url}${form.action}`, form.fields.map(([n, v]): [string, string] => [n, n === 'code' ? codeIn(mail) : v]), jar, origin);
      assert.equal(done.status, 303);
      const signedIn = await (await browse(`${server.url}/uas/account/security`, jar)).text();
      assert.match(signedIn, new RegExp(`Signed in as[\\s\\S]*${user.username}`));
    });
  });

  describe(`adding e-mail codes on the account page on ${kind.name}`, () => {
    let smtp: TestSmtpServer;
    let server: RunningServer;
    const clock = new ManualClock(Date.now());
    const audit = new AuditCapture();
    before(async () => {
      smtp = await startSmtpServer();
      server = await startServer(kind, { env: mailEnv(smtp), clock, audit });
    });
    after(async () => {
      await server.close();
      await smtp.stop();
    });

    /** A browser signed in to the account page with the password (the user has no second factor yet): the overview. */
    async function signedIn(user: User): Promise<{ jar: CookieJar; html: string; post: (html: string, marker: RegExp, values?: Record<string, string>) => Promise<Response> }> {
      const jar = new CookieJar();
      const origin = { origin: server.url };
      const post = (html: string, marker: RegExp, values: Record<string, string> = {}) => {
        const form = formWith(html, marker);
        return submit(`${server.url}${form.action}`, form.fields.map(([n, v]): [string, string] => [n, values[n] ?? v]), jar, origin);
      };
      const page = await (await browse(`${server.url}/uas/account/security`, jar)).text();
      const answer = await post(page, /name="password"/, { username: user.username, password: PASSWORD });
      assert.equal(answer.status, 303);
      return { jar, html: await (await browse(`${server.url}/uas/account/security`, jar)).text(), post };
    }

    test('"Add e-mail codes" mails a code to the profile\'s address; a wrong code adds nothing; the right one adds the factor, once', async () => {
      const user = await createTestUser(server.gatehouse.store, { password: PASSWORD, email: `${randomUUID().slice(0, 8)}@mail.example` });
      const { html, post } = await signedIn(user);
      assert.match(html, /<button type="submit" class="secondary">Add e-mail codes<\/button>/);
      audit.clear();
      const before = smtp.received.length;
      const asked = await post(html, /action="[^"]*\/account\/security\/email"/);
      assert.equal(asked.status, 200);
      const page = await asked.text();
      assert.ok(page.includes(`Get a sign-in code by e-mail at ${user.email} when you sign in.`));
      const mail = smtp.received.slice(before)[0]!;
      assert.deepEqual([mail.to, mail.subject], [[user.email], 'Your gatehouse code to add e-mail codes']);

      const wrong = await post(page, /name="code"/, { code: 'AAAA-AAAA' });
      assert.equal(wrong.status, 400);
      const again = await wrong.text();
      assert.match(again, /That code is not valid, or it has already been used/);
      assert.deepEqual(await server.gatehouse.store.factors.list(user.id), []);
      const added = await post(again, /name="code"/, { code: codeIn(mail) });
      assert.equal(added.status, 200);
      const overview = await added.text();
      assert.match(overview, /E-mail codes were added\./);
      assert.ok(overview.includes(`E-mail codes (${user.email})`));
      assert.doesNotMatch(overview, /Add e-mail codes<\/button>/, 'one e-mail factor per user');
      const factors = await server.gatehouse.store.factors.list(user.id);
      assert.deepEqual(factors.map((f) => [f.kind, f.name, f.email]), [['email_otp', 'E-mail codes', user.email]]);
      assert.deepEqual(audit.all().map((e) => e.event).filter((e) => e.startsWith('email_code.') || e === 'factor.enrolled'), ['email_code.sent', 'email_code.failed', 'email_code.used', 'factor.enrolled']);
      assert.equal((await post(again, /name="code"/, { code: codeIn(mail) })).status, 400, 'the code was used up');
    });

    test('two codes asked for, each confirmed 4 times at once: one factor, the others answered 400 or 409, never 5xx', async () => {
      const user = await createTestUser(server.gatehouse.store, { password: PASSWORD, email: `${randomUUID().slice(0, 8)}@mail.example` });
      const { html, post } = await signedIn(user);
      const before = smtp.received.length;
      const page = await (await post(html, /action="[^"]*\/account\/security\/email"/)).text();
      await post(html, /action="[^"]*\/account\/security\/email"/);
      const codes = smtp.received.slice(before).map(codeIn);
      assert.equal(codes.length, 2);
      const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => post(page, /name="code"/, { code: codes[i % 2]! })));
      const statuses = answers.map((a) => a.status);
      assert.equal(statuses.filter((s) => s === 200).length, 1, String(statuses));
      assert.deepEqual(statuses.filter((s) => s !== 200 && s !== 400 && s !== 409 && s !== 429), [], String(statuses));
      assert.equal((await server.gatehouse.store.factors.list(user.id)).length, 1);
    });

    test('a user without an e-mail address is told so, and nothing is sent', async () => {
      const user = await createTestUser(server.gatehouse.store, { password: PASSWORD, email: undefined });
      const { html, post } = await signedIn(user);
      const before = smtp.received.length;
      const answer = await post(html, /action="[^"]*\/account\/security\/email"/);
      assert.equal(answer.status, 400);
      assert.match(await answer.text(), /Your account has no e-mail address, so e-mail codes cannot be added\./);
      assert.equal(smtp.received.length, before);
    });
  });

  describe(`e-mail codes without SMTP on ${kind.name}`, () => {
    let server: RunningServer;
    before(async () => {
      server = await startServer(kind, {});
    });
    after(async () => server.close());

    test('the page says e-mail codes are unavailable, offers no send, and a forged send is refused (409) with the same words', async () => {
      const { client } = await createTestClient(server.gatehouse.store);
      const user = await createTestUser(server.gatehouse.store, { password: PASSWORD, email: 'off@mail.example' });
      await server.gatehouse.store.factors.insertEmailFactor({ id: randomUUID(), userId: user.id, kind: 'email_otp', name: 'E-mail codes', createdAt: Date.now(), lastUsedAt: undefined, email: user.email! });
      const jar = new CookieJar();
      const response = await loginThroughForm({ baseUrl: server.url, jar }, { client_id: client.clientId, redirect_uri: client.redirectUris[0]!, response_type: 'code', scope: 'openid' }, { username: user.username, password: PASSWORD });
      const html = await response.text();
      assert.match(html, /<p class="note" id="email-off">Codes by e-mail are not available here now: sign in another way\.<\/p>/);
      assert.doesNotMatch(html, /name="send"/);
      const form = formWith(html, /name="code"/);
      const forged = await submit(`${server.url}${form.action}`, [...form.fields, ['send', 'email']], jar);
      assert.equal(forged.status, 409);
      assert.match(await forged.text(), /Codes by e-mail are not available here now/);
    });
  });
}
