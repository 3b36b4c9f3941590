/**
 * Issue 25, Done when: several instances sending from one outbox, with an SMTP outage in the
 * middle, and the links in what arrived followed. Three gatehouse servers on one store queue one
 * message of each kind of account mail — a password reset link, an e-mail verification link, an
 * invitation and a self-registration link (approval on) — while the SMTP server is down; all three
 * senders try and fail; the server comes back; all three send at once. Every message arrives
 * exactly once (by Message-ID), nothing is lost, and each link works when followed on another
 * instance than the one that queued it: the new password signs in, the address is verified, the
 * invitee and the registrant get accounts (the registrant after an approval, whose mail arrives
 * once too). The clock is injected; the senders' ticks are called.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ManualClock } from '../../src/lib/clock.ts';
import { actingAs } from '../helpers/administration.ts';
import { addClient, REDIRECT_URI } from '../helpers/back-channel.ts';
import { DATABASES } from '../helpers/databases.ts';
import { browse, CookieJar, createTestUser, formAction, formFields, loginThroughForm, submit } from '../helpers/fixtures.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';
import { startSmtpServer, type ReceivedMail, type TestSmtpServer } from '../helpers/smtp.ts';

const PASSWORD = 'a long new passphrase 7';
const MINUTE = 60_000;

/** The text part, quoted-printable undone (soft line breaks and =XX). */
function textOf(mail: ReceivedMail): string {
  return Buffer.from(mail.raw.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_whole, hex: string) => String.fromCharCode(parseInt(hex, 16))), 'latin1').toString('utf8');
}

/** The one account link (…/account/…?token=) in the mail to `to`. */
function linkTo(received: ReceivedMail[], to: string): string {
  const mails = received.filter((m) => m.to.includes(to));
  assert.equal(mails.length, 1, `one mail to ${to}`);
  const link = /(https?:\/\/[^\s<>"]+\/account\/[a-z/-]+\?token=[A-Za-z0-9_-]{43})/.exec(textOf(mails[0]!))?.[1];
  assert.ok(link, `a link in the mail to ${to}`);
  return link;
}

for (const kind of DATABASES) {
  describe(`account mail from three instances on ${kind.name}`, () => {
    let smtp: TestSmtpServer;
    before(async () => {
      smtp = await startSmtpServer();
    });
    after(async () => smtp.stop());

    test('reset, verification, invitation and registration mails: each delivered once through an SMTP outage, every link followed on another instance works', async () => {
      const clock = new ManualClock(Date.now());
      const env = {
        GATEHOUSE_SMTP_URL: smtp.url,
        GATEHOUSE_SMTP_STARTTLS: 'off',
        GATEHOUSE_MAIL_FROM: 'Gatehouse <sso@mail.example>',
        GATEHOUSE_SMTP_TIMEOUT: '5',
        GATEHOUSE_OUTBOX_INTERVAL: '0',
        GATEHOUSE_REGISTRATION: 'open',
        GATEHOUSE_REGISTRATION_APPROVAL: 'on',
      };
      const a = await startServer(kind, { env, clock });
      const servers: RunningServer[] = [a, await startServer(kind, { env, clock, database: a.database }), await startServer(kind, { env, clock, database: a.database })];
      const [, b, c] = servers as [RunningServer, RunningServer, RunningServer];
      const store = a.gatehouse.store;
      const tickAll = async () => (await Promise.all(servers.map((s) => s.gatehouse.outbox.sender.tick()))).reduce((sum, r) => ({ delivered: sum.delivered + r.delivered, retried: sum.retried + r.retried, dead: sum.dead + r.dead }), { delivered: 0, retried: 0, dead: 0 });
      /** Follows a link as a browser would: its page, then its form with the new password where it asks for one. */
      const follow = async (server: RunningServer, link: string) => {
        const jar = new CookieJar();
        const page = await browse(link.replace(a.issuer, server.issuer), jar);
        assert.equal(page.status, 200, link);
        const html = await page.text();
        const fields = formFields(html).map(([name, value]): [string, string] => [name, name === 'password' || name === 'confirmation' ? PASSWORD : value]);
        const origin = new URL(server.issuer).origin;
        return submit(new URL(formAction(html), server.url).toString(), fields, jar, { origin, referer: link });
      };
      const signsIn = async (username: string) => {
        const { client } = await addClient(store);
        const answer = await loginThroughForm({ baseUrl: c.url, jar: new CookieJar() }, { response_type: 'code', client_id: client.clientId, redirect_uri: REDIRECT_URI, scope: 'openid', state: 's' }, { username, password: PASSWORD });
        return answer.status === 303 && new URL(answer.headers.get('location')!).searchParams.has('code');
      };
      try {
        smtp.received.length = 0;
        const forgetful = await createTestUser(store, { password: 'the old password 1', email: 'forgetful@example.com' });
        const unverified = await createTestUser(store, { password: 'some password 12', email: 'unverified@example.com' });
        await smtp.stop();

        // Queued on three instances while the SMTP server is down.
        await a.gatehouse.deps.admin.users.sendPasswordReset(actingAs(), forgetful.id);
        await b.gatehouse.deps.admin.users.sendEmailVerification(actingAs(), unverified.id);
        await c.gatehouse.deps.admin.invitations.invite(actingAs(), { email: 'invitee@example.com' });
        const jar = new CookieJar();
        const form = await (await browse(`${b.url}/uas/account/register`, jar)).text();
        const asked = await submit(new URL(formAction(form), b.url).toString(), formFields(form).map(([n, v]): [string, string] => [n, n === 'email' ? 'newcomer@example.com' : v]), jar);
        assert.equal(asked.status, 200);
        // The ask's work runs after its answer: wait until its message is in the outbox.
        for (let i = 0; i < 100 && (await store.outbox.countByStatus()).pending < 4; i++) await new Promise((resolve) => setTimeout(resolve, 20));
        assert.deepEqual(await store.outbox.countByStatus(), { pending: 4, delivered: 0, dead: 0 });

        // The outage: every instance tries, nothing is delivered, nothing is lost.
        const failed = await tickAll();
        assert.deepEqual([failed.delivered, failed.retried, failed.dead], [0, 4, 0]);
        await smtp.start();
        assert.deepEqual(await tickAll(), { delivered: 0, retried: 0, dead: 0 }, 'nothing before its back-off');
        clock.advance(10 * MINUTE);
        const sent = await tickAll();
        assert.deepEqual([sent.delivered, sent.retried, sent.dead], [4, 0, 0]);
        const queued = await store.outbox.page({ limit: 100 });
        assert.deepEqual(smtp.countsByMessageId(), new Map(queued.map((m) => [`<${m.id}@mail.example>`, 1])), 'each message once, by Message-ID');
        assert.deepEqual(queued.map((m) => m.kind).sort(), ['mail.email_verification', 'mail.invitation', 'mail.password_reset', 'mail.registration']);

        // The links, each followed on an instance other than the one that queued it.
        const received = [...smtp.received];
        assert.equal((await follow(c, linkTo(received, 'forgetful@example.com'))).status < 400, true, 'the reset is accepted');
        assert.equal(await signsIn(forgetful.username), true, 'the new password signs in');
        assert.equal((await follow(a, linkTo(received, 'unverified@example.com'))).status < 400, true, 'the verification is accepted');
        assert.equal((await store.users.getProfile(unverified.id))?.emailVerified, true);
        assert.equal((await follow(b, linkTo(received, 'invitee@example.com'))).status < 400, true, 'the invitation is accepted');
        assert.deepEqual(await store.users.getByUsername('invitee@example.com').then((u) => [u?.status, u?.emailVerified]), ['enabled', true]);
        assert.equal(await signsIn('invitee@example.com'), true);
        assert.equal((await follow(c, linkTo(received, 'newcomer@example.com'))).status < 400, true, 'the registration is finished');
        const newcomer = (await store.users.getByUsername('newcomer@example.com'))!;
        assert.deepEqual([newcomer.status, newcomer.emailVerified, await signsIn('newcomer@example.com')], ['pending', true, false], 'awaiting approval: no sign-in');

        // The approval's mail, from yet another instance, arrives once too.
        smtp.received.length = 0;
        await a.gatehouse.deps.admin.registrations.approve(actingAs(), newcomer.id);
        const approved = await tickAll();
        assert.equal(approved.delivered, 1);
        assert.deepEqual(smtp.received.map((m) => m.to), [['newcomer@example.com']]);
        assert.equal(await signsIn('newcomer@example.com'), true);
        assert.deepEqual(await store.outbox.countByStatus(), { pending: 0, delivered: 5, dead: 0 });
      } finally {
        for (const s of servers.slice(1).reverse()) await s.close();
        await a.close();
      }
    });
  });
}
