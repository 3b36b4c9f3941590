/**
 * E-mail verification, end to end, on every database (issue 25 item 3; docs/email-verification.md):
 * the profile page's "send a verification link" and "change the address", real mail to a real
 * SMTP server started here (smtp-server), and the link in what arrived followed as a browser
 * would. The `email_verified` claim exact in the ID token and at UserInfo before and after; a
 * changed address replaces the old one only when its link is followed; once only; expired; dead
 * after the address changes another way; the same link posted many times at once verifies once;
 * throttled per account and per recipient; off without mail, and saying so. The clock is
 * injected and the outbox sender's ticks are called.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { User } from '../../src/domain/user.ts';
import { ManualClock } from '../../src/lib/clock.ts';
import { actingAs } from '../helpers/administration.ts';
import { AwaitedAudit } from '../helpers/audit.ts';
import { runGatehouse } from '../helpers/cli.ts';
import { bootstrap } from '../helpers/console-browser.ts';
import { consoleSignIn } from '../helpers/console-signin.ts';
import { manageCall, manageTokens } from '../helpers/manage.ts';
import { addClient, basic, postForm, REDIRECT_URI } from '../helpers/back-channel.ts';
import { DATABASES } from '../helpers/databases.ts';
import { browse, CookieJar, createTestUser, formAction, formFields, loginThroughForm, submit } from '../helpers/fixtures.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';
import { startSmtpServer, type ReceivedMail, type TestSmtpServer } from '../helpers/smtp.ts';

const FROM = 'Gatehouse Test <sso@mail.example>';
const PASSWORD = 'correct horse battery';
const MINUTE = 60_000;
const RACERS = 12;
/** The UserInfo members of a token with scope `openid email` (OIDC Core §5.3.2), besides the scope claims. */
const USERINFO_KEYS = ['amr', 'aud', 'auth_time', 'email', 'email_verified', 'exp', 'iat', 'iss', 'session_index', 'sub'];

function mailEnv(smtp: TestSmtpServer, extra: Record<string, string> = {}): Record<string, string> {
  return { GATEHOUSE_SMTP_URL: smtp.url, GATEHOUSE_SMTP_STARTTLS: 'off', GATEHOUSE_MAIL_FROM: FROM, GATEHOUSE_SMTP_TIMEOUT: '5', GATEHOUSE_OUTBOX_INTERVAL: '0', ...extra };
}

/** The text part's link (quoted-printable undone: soft line breaks and =XX). */
function linkIn(mail: ReceivedMail): string {
  const decoded = mail.raw.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_whole, hex: string) => String.fromCharCode(parseInt(hex, 16)));
  const link = /(https?:\/\/[^\s<>"]+\/account\/verify-email\?token=[A-Za-z0-9_-]{43})/.exec(decoded)?.[1];
  assert.ok(link, 'the mail carries a verification link');
  return link;
}

function payloadOf(jwt: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString('utf8')) as Record<string, unknown>;
}

for (const kind of DATABASES) {
  describe(`e-mail verification on ${kind.name}`, () => {
    let smtp: TestSmtpServer;
    before(async () => {
      smtp = await startSmtpServer();
    });
    after(async () => smtp.stop());

    async function setUp(env: Record<string, string> = mailEnv(smtp)) {
      const clock = new ManualClock();
      const audit = new AwaitedAudit();
      const server = await startServer(kind, { env, clock, audit });
      smtp.received.length = 0;
      const profileUrl = `${server.url}/uas/account/profile`;
      const origin = { origin: new URL(server.url).origin };
      /** The profile page of a signed-in browser. */
      async function profile(jar: CookieJar): Promise<string> {
        const page = await browse(profileUrl, jar);
        assert.equal(page.status, 200);
        assert.equal(page.headers.get('referrer-policy'), 'same-origin');
        const html = await page.text();
        // The meta agrees with the header: under no-referrer a browser posts `Origin: null` (seen in Chromium, test/e2e).
        assert.match(html, /<meta name="referrer" content="same-origin">/);
        return html;
      }
      /** Posts one of the profile page's forms (by its action's end), as the browser would: CSRF token and Origin. */
      async function post(jar: CookieJar, action: 'send-link' | 'change-email' | 'names', fields: Record<string, string> = {}): Promise<Response> {
        const html = await profile(jar);
        const csrf = /name="csrf_token" value="([^"]+)"/.exec(html)?.[1];
        assert.ok(csrf);
        return submit(`${profileUrl}/${action}`, { csrf_token: csrf, ...fields }, jar, origin);
      }
      /** Sends the outbox: the mail that arrived since the last call. */
      async function mailed(): Promise<ReceivedMail[]> {
        await server.gatehouse.outbox.sender.tick();
        const mails = [...smtp.received];
        smtp.received.length = 0;
        return mails;
      }
      /** Follows a link: the page, then its button. */
      async function follow(link: string, jar = new CookieJar()): Promise<{ page: Response; result?: Response }> {
        const page = await browse(link, jar);
        if (page.status !== 200) return { page };
        const html = await page.text();
        return { page, result: await submit(new URL(formAction(html), server.url).toString(), formFields(html), jar) };
      }
      return { clock, audit, server, profile, post, mailed, follow };
    }

    async function addUser(server: RunningServer, overrides: Partial<User> = {}): Promise<User> {
      return createTestUser(server.gatehouse.store, { password: PASSWORD, email: `${overrides.username ?? 'u'}@example.com`, ...overrides });
    }

    /** Signs in through the login form with scope `openid email`: the browser's jar, the ID token's claims and UserInfo's. */
    async function signIn(server: RunningServer, user: User) {
      const { client, secret } = await addClient(server.gatehouse.store, { metadata: { id_token_scope_claims: true } });
      const jar = new CookieJar();
      const response = await loginThroughForm({ baseUrl: server.url, jar }, { response_type: 'code', client_id: client.clientId, redirect_uri: REDIRECT_URI, scope: 'openid email', state: 's' }, { username: user.username, password: PASSWORD });
      assert.equal(response.status, 303);
      const code = new URL(response.headers.get('location')!).searchParams.get('code')!;
      const tokens = await postForm(`${server.url}/uas/oauth2/token`, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI }, { authorization: basic(client.clientId, secret) });
      assert.equal(tokens.status, 200, JSON.stringify(tokens.body));
      const userinfo = (await (await fetch(`${server.url}/uas/oauth2/userinfo`, { headers: { authorization: `Bearer ${tokens.body.access_token as string}` } })).json()) as Record<string, unknown>;
      return { jar, idToken: payloadOf(tokens.body.id_token as string), userinfo };
    }

    /** The claims say exactly this address and state, in the ID token and at UserInfo. */
    async function assertClaims(server: RunningServer, user: User, email: string, verified: boolean): Promise<CookieJar> {
      const { jar, idToken, userinfo } = await signIn(server, user);
      assert.deepEqual(Object.keys(userinfo).sort(), USERINFO_KEYS);
      assert.deepEqual([userinfo.email, userinfo.email_verified], [email, verified], 'UserInfo');
      assert.deepEqual([idToken.email, idToken.email_verified], [email, verified], 'ID token');
      return jar;
    }

    test('the own address: unverified until the link in the mail is followed; the GET consumes nothing; once only; claims exact before and after', async () => {
      const { server, audit, profile, post, mailed, follow } = await setUp();
      try {
        const user = await addUser(server, { username: 'vera' });
        const jar = await assertClaims(server, user, 'vera@example.com', false);
        assert.match(await profile(jar), /<strong id="email-address">vera@example.com<\/strong> — <span id="email-state">Not verified<\/span>/);

        const sent = await post(jar, 'send-link');
        assert.deepEqual([sent.status, sent.headers.get('location')], [303, '/uas/account/profile?done=sent']);
        const [mail, ...others] = await mailed();
        assert.deepEqual(others, []);
        assert.deepEqual([mail!.to, mail!.subject], [['vera@example.com'], 'Confirm your e-mail address for gatehouse']);
        const link = linkIn(mail!);
        assert.ok(link.startsWith(`${server.issuer}/account/verify-email?token=`), link);

        const prefetch = await browse(link);
        assert.deepEqual([prefetch.status, prefetch.headers.get('referrer-policy'), prefetch.headers.get('cache-control')], [200, 'no-referrer', 'no-store']);
        assert.equal((await server.gatehouse.store.users.getProfile(user.id))?.emailVerified, false, 'a prefetch verifies nothing');
        const { result } = await follow(link);
        assert.equal(result?.status, 200);
        assert.match(await result!.text(), /Your e-mail address vera@example.com is now verified/);
        assert.deepEqual(audit.of('email_verification.verified').map((e) => [e.userId, e.changed]), [[user.id, false]]);
        assert.match(await profile(jar), /<span id="email-state">Verified<\/span>/);
        await assertClaims(server, user, 'vera@example.com', true);

        const again = await follow(link);
        assert.equal(again.page.status, 410, 'the link works once');
        assert.match(await again.page.text(), /can no longer be used/);
        const refused = await post(jar, 'send-link');
        assert.equal(refused.status, 400, 'nothing left to verify');
        assert.match(await refused.text(), /is verified already/);
      } finally {
        await server.close();
      }
    });

    test('a changed address is verified before it replaces the old one; until then the old one stays, the new one pending', async () => {
      const { server, audit, profile, post, mailed, follow } = await setUp();
      try {
        const user = await addUser(server, { username: 'carl', emailVerified: true });
        const jar = await assertClaims(server, user, 'carl@example.com', true);
        assert.equal((await post(jar, 'change-email', { new_email: 'carl@new.example' })).status, 303);
        const [mail] = await mailed();
        assert.deepEqual(mail!.to, ['carl@new.example'], 'the link goes to the new address');
        const page = await profile(jar);
        assert.match(page, /<strong id="email-address">carl@example.com<\/strong> — <span id="email-state">Verified<\/span>/);
        assert.match(page, /<p class="notice" id="email-pending">Waiting for verification: carl@new.example\./);
        await assertClaims(server, user, 'carl@example.com', true);

        // A reset link mailed to the old address before the change (AM120: it dies with the change).
        const store = server.gatehouse.store;
        await store.passwordResets.insert({ tokenHash: 'h'.repeat(43), userId: user.id, passwordFingerprint: 'f', createdAt: Date.now(), expiresAt: Date.now() + 3_600_000 });
        const { result } = await follow(linkIn(mail!));
        assert.equal(result?.status, 200);
        const after = await store.users.getProfile(user.id);
        assert.deepEqual([after?.email, after?.emailVerified], ['carl@new.example', true]);
        assert.deepEqual(audit.of('email_verification.verified').map((e) => [e.userId, e.changed]), [[user.id, true]]);
        assert.equal(await store.passwordResets.deleteOfUser(user.id), 0, 'the pending reset link was deleted with the change');
        // The old address is told, once.
        const notices = await mailed();
        assert.deepEqual(notices.map((m) => [m.to, m.subject]), [[['carl@example.com'], 'The e-mail address of your gatehouse account was changed']]);
        assert.match(notices[0]!.raw.replace(/=\r?\n/g, ''), /from this address to carl@new\.example/);
        assert.doesNotMatch(await profile(jar), /email-pending/);
        await assertClaims(server, user, 'carl@new.example', true);

        for (const bad of ['not-an-address', 'carl@new.example']) {
          const refused = await post(jar, 'change-email', { new_email: bad });
          assert.equal(refused.status, 400, bad);
          assert.match(await refused.text(), /aria-invalid="true"/);
        }
        assert.deepEqual(await mailed(), []);
      } finally {
        await server.close();
      }
    });

    test('changing the address needs a recent sign-in: a stale session gets the sign-in form (401), nothing is sent; signed in again, it works', async () => {
      const { server, clock, post, mailed } = await setUp();
      try {
        const user = await addUser(server, { username: 'dora', emailVerified: true });
        const { jar } = await signIn(server, user);
        clock.advance(301_000);
        const stale = await post(jar, 'change-email', { new_email: 'thief@evil.example' });
        assert.equal(stale.status, 401);
        const html = await stale.text();
        assert.equal(/<p[^>]*role="alert"[^>]*>([^<]*)</.exec(html)?.[1], 'To change your e-mail address, confirm it is you: sign in again.');
        assert.equal(formAction(html), '/uas/account/security/sign-in');
        assert.deepEqual(await mailed(), [], 'no link was sent');
        assert.equal((await post(jar, 'send-link')).status, 400, 'a link to the own address needs no fresh sign-in (already verified here)');
        const fresh = await signIn(server, user);
        assert.equal((await post(fresh.jar, 'change-email', { new_email: 'dora@new.example' })).status, 303);
        assert.deepEqual((await mailed()).map((m) => m.to), [['dora@new.example']]);
      } finally {
        await server.close();
      }
    });

    test('an expired link is refused, on the page and on its POST; a link dies when the address changes another way', async () => {
      const { server, clock, post, mailed, follow } = await setUp(mailEnv(smtp, { GATEHOUSE_EMAIL_VERIFICATION_LIFETIME: '1800' }));
      try {
        const user = await addUser(server, { username: 'ella' });
        const { jar } = await signIn(server, user);
        await post(jar, 'send-link');
        const link = linkIn((await mailed())[0]!);
        const page = await browse(link);
        assert.equal(page.status, 200);
        const html = await page.text();
        clock.advance(30 * MINUTE);
        assert.equal((await submit(new URL(formAction(html), server.url).toString(), formFields(html))).status, 410);
        assert.equal((await follow(link)).page.status, 410);

        // Thirty minutes on, the change needs a fresh sign-in (AM120).
        assert.equal((await post((await signIn(server, user)).jar, 'change-email', { new_email: 'ella@other.example' })).status, 303);
        const change = linkIn((await mailed())[0]!);
        await server.gatehouse.deps.admin.users.update(actingAs(), user.id, { email: 'ella@admin.example' });
        assert.equal((await follow(change)).page.status, 410, 'sent under the old address');
        const now = await server.gatehouse.store.users.getProfile(user.id);
        assert.deepEqual([now?.email, now?.emailVerified], ['ella@admin.example', false]);
      } finally {
        await server.close();
      }
    });

    test(`${RACERS} posts of one link at once verify once: one page says done, the others that it is spent`, async () => {
      const { server, audit, post, mailed } = await setUp();
      try {
        const user = await addUser(server, { username: 'rory' });
        const { jar } = await signIn(server, user);
        await post(jar, 'send-link');
        const link = linkIn((await mailed())[0]!);
        const browser = new CookieJar();
        const html = await (await browse(link, browser)).text();
        const results = await Promise.all(Array.from({ length: RACERS }, () => submit(new URL(formAction(html), server.url).toString(), formFields(html), browser)));
        assert.deepEqual(results.map((r) => r.status).sort(), [200, ...Array.from({ length: RACERS - 1 }, () => 410)]);
        assert.equal(audit.of('email_verification.verified').length, 1);
      } finally {
        await server.close();
      }
    });

    test('throttled per account and per recipient address: refused with Retry-After, nothing sent', async () => {
      const { server, audit, post, mailed } = await setUp(mailEnv(smtp, { GATEHOUSE_EMAIL_VERIFICATIONS_PER_ACCOUNT: '2', GATEHOUSE_EMAIL_VERIFICATIONS_PER_RECIPIENT: '3' }));
      try {
        const user = await addUser(server, { username: 'tina' });
        const { jar } = await signIn(server, user);
        const statuses = [];
        for (let i = 0; i < 3; i++) statuses.push((await post(jar, 'send-link')).status);
        assert.deepEqual(statuses, [303, 303, 429]);
        assert.equal((await mailed()).length, 2);
        // Three other accounts ask to change to one victim's address: the third is refused.
        const victim = 'victim@example.com';
        const others = [];
        for (const name of ['o1', 'o2', 'o3', 'o4']) others.push((await post((await signIn(server, await addUser(server, { username: name }))).jar, 'change-email', { new_email: victim })).status);
        assert.deepEqual(others, [303, 303, 303, 429]);
        const refused = await post(jar, 'send-link');
        assert.equal(refused.headers.get('retry-after'), '3600');
        assert.equal((await mailed()).length, 3);
        assert.deepEqual(audit.of('email_verification.not_sent').map((e) => e.reason), ['throttled', 'throttled', 'throttled']);
      } finally {
        await server.close();
      }
    });

    test('administrators send a link (management API, CLI, console) and mark an address verified; refused clearly when there is nothing to verify', { timeout: 180_000 }, async () => {
      const { server, audit, mailed, follow } = await setUp();
      try {
        const user = await addUser(server, { username: 'adam' });
        const tokens = await manageTokens(server);
        const sent = await manageCall(server, 'POST', `/users/${user.id}/email-verification`, { token: tokens.admin, body: { locale: 'sv' } });
        assert.equal(sent.status, 202, JSON.stringify(sent.json));
        assert.equal(sent.json.to, 'adam@example.com');
        assert.equal((await manageCall(server, 'POST', `/users/${user.id}/email-verification`, { token: tokens.reader })).status, 403, 'a reader cannot');
        const [mail] = await mailed();
        assert.equal(mail!.subject, 'Bekräfta din e-postadress för gatehouse');
        assert.deepEqual(audit.of('email_verification.sent').map((e) => [e.userId, e.by, e.change, e.messageId]), [[user.id, 'administrator', false, sent.json.message_id]]);
        const shown = await manageCall(server, 'GET', `/users/${user.id}`, { token: tokens.reader });
        assert.equal(shown.json.email_verified, false);
        assert.equal((await follow(linkIn(mail!))).result?.status, 200);
        assert.equal((await manageCall(server, 'GET', `/users/${user.id}`, { token: tokens.reader })).json.email_verified, true);
        const again = await manageCall(server, 'POST', `/users/${user.id}/email-verification`, { token: tokens.admin });
        assert.deepEqual([again.status, again.json.detail], [400, 'the e-mail address of adam is verified already']);
        const bare = await addUser(server, { username: 'bare', email: undefined });
        const refused = await manageCall(server, 'POST', `/users/${bare.id}/email-verification`, { token: tokens.admin });
        assert.deepEqual([refused.status, refused.json.detail], [400, 'bare has no e-mail address to verify']);
        const marked = await manageCall(server, 'PATCH', `/users/${bare.id}`, { token: tokens.admin, body: { email: 'bare@example.com', email_verified: true } });
        assert.deepEqual([marked.status, marked.json.email, marked.json.email_verified], [200, 'bare@example.com', true]);
        assert.deepEqual(audit.of('email_verification.marked').map((e) => [e.userId, e.verified]), [[bare.id, true]]);
        const nowhere = await manageCall(server, 'PATCH', `/users/${bare.id}`, { token: tokens.admin, body: { email: null, email_verified: true } });
        assert.deepEqual([nowhere.status, nowhere.json.detail], [400, 'emailVerified cannot be true for a user with no email address']);

        // The CLI: `user send-verification` queues one (in the outbox, which a running server's sender sends).
        const cli = await addUser(server, { username: 'cleo' });
        const run = await runGatehouse(['user', 'send-verification', cli.username, '--json'], { GATEHOUSE_DATABASE_URL: server.database.url, GATEHOUSE_ISSUER: server.issuer, ...mailEnv(smtp) });
        assert.equal(run.code, 0, run.stderr);
        const printed = JSON.parse(run.stdout) as Record<string, unknown>;
        assert.deepEqual([printed.username, printed.to], ['cleo', 'cleo@example.com']);
        const queued = await server.gatehouse.store.outbox.get(printed.message_id as string);
        assert.deepEqual([queued?.destination, queued?.kind, queued?.status], ['cleo@example.com', 'mail.email_verification', 'pending']);

        // The console: the user's page shows the state and offers the link while it is unverified.
        await bootstrap({ databaseUrl: server.database.url, issuer: server.issuer }, 'console-admin', 'console admin password 1');
        const { jar } = await consoleSignIn(server.url, 'console-admin', 'console admin password 1');
        const userPage = await (await browse(`${server.url}/manage/users/${cli.id}`, jar)).text();
        assert.match(userPage, /<dd id="email-verified">Not verified<\/dd>/);
        const confirmPath = `/manage/users/${cli.id}/email-verification`;
        assert.match(userPage, new RegExp(`<a href="${confirmPath}">Send a verification link</a>`));
        const confirm = await (await browse(`${server.url}${confirmPath}`, jar)).text();
        assert.match(confirm, /Send “cleo” a link to verify their e-mail address/);
        const token = formFields(confirm).find(([name]) => name === 'csrf_token')![1];
        const origin = new URL(server.issuer).origin;
        const posted = await submit(`${server.url}${confirmPath}`, [['csrf_token', token]], jar, { origin, referer: `${origin}${confirmPath}` });
        assert.deepEqual([posted.status, posted.headers.get('location')], [303, `/manage/users/${cli.id}?done=verificationSent`]);
        assert.deepEqual((await mailed()).map((m) => m.to), [['cleo@example.com']]);
      } finally {
        await server.close();
      }
    });

    test('without mail the page says so and sends nothing; without a session the page sends the browser to sign in', async () => {
      const { server, profile, post } = await setUp({});
      try {
        const user = await addUser(server, { username: 'otto' });
        const anonymous = await browse(`${server.url}/uas/account/profile`);
        // The account page's sign-in form, which comes back to the profile (its section field).
        assert.equal(anonymous.status, 200);
        assert.match(await anonymous.text(), /<input type="hidden" name="section" value="profile">/);
        const { jar } = await signIn(server, user);
        const shown = await profile(jar);
        assert.match(shown, /E-mail verification is not available here/);
        assert.match(shown, /<a href="\/uas\/account\/profile" aria-current="page">/, "the account pages' navigation, this section current");
        const refused = await post(jar, 'send-link');
        assert.equal(refused.status, 404);
        assert.match(await refused.text(), /E-mail verification is not available here/);
        const tokens = await manageTokens(server);
        const off = await manageCall(server, 'POST', `/users/${user.id}/email-verification`, { token: tokens.admin });
        assert.equal(off.status, 409);
        assert.match(String(off.json.detail), /mail is not configured/);
        const forged = await submit(`${server.url}/uas/account/profile/send-link`, { csrf_token: 'x' }, jar, { origin: 'https://evil.example' });
        assert.equal(forged.status, 403);
      } finally {
        await server.close();
      }
    });
  });
}
