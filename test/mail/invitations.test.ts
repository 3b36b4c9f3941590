/**
 * Invitations, end to end, on every database (issue 25 items 4 and 7; docs/invitations.md): an
 * administrator invites through the management API, real mail goes to a real SMTP server started
 * here (smtp-server), and the link in what arrived is followed as a browser would. The GET spends
 * nothing; the POST chooses the password (the password policy applies), makes the account and
 * signs the invitee in; the link then works no more. Expired; revoked; resent (the old link
 * dead); many POSTs of one link at once make one account; refused clearly with mail off and for
 * an address that has an account. The clock is injected and the outbox sender's ticks are called.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ManualClock } from '../../src/lib/clock.ts';
import { AwaitedAudit } from '../helpers/audit.ts';
import { bootstrap } from '../helpers/console-browser.ts';
import { consoleSignIn } from '../helpers/console-signin.ts';
import { addClient, basic, postForm, REDIRECT_URI } from '../helpers/back-channel.ts';
import { DATABASES } from '../helpers/databases.ts';
import { browse, CookieJar, createTestUser, formAction, formFields, loginThroughForm, submit } from '../helpers/fixtures.ts';
import { manageCall, manageTokens, type ManageTokens } from '../helpers/manage.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';
import { startSmtpServer, type ReceivedMail, type TestSmtpServer } from '../helpers/smtp.ts';

const FROM = 'Gatehouse Test <sso@mail.example>';
const PASSWORD = 'violet hedgehogs juggle';
const DAY = 86_400_000;

function mailEnv(smtp: TestSmtpServer, extra: Record<string, string> = {}): Record<string, string> {
  return { GATEHOUSE_SMTP_URL: smtp.url, GATEHOUSE_SMTP_STARTTLS: 'off', GATEHOUSE_MAIL_FROM: FROM, GATEHOUSE_SMTP_TIMEOUT: '5', GATEHOUSE_OUTBOX_INTERVAL: '0', ...extra };
}

/** The text part's invitation link (quoted-printable undone). */
export function invitationLinkIn(mail: ReceivedMail): string {
  const decoded = mail.raw.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_whole, hex: string) => String.fromCharCode(parseInt(hex, 16)));
  const link = /(https?:\/\/[^\s<>"]+\/account\/invitation\?token=[A-Za-z0-9_-]{43})/.exec(decoded)?.[1];
  assert.ok(link, 'the mail carries an invitation link');
  return link;
}

for (const kind of DATABASES) {
  describe(`invitations on ${kind.name}`, () => {
    let smtp: TestSmtpServer;
    let clock: ManualClock;
    let audit: AwaitedAudit;
    let server: RunningServer;
    let tokens: ManageTokens;
    before(async () => {
      smtp = await startSmtpServer();
      clock = new ManualClock();
      audit = new AwaitedAudit();
      server = await startServer(kind, { env: mailEnv(smtp, { GATEHOUSE_INVITATION_LIFETIME: '86400', GATEHOUSE_PASSWORD_MIN_LENGTH: '12' }), clock, audit });
      tokens = await manageTokens(server);
    });
    after(async () => {
      await server.close();
      await smtp.stop();
    });

    /** Invites `email` through the management API; the answer, and the link in the mail that arrived. */
    async function invite(email: string, body: Record<string, unknown> = {}): Promise<{ id: string; link: string; mail: ReceivedMail }> {
      smtp.received.length = 0;
      const answer = await manageCall(server, 'POST', '/invitations', { token: tokens.admin, body: { email, ...body } });
      assert.equal(answer.status, 201, answer.text);
      await server.gatehouse.outbox.sender.tick();
      const [mail, ...others] = smtp.received;
      assert.deepEqual(others, []);
      return { id: (answer.json.invitation as { id: string }).id, link: invitationLinkIn(mail!), mail: mail! };
    }

    /** Follows a link: the page, then its form with `password`. */
    async function follow(link: string, password = PASSWORD, jar = new CookieJar()): Promise<{ page: Response; result?: Response }> {
      const page = await browse(link, jar);
      if (page.status !== 200) return { page };
      const html = await page.text();
      const fields = formFields(html).map(([name, value]): [string, string] => [name, name === 'password' || name === 'confirmation' ? password : value]);
      return { page, result: await submit(new URL(formAction(html), server.url).toString(), fields, jar) };
    }

    /** Signs in through the login form of a new client with `username` and `password`: whether a code came back. */
    async function canSignIn(username: string, password: string): Promise<boolean> {
      const { client, secret } = await addClient(server.gatehouse.store);
      const response = await loginThroughForm({ baseUrl: server.url, jar: new CookieJar() }, { response_type: 'code', client_id: client.clientId, redirect_uri: REDIRECT_URI, scope: 'openid', state: 's' }, { username, password });
      if (response.status !== 303) return false;
      const code = new URL(response.headers.get('location')!).searchParams.get('code')!;
      const tokensAnswer = await postForm(`${server.url}/uas/oauth2/token`, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI }, { authorization: basic(client.clientId, secret) });
      return tokensAnswer.status === 200;
    }

    test('the link in the mail makes the account once, with the address as username, and signs the invitee in', async () => {
      const email = `Ines.${Date.now()}@example.com`;
      const { id, link, mail } = await invite(email, { given_name: 'Ines', locale: 'sv' });
      assert.deepEqual([mail.to, mail.subject], [[email], 'Du är inbjuden till gatehouse']);
      assert.ok(link.startsWith(`${server.issuer}/account/invitation?token=`), link);
      assert.deepEqual(audit.of('invitation.created').filter((e) => e.invitationId === id).map((e) => e.email), [email]);

      // A mail scanner fetching the link first spends nothing.
      const prefetch = await browse(link);
      assert.equal(prefetch.status, 200);
      assert.deepEqual([prefetch.headers.get('referrer-policy'), prefetch.headers.get('cache-control')], ['no-referrer', 'no-store']);
      assert.match(await prefetch.text(), new RegExp(`Your username is ${email.replace(/\./g, '\\.')}\\.`));

      // The password policy first: refused, in the page's language, and the link still usable.
      const jar = new CookieJar();
      const refused = await follow(`${link}&ui_locales=fi`, email, jar);
      assert.equal(refused.result?.status, 400);
      assert.match(await refused.result!.text(), /Salasana ei saa olla käyttäjätunnuksesi eikä sähköpostiosoitteesi\./);

      const { result } = await follow(link, PASSWORD, jar);
      assert.equal(result?.status, 303, 'signed in and sent on');
      assert.equal(result!.headers.get('location'), '/uas/account/security?ui_locales=en');
      const account = await browse(`${server.url}/uas/account/security`, jar);
      assert.equal(account.status, 200);
      assert.match(await account.text(), new RegExp(email.replace(/\./g, '\\.')), 'the account page shows the signed-in account');

      const user = await server.gatehouse.store.users.getByUsername(email);
      assert.deepEqual([user?.email, user?.emailVerified], [email, true], 'the followed link proved the address (docs/email-verification.md)');
      assert.deepEqual([user?.username, user?.email, user?.givenName, user?.status], [email, email, 'Ines', 'enabled']);
      assert.deepEqual(audit.of('invitation.accepted').filter((e) => e.invitationId === id).map((e) => e.userId), [user!.id]);
      const listed = await manageCall(server, 'GET', `/invitations/${id}`, { token: tokens.reader });
      assert.deepEqual([listed.json.status, listed.json.user_id], ['accepted', user!.id]);

      const again = await follow(link, 'another long passphrase');
      assert.equal(again.page.status, 410, 'the link works once');
      assert.match(await again.page.text(), /can no longer be used/);
      assert.equal(await canSignIn(email, PASSWORD), true, 'the chosen password signs in');
    });

    test('an expired link is refused on the page and on its POST; a resend of it works and kills the one before', async () => {
      const email = `ernst.${Date.now()}@example.com`;
      const { id, link } = await invite(email);
      const jar = new CookieJar();
      const html = await (await browse(link, jar)).text();
      clock.advance(DAY);
      tokens = await manageTokens(server); // the ones before expired with the day
      const fields = formFields(html).map(([name, value]): [string, string] => [name, name === 'password' || name === 'confirmation' ? PASSWORD : value]);
      assert.equal((await submit(new URL(formAction(html), server.url).toString(), fields, jar)).status, 410);
      assert.equal((await browse(link)).status, 410);
      assert.equal((await manageCall(server, 'GET', `/invitations/${id}`, { token: tokens.reader })).json.status, 'expired');

      smtp.received.length = 0;
      const resent = await manageCall(server, 'POST', `/invitations/${id}/resend`, { token: tokens.admin });
      assert.equal(resent.status, 200, resent.text);
      await server.gatehouse.outbox.sender.tick();
      const second = invitationLinkIn(smtp.received[0]!);
      smtp.received.length = 0;
      assert.equal((await manageCall(server, 'POST', `/invitations/${id}/resend`, { token: tokens.admin })).status, 200);
      await server.gatehouse.outbox.sender.tick();
      const third = invitationLinkIn(smtp.received[0]!);
      assert.deepEqual([(await browse(link)).status, (await browse(second)).status], [410, 410], 'a resend kills the links before it');
      assert.equal((await follow(third)).result?.status, 303);
      assert.equal(await canSignIn(email, PASSWORD), true);
      assert.equal(audit.of('invitation.resent').filter((e) => e.invitationId === id).length, 2);
    });

    test('a revoked link is refused; revoking or resending it again is 409; the list shows it', async () => {
      const email = `rolf.${Date.now()}@example.com`;
      const { id, link } = await invite(email);
      const revoked = await manageCall(server, 'DELETE', `/invitations/${id}`, { token: tokens.admin });
      assert.deepEqual([revoked.status, revoked.json.status], [200, 'revoked']);
      assert.equal((await follow(link)).page.status, 410);
      const twice = await manageCall(server, 'DELETE', `/invitations/${id}`, { token: tokens.admin });
      assert.deepEqual([twice.status, twice.json.detail], [409, `the invitation to ${email} is revoked: only a pending invitation can be revoked`]);
      assert.equal((await manageCall(server, 'POST', `/invitations/${id}/resend`, { token: tokens.admin })).status, 409);
      const page = await manageCall(server, 'GET', '/invitations?status=revoked&limit=100', { token: tokens.reader });
      assert.ok((page.json.items as { id: string }[]).some((i) => i.id === id));
      assert.equal(await server.gatehouse.store.users.getByUsername(email), undefined, 'no account');
    });

    test('the same link posted many times at once makes one account', async () => {
      const email = `conny.${Date.now()}@example.com`;
      const { link } = await invite(email);
      const jar = new CookieJar();
      const html = await (await browse(link, jar)).text();
      const action = new URL(formAction(html), server.url).toString();
      const RACERS = 12;
      const results = await Promise.all(
        Array.from({ length: RACERS }, (_, i) => submit(action, formFields(html).map(([name, value]): [string, string] => [name, name === 'password' || name === 'confirmation' ? `racing passphrase ${i}` : value]), jar)),
      );
      const statuses = results.map((r) => r.status);
      assert.deepEqual([...statuses].sort(), [303, ...Array<number>(RACERS - 1).fill(410)]);
      assert.equal((await server.gatehouse.store.users.list({ filters: { email }, exactMatch: true })).length, 1);
      assert.equal(await canSignIn(email, `racing passphrase ${statuses.indexOf(303)}`), true);
    });

    test('refused clearly: an address with an account, a second pending invitation, a reader, bad input', async () => {
      const existing = await createTestUser(server.gatehouse.store, { password: PASSWORD, email: `has.${Date.now()}@example.com` });
      const taken = await manageCall(server, 'POST', '/invitations', { token: tokens.admin, body: { email: existing.email } });
      assert.deepEqual([taken.status, taken.json.detail], [409, `an account with the e-mail address ${existing.email} exists already (${existing.username}): send it a password reset link instead`]);
      const email = `twice.${Date.now()}@example.com`;
      await invite(email);
      const twice = await manageCall(server, 'POST', '/invitations', { token: tokens.admin, body: { email: email.toUpperCase() } });
      assert.deepEqual([twice.status, twice.json.detail], [409, `a pending invitation to ${email.toUpperCase()} exists already: resend it, or revoke it first`]);
      assert.equal((await manageCall(server, 'POST', '/invitations', { token: tokens.reader, body: { email: 'r@example.com' } })).status, 403);
      const bad = await manageCall(server, 'POST', '/invitations', { token: tokens.admin, body: { email: 'not an address' } });
      assert.equal(bad.status, 400);
      assert.equal((await browse(`${server.url}/uas/account/invitation?token=${'x'.repeat(43)}`)).status, 410);
      assert.equal((await browse(`${server.url}/uas/account/invitation`)).status, 410);
    });
  });
}

describe('invitations with mail off', () => {
  test('inviting is refused with a clear error, nothing is written', async () => {
    const server = await startServer(DATABASES[0]!);
    try {
      const tokens = await manageTokens(server);
      const refused = await manageCall(server, 'POST', '/invitations', { token: tokens.admin, body: { email: 'nobody@example.com' } });
      assert.deepEqual([refused.status, refused.json.detail], [409, 'mail is not configured, so no invitation can be sent: set GATEHOUSE_SMTP_URL and GATEHOUSE_MAIL_FROM (docs/mail.md)']);
      assert.deepEqual((await manageCall(server, 'GET', '/invitations', { token: tokens.reader })).json.items, []);
    } finally {
      await server.close();
    }
  });
});

describe('invitations from the console', () => {
  test('invite with the form, see it listed, resend and revoke after confirmations; the mail follows', { timeout: 120_000 }, async () => {
    const smtp = await startSmtpServer();
    const audit = new AwaitedAudit();
    const server = await startServer(DATABASES[0]!, { env: mailEnv(smtp), audit });
    try {
      await bootstrap({ databaseUrl: server.database.url, issuer: server.issuer }, 'console-admin', 'console admin password 1');
      const { jar } = await consoleSignIn(server.url, 'console-admin', 'console admin password 1');
      const origin = new URL(server.issuer).origin;
      /** Posts the form of `path` (its CSRF token) with `form`. */
      async function post(path: string, form: [string, string][] = []): Promise<Response> {
        const token = formFields(await (await browse(`${server.url}${path}`, jar)).text()).find(([name]) => name === 'csrf_token')![1];
        return submit(`${server.url}${path}`, [['csrf_token', token], ...form], jar, { origin, referer: `${origin}${path}` });
      }
      const list = await (await browse(`${server.url}/manage/invitations`, jar)).text();
      assert.match(list, /<a class="button" href="\/manage\/invitations\/new">Invite someone<\/a>/);

      const refused = await post('/manage/invitations/new', [['email', 'not an address'], ['locale', 'fi']]);
      assert.equal(refused.status, 400, 'the form again, with the error at the field');
      assert.match(await refused.text(), /id="f-email-error"><li>email &quot;not an address&quot; is not an email address<\/li>/);

      const invited = await post('/manage/invitations/new', [['email', 'vilma@example.com'], ['given_name', 'Vilma'], ['family_name', ''], ['locale', 'fi']]);
      assert.deepEqual([invited.status, invited.headers.get('location')], [303, '/manage/invitations?status=pending&done=invited']);
      await server.gatehouse.outbox.sender.tick();
      assert.deepEqual(smtp.received.map((m) => [m.to, m.subject]), [[['vilma@example.com'], 'Kutsu palveluun gatehouse']]);
      const first = invitationLinkIn(smtp.received[0]!);
      const [created] = audit.of('invitation.created');
      const id = created!.invitationId as string;
      const pending = await (await browse(`${server.url}/manage/invitations?status=pending`, jar)).text();
      assert.match(pending, /<td>vilma@example\.com<\/td><td>Pending<\/td>/);

      const confirm = await (await browse(`${server.url}/manage/invitations/${id}/resend`, jar)).text();
      assert.match(confirm, /Send vilma@example\.com a new invitation link\? The link sent before stops working\./);
      const resent = await post(`/manage/invitations/${id}/resend`);
      assert.deepEqual([resent.status, resent.headers.get('location')], [303, '/manage/invitations?status=pending&done=resent']);
      assert.equal((await browse(first)).status, 410, 'the first link died');

      const revoked = await post(`/manage/invitations/${id}/revoke`);
      assert.deepEqual([revoked.status, revoked.headers.get('location')], [303, '/manage/invitations?status=revoked&done=revoked']);
      const revokedList = await (await browse(`${server.url}/manage/invitations?status=revoked`, jar)).text();
      assert.match(revokedList, /<td>vilma@example\.com<\/td><td>Revoked<\/td>/);
      assert.deepEqual(audit.all().filter((e) => String(e.event).startsWith('invitation.')).map((e) => e.event), ['invitation.created', 'invitation.resent', 'invitation.revoked']);
    } finally {
      await server.close();
      await smtp.stop();
    }
  });
});
