/**
 * Self-registration, end to end, on every database (issue 25 item 4; docs/registration.md): the
 * login page's "Create an account", real mail to a real SMTP server started here (smtp-server),
 * and the link in what arrived followed as a browser would. Open and by-domain modes; approval
 * (a pending account cannot sign in; approved, it can, and the "ready" mail arrives; rejected, it
 * is gone); an address that already has an account gets a mail saying so and no account is made;
 * the same answer for a known and an unknown address (status, body, headers, and timing within
 * noise); two links of one address followed at once make one account; malformed input answered
 * 4xx. The clock is injected and the outbox sender's ticks are called.
 */
import assert from 'node:assert/strict';
import { fork } from 'node:child_process';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { loadConfig } from '../../src/config.ts';
import { ManualClock } from '../../src/lib/clock.ts';
import { actingAs } from '../helpers/administration.ts';
import { AwaitedAudit } from '../helpers/audit.ts';
import { bootstrap } from '../helpers/console-browser.ts';
import { consoleSignIn } from '../helpers/console-signin.ts';
import { addClient, basic, postForm, REDIRECT_URI } from '../helpers/back-channel.ts';
import { DATABASES } from '../helpers/databases.ts';
import { browse, CookieJar, createTestUser, formAction, formFields, loginThroughForm, submit } from '../helpers/fixtures.ts';
import { manageCall, manageTokens } from '../helpers/manage.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';
import { startSmtpServer, type ReceivedMail, type TestSmtpServer } from '../helpers/smtp.ts';

const FROM = 'Gatehouse Test <sso@mail.example>';
const PASSWORD = 'a fine long passphrase';
const MINUTE = 60_000;

function mailEnv(smtp: TestSmtpServer, extra: Record<string, string> = {}): Record<string, string> {
  return { GATEHOUSE_SMTP_URL: smtp.url, GATEHOUSE_SMTP_STARTTLS: 'off', GATEHOUSE_MAIL_FROM: FROM, GATEHOUSE_SMTP_TIMEOUT: '5', GATEHOUSE_OUTBOX_INTERVAL: '0', GATEHOUSE_REGISTRATION: 'open', ...extra };
}

/** The text part, quoted-printable undone (soft line breaks and =XX). */
function textOf(mail: ReceivedMail): string {
  return Buffer.from(mail.raw.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_whole, hex: string) => String.fromCharCode(parseInt(hex, 16))), 'latin1').toString('utf8');
}

function linkIn(mail: ReceivedMail): string {
  const link = /(https?:\/\/[^\s<>"]+\/account\/register\/finish\?token=[A-Za-z0-9_-]{43})/.exec(textOf(mail))?.[1];
  assert.ok(link, 'the mail carries a registration link');
  return link;
}

for (const kind of DATABASES) {
  describe(`self-registration on ${kind.name}`, () => {
    let smtp: TestSmtpServer;
    before(async () => {
      smtp = await startSmtpServer();
    });
    after(async () => smtp.stop());

    async function setUp(extra: Record<string, string> = {}, database?: RunningServer['database']) {
      const clock = new ManualClock();
      const audit = new AwaitedAudit();
      const server = await startServer(kind, { env: mailEnv(smtp, extra), clock, audit, ...(database ? { database } : {}) });
      smtp.received.length = 0;
      const registerUrl = `${server.url}/uas/account/register`;
      /** Asks on the page, as a browser would: the page, then its form. */
      async function ask(fields: Record<string, string>, jar = new CookieJar(), url = registerUrl): Promise<Response> {
        const page = await browse(url, jar);
        assert.equal(page.status, 200);
        const html = await page.text();
        const form = formFields(html).map(([name, value]): [string, string] => [name, fields[name] ?? value]);
        return submit(new URL(formAction(html), server.url).toString(), form, jar);
      }
      /** Waits until `asks` asks' work after the answer is done (their audit events). */
      async function handled(asks: number): Promise<void> {
        await audit.until((events) => events.filter((e) => e.event === 'registration.requested').length >= asks);
        assert.equal(audit.of('registration.requested').length, asks, 'every ask was handled after its answer, once');
      }
      async function settle(asks: number): Promise<ReceivedMail[]> {
        await handled(asks);
        await server.gatehouse.outbox.sender.tick();
        return [...smtp.received];
      }
      /** Follows a link: the page, then its form with the password. */
      async function follow(link: string, password = PASSWORD, jar = new CookieJar()): Promise<{ page: Response; result?: Response }> {
        const page = await browse(link, jar);
        if (page.status !== 200) return { page };
        const html = await page.text();
        const fields = formFields(html).map(([name, value]): [string, string] => [name, name === 'password' || name === 'confirmation' ? password : value]);
        return { page, result: await submit(new URL(formAction(html), server.url).toString(), fields, jar) };
      }
      return { clock, audit, server, ask, handled, settle, follow };
    }

    async function signIn(server: RunningServer, username: string, password = PASSWORD): Promise<Response> {
      const { client } = await addClient(server.gatehouse.store);
      return loginThroughForm({ baseUrl: server.url, jar: new CookieJar() }, { response_type: 'code', client_id: client.clientId, redirect_uri: REDIRECT_URI, scope: 'openid', state: 's' }, { username, password });
    }

    test('open: the login page\'s link, the mailed link, the password; then a sign-in to the client', async () => {
      const { server, audit, ask, settle, follow } = await setUp({ GATEHOUSE_REGISTRATION_FIELDS: 'given_name' });
      try {
        const { client } = await addClient(server.gatehouse.store);
        const authorization = { response_type: 'code', client_id: client.clientId, redirect_uri: REDIRECT_URI, scope: 'openid', state: 'st', ui_locales: 'sv' };
        const login = await (await browse(`${server.url}/uas/oauth2/authorization?${new URLSearchParams(authorization)}`)).text();
        const createLink = /<p class="create-account"><a href="([^"]+)">Skapa ett konto<\/a><\/p>/.exec(login)?.[1];
        assert.ok(createLink, 'the login page links to "Create an account" in its language');
        const registerUrl = new URL(createLink.replaceAll('&amp;', '&'), server.url);
        assert.equal(registerUrl.pathname, '/uas/account/register');
        const returnTo = registerUrl.searchParams.get('return_to')!;
        assert.deepEqual(Object.fromEntries(new URL(returnTo, server.url).searchParams), authorization);

        const jar = new CookieJar();
        const missing = await ask({ email: 'new.person@example.com' }, jar, registerUrl.toString());
        assert.equal(missing.status, 400, 'the required given name');
        assert.match(await missing.text(), /Ange ditt förnamn/);
        const asked = await ask({ email: 'New.Person@example.com', given_name: 'Nova', family_name: 'Person' }, jar, registerUrl.toString());
        assert.equal(asked.status, 200);
        assert.match(await asked.text(), /Kontrollera din e-post/);
        const [mail, ...others] = await settle(1);
        assert.deepEqual(others, []);
        assert.deepEqual([mail!.to, mail!.subject], [['New.Person@example.com'], 'Slutför ditt konto hos gatehouse']);
        const link = linkIn(mail!);
        assert.ok(link.startsWith(`${server.issuer}/account/register/finish?token=`), link);
        assert.deepEqual(audit.of('registration.requested').map((e) => [e.outcome, `<${e.messageId}@mail.example>`]), [['link_sent', mail!.messageId]]);

        // A mail scanner fetching the link first consumes nothing.
        const prefetch = await browse(link);
        assert.equal(prefetch.status, 200);
        assert.equal(prefetch.headers.get('referrer-policy'), 'no-referrer');
        assert.equal(prefetch.headers.get('cache-control'), 'no-store');
        assert.match(await prefetch.text(), /Your account will be New\.Person@example\.com\./);
        const { result } = await follow(`${link}&ui_locales=sv`);
        assert.equal(result?.status, 200);
        const done = await result!.text();
        assert.match(done, /Ditt konto är klart/);
        const back = /<a href="([^"]+)">Fortsätt till inloggningen<\/a>/.exec(done)?.[1];
        assert.equal(back?.replaceAll('&amp;', '&'), returnTo);

        const user = (await server.gatehouse.store.users.getByUsername('new.person@example.com'))!;
        assert.deepEqual(
          { username: user.username, email: user.email, emailVerified: user.emailVerified, status: user.status, givenName: user.givenName, familyName: user.familyName, organizationId: user.organizationId },
          { username: 'New.Person@example.com', email: 'New.Person@example.com', emailVerified: true, status: 'enabled', givenName: 'Nova', familyName: 'Person', organizationId: undefined },
        );
        assert.deepEqual(audit.of('registration.completed').map((e) => [e.userId, e.username, e.status]), [[user.id, user.username, 'enabled']]);
        assert.equal((await follow(link)).page.status, 410, 'the link works once');

        const signedIn = await loginThroughForm({ baseUrl: server.url, jar: new CookieJar() }, authorization, { username: 'new.person@example.com', password: PASSWORD });
        assert.equal(signedIn.status, 303);
        assert.equal(new URL(signedIn.headers.get('location')!).searchParams.get('state'), 'st');
      } finally {
        await server.close();
      }
    });

    test('the organization a new user joins; an expired link is refused', async () => {
      const first = await setUp();
      const organization = await first.server.gatehouse.deps.admin.organizations.create(actingAs(), { technicalName: 'newcomers' });
      // Another instance on the same store, started once the organization exists (it is checked at start-up).
      const { server, clock, ask, settle, follow } = await setUp({ GATEHOUSE_REGISTRATION_ORGANIZATION: 'newcomers', GATEHOUSE_REGISTRATION_LIFETIME: '600' }, first.server.database);
      try {
        assert.equal((await ask({ email: 'org@example.com' })).status, 200);
        const link = linkIn((await settle(1))[0]!);
        assert.equal((await follow(link)).result?.status, 200);
        assert.equal((await server.gatehouse.store.users.getByUsername('org@example.com'))?.organizationId, organization.id);

        assert.equal((await ask({ email: 'late@example.com' })).status, 200);
        smtp.received.length = 0;
        const late = linkIn((await settle(2))[0]!);
        clock.advance(10 * MINUTE);
        assert.equal((await follow(late)).page.status, 410);
        assert.equal(await server.gatehouse.store.users.getByUsername('late@example.com'), undefined);
      } finally {
        await server.close();
        await first.server.close();
      }
    });

    test('domain: another domain is refused clearly, before anything is looked up or sent', async () => {
      const { server, audit, ask, settle, follow } = await setUp({ GATEHOUSE_REGISTRATION: 'domain', GATEHOUSE_REGISTRATION_DOMAINS: 'example.com, Example.ORG' });
      try {
        const refused = await ask({ email: 'someone@elsewhere.net' });
        assert.equal(refused.status, 400);
        assert.match(await refused.text(), /can only be created with an e-mail address of the organizations/);
        assert.equal((await ask({ email: 'someone@sub.example.com' })).status, 400, 'a subdomain is another domain');
        assert.equal((await ask({ email: 'someone@EXAMPLE.org' })).status, 200);
        const mails = await settle(1);
        assert.deepEqual(mails.map((m) => m.to.map((to) => to.toLowerCase())), [['someone@example.org']]);
        assert.equal(audit.of('registration.requested').length, 1);
        assert.equal((await follow(linkIn(mails[0]!))).result?.status, 200);
      } finally {
        await server.close();
      }
    });

    test('approval: pending cannot sign in; approved, it can and the "ready" mail arrives; rejected, it is gone', async () => {
      const { server, audit, ask, settle, follow } = await setUp({ GATEHOUSE_REGISTRATION_APPROVAL: 'on' });
      try {
        assert.equal((await ask({ email: 'wait@example.com' })).status, 200);
        assert.equal((await ask({ email: 'nope@example.com' })).status, 200);
        const mails = await settle(2);
        const linkOf = (to: string) => linkIn(mails.find((m) => m.to[0] === to)!);
        const { result } = await follow(linkOf('wait@example.com'));
        assert.equal(result?.status, 200);
        assert.match(await result!.text(), /awaiting approval by an administrator/);
        assert.equal((await follow(linkOf('nope@example.com'))).result?.status, 200);
        const waiting = (await server.gatehouse.store.users.getByUsername('wait@example.com'))!;
        const nope = (await server.gatehouse.store.users.getByUsername('nope@example.com'))!;
        assert.deepEqual([waiting.status, nope.status], ['pending', 'pending']);
        assert.deepEqual(audit.of('registration.completed').map((e) => e.status), ['pending', 'pending']);

        // Pending: refused on the login page and by the password grant, as any account that may not sign in.
        assert.equal((await signIn(server, 'wait@example.com')).status, 401);
        const { client, secret } = await addClient(server.gatehouse.store, { grantTypes: ['password'] });
        const grant = () => postForm(`${server.url}/uas/oauth2/token`, { grant_type: 'password', username: 'wait@example.com', password: PASSWORD, scope: 'openid' }, { authorization: basic(client.clientId, secret) });
        assert.deepEqual([(await grant()).status, (await grant()).body.error], [400, 'invalid_grant']);

        const tokens = await manageTokens(server);
        const listed = await manageCall(server, 'GET', '/users?status=pending', { token: tokens.reader });
        assert.deepEqual((listed.json.items as { username: string }[]).map((u) => u.username), ['nope@example.com', 'wait@example.com']);
        assert.equal((await manageCall(server, 'POST', `/users/${waiting.id}/approve`, { token: tokens.reader })).status, 403, 'a reader cannot');
        smtp.received.length = 0;
        const approved = await manageCall(server, 'POST', `/users/${waiting.id}/approve`, { token: tokens.admin, body: { locale: 'fi' } });
        assert.equal(approved.status, 200, JSON.stringify(approved.json));
        assert.equal((approved.json.user as { status: string }).status, 'enabled');
        const again = await manageCall(server, 'POST', `/users/${waiting.id}/approve`, { token: tokens.admin });
        assert.deepEqual([again.status, again.json.detail], [409, 'wait@example.com is not a pending registration: it is enabled']);
        const rejected = await manageCall(server, 'POST', `/users/${nope.id}/reject`, { token: tokens.admin });
        assert.equal(rejected.status, 200, JSON.stringify(rejected.json));
        await server.gatehouse.outbox.sender.tick();
        assert.deepEqual(smtp.received.map((m) => [m.to, m.subject]).sort((a, b) => String(a[1]).localeCompare(String(b[1]))), [
          [['wait@example.com'], 'Tilisi palveluun gatehouse on valmis'],
          [['nope@example.com'], 'Your gatehouse registration was not approved'],
        ]);
        assert.deepEqual(audit.of('registration.approved').map((e) => [e.userId, e.messageId]), [[waiting.id, approved.json.message_id]]);
        assert.deepEqual(audit.of('registration.rejected').map((e) => [e.userId, e.messageId]), [[nope.id, rejected.json.message_id]]);
        assert.equal(await server.gatehouse.store.users.get(nope.id), undefined);
        assert.equal((await signIn(server, 'wait@example.com')).status, 303);
        assert.equal((await grant()).status, 200);
      } finally {
        await server.close();
      }
    });

    test("approval and rejection mails go out in the registrant's language, not the administrator's; a locale the administrator names still wins", async () => {
      const { server, ask, settle, follow } = await setUp({ GATEHOUSE_REGISTRATION_APPROVAL: 'on' });
      try {
        const registerUrl = `${server.url}/uas/account/register`;
        assert.equal((await ask({ email: 'aino@example.com' }, undefined, `${registerUrl}?ui_locales=fi`)).status, 200);
        assert.equal((await ask({ email: 'sven@example.com' }, undefined, `${registerUrl}?ui_locales=sv`)).status, 200);
        assert.equal((await ask({ email: 'erik@example.com' }, undefined, `${registerUrl}?ui_locales=sv`)).status, 200);
        const mails = await settle(3);
        for (const to of ['aino@example.com', 'sven@example.com', 'erik@example.com']) assert.equal((await follow(linkIn(mails.find((m) => m.to[0] === to)!))).result?.status, 200);
        const user = async (username: string) => (await server.gatehouse.store.users.getByUsername(username))!;
        const [aino, sven, erik] = [await user('aino@example.com'), await user('sven@example.com'), await user('erik@example.com')];
        assert.deepEqual([await server.gatehouse.store.users.registrationLocale(aino.id), await server.gatehouse.store.users.registrationLocale(sven.id)], ['fi', 'sv']);

        // The administrator's console is in English (and the API call names no locale): the registrant's language decides.
        const tokens = await manageTokens(server);
        smtp.received.length = 0;
        assert.equal((await manageCall(server, 'POST', `/users/${aino.id}/approve`, { token: tokens.admin })).status, 200);
        assert.equal((await manageCall(server, 'POST', `/users/${sven.id}/reject`, { token: tokens.admin })).status, 200);
        // Named explicitly, the administrator's choice is kept (the CLI's --locale).
        assert.equal((await manageCall(server, 'POST', `/users/${erik.id}/approve`, { token: tokens.admin, body: { locale: 'en' } })).status, 200);
        await server.gatehouse.outbox.sender.tick();
        assert.deepEqual(smtp.received.map((m) => [m.to[0], m.subject]).sort((a, b) => String(a[0]).localeCompare(String(b[0]))), [
          ['aino@example.com', 'Tilisi palveluun gatehouse on valmis'],
          ['erik@example.com', 'Your gatehouse account is ready'],
          ['sven@example.com', 'Din registrering hos gatehouse godkändes inte'],
        ]);
        assert.match(textOf(smtp.received.find((m) => m.to[0] === 'aino@example.com')!), /Ylläpitäjä hyväksyi tilisi aino@example\.com osoitteessa /);
      } finally {
        await server.close();
      }
    });

    test('an address that already has an account: a mail saying so with the reset page, and no new account', async () => {
      const { server, audit, ask, settle } = await setUp();
      try {
        const existing = await createTestUser(server.gatehouse.store, { username: 'olli', password: PASSWORD, email: 'olli@example.com' });
        assert.equal((await ask({ email: 'olli@example.com' })).status, 200);
        const [mail, ...others] = await settle(1);
        assert.deepEqual(others, []);
        assert.deepEqual([mail!.to, mail!.subject], [['olli@example.com'], 'You already have a gatehouse account']);
        assert.match(textOf(mail!), new RegExp(`${server.issuer}/account/forgot-password\\?ui_locales=en`));
        assert.doesNotMatch(textOf(mail!), /register\/finish/);
        assert.deepEqual(audit.of('registration.requested').map((e) => e.outcome), ['account_exists']);
        assert.deepEqual((await server.gatehouse.store.users.list({ filters: { email: 'olli@example.com' }, exactMatch: true })).map((u) => u.id), [existing.id]);
        assert.equal(await server.gatehouse.store.users.getByUsername('olli@example.com'), undefined);
      } finally {
        await server.close();
      }
    });

    test('throttled per e-mail address (the same answer, nothing sent) and per client address (429 for anyone)', async () => {
      const { server, audit, ask, handled, settle } = await setUp({ GATEHOUSE_REGISTRATIONS_PER_EMAIL: '2', GATEHOUSE_REGISTRATIONS_PER_ADDRESS: '4' });
      try {
        // Each ask's work (after its answer) done before the next: the third finds the budget spent.
        const answers = [];
        for (const [i, email] of ['tess@example.com', 'TESS@example.com', 'tess@example.com'].entries()) {
          answers.push(await ask({ email }));
          await handled(i + 1);
        }
        assert.deepEqual(answers.map((r) => r.status), [200, 200, 200]);
        assert.equal(new Set(await Promise.all(answers.map((r) => r.text()))).size, 1, 'the throttled ask is answered as the others');
        assert.equal((await settle(3)).length, 2);
        assert.deepEqual(audit.of('registration.requested').map((e) => e.outcome), ['link_sent', 'link_sent', 'throttled']);
        assert.equal((await ask({ email: 'other@example.com' })).status, 200);
        const limited = await ask({ email: 'another@example.com' });
        assert.equal(limited.status, 429);
        assert.equal(limited.headers.get('retry-after'), '3600');
      } finally {
        await server.close();
      }
    });

    test('a known and an unknown address get the same answer: status, body, headers, and timing within noise', async () => {
      const { server, ask, handled, settle } = await setUp({ GATEHOUSE_REGISTRATIONS_PER_EMAIL: '0', GATEHOUSE_REGISTRATIONS_PER_ADDRESS: '0' });
      try {
        await createTestUser(server.gatehouse.store, { username: 'kim', password: PASSWORD, email: 'kim@example.com' });
        const jar = new CookieJar();
        const comparable = async (response: Response) => {
          const headers = [...response.headers].filter(([name]) => name !== 'date');
          return { status: response.status, headers, body: await response.text() };
        };
        const known = await comparable(await ask({ email: 'kim@example.com' }, jar));
        const unknown = await comparable(await ask({ email: 'no-such-person@example.com' }, jar));
        assert.deepEqual(unknown, known);
        let asks = 2;
        await settle(asks);
        const TRIES = 50;

        // Timing, as password reset's enumeration test: alternating asks timed by a client in
        // another process, each ask's own work finished before the next starts.
        const page = await (await browse(`${server.url}/uas/account/register`, jar)).text();
        const fields = formFields(page);
        const action = new URL(formAction(page), server.url).toString();
        const client = fork(join(import.meta.dirname, '..', 'helpers', 'timed-client.ts'), { stdio: 'ignore' });
        const timed = (email: string) =>
          new Promise<{ status: number; ms: number }>((resolve) => {
            client.once('message', (answer: { status: number; ms: number }) => resolve(answer));
            client.send({ url: action, form: fields.map(([name, value]) => [name, name === 'email' ? email : value]), cookie: jar.header().cookie ?? '' });
          });
        // Judged as the reset test judges (lower quartile, and loosely the median), in up to three
        // rounds: a machine shared with other work adds noise to one round now and then, but an
        // answer that waits for the account's work is slower in every round (seen failing so).
        const quantile = (values: number[], at: number) => [...values].sort((a, b) => a - b)[Math.floor(values.length * at)]!;
        const verdicts: string[] = [];
        try {
          await timed('warm-up@example.com');
          await handled((asks += 1));
          for (let round = 0; round < 3; round++) {
            const times: Record<'known' | 'unknown', number[]> = { known: [], unknown: [] };
            for (let i = 0; i < TRIES; i++) {
              for (const which of i % 2 === 0 ? (['known', 'unknown'] as const) : (['unknown', 'known'] as const)) {
                const answer = await timed(which === 'known' ? 'kim@example.com' : `nobody-${round}-${i}@example.com`);
                assert.equal(answer.status, 200);
                times[which].push(answer.ms);
                // No mail is sent meanwhile: the SMTP exchanges would be noise.
                await handled((asks += 1));
              }
            }
            const [k25, u25, k50, u50] = [quantile(times.known, 0.25), quantile(times.unknown, 0.25), quantile(times.known, 0.5), quantile(times.unknown, 0.5)];
            verdicts.push(`lower quartiles known ${k25.toFixed(2)} ms, unknown ${u25.toFixed(2)} ms; medians ${k50.toFixed(2)} ms, ${u50.toFixed(2)} ms`);
            if (Math.abs(k25 - u25) <= Math.max(0.35, 0.2 * Math.min(k25, u25)) && Math.abs(k50 - u50) <= Math.max(1, 0.3 * Math.min(k50, u50))) break;
            if (round === 2) assert.fail(`timing differs in every round: ${verdicts.join('; ')}`);
          }
        } finally {
          client.disconnect();
        }
      } finally {
        await server.close();
      }
    });

    test('two links of one address followed at once make one account', async () => {
      const { server, audit, ask, settle } = await setUp({ GATEHOUSE_REGISTRATIONS_PER_EMAIL: '0' });
      try {
        for (let i = 0; i < 4; i++) assert.equal((await ask({ email: 'twice@example.com' })).status, 200);
        const links = (await settle(4)).map(linkIn);
        const forms = await Promise.all(
          links.map(async (link) => {
            const jar = new CookieJar();
            const html = await (await browse(link, jar)).text();
            return { jar, action: new URL(formAction(html), server.url).toString(), fields: formFields(html).map(([name, value]): [string, string] => [name, name === 'password' || name === 'confirmation' ? PASSWORD : value]) };
          }),
        );
        const results = await Promise.all(forms.map((f) => submit(f.action, f.fields, f.jar)));
        assert.deepEqual(results.map((r) => r.status).sort(), [200, 409, 409, 409]);
        assert.equal((await server.gatehouse.store.users.list({ filters: { email: 'twice@example.com' }, exactMatch: true })).length, 1);
        assert.equal(audit.of('registration.completed').length, 1);
        assert.equal(audit.of('registration.refused').length, 3);
      } finally {
        await server.close();
      }
    });

    test('the password policy of every front end: the configured minimum, not the username (the address), the page says which rule', async () => {
      const { server, ask, settle, follow } = await setUp({ GATEHOUSE_PASSWORD_MIN_LENGTH: '12' });
      try {
        assert.equal((await ask({ email: 'policy@example.com' })).status, 200);
        const link = linkIn((await settle(1))[0]!);
        const alertOf = async (answer: Response | undefined) => /<p[^>]*role="alert"[^>]*>([^<]*)</.exec(await answer!.text())?.[1];
        const short = await follow(link, 'sea otter 7');
        assert.equal(short.result?.status, 400, '11 characters pass the default 8, not this policy');
        assert.equal(await alertOf(short.result), 'The password must be at least 12 characters long.');
        assert.match(await (await browse(link)).text(), /name="password"[^>]*minlength="12"/);
        const own = await follow(link, 'policy@example.com');
        assert.equal(own.result?.status, 400);
        assert.equal(await alertOf(own.result), 'The password must not be your username or e-mail address.');
        assert.equal(await server.gatehouse.store.users.getByUsername('policy@example.com'), undefined);
        assert.equal((await follow(link)).result?.status, 200, 'the link was left usable');
      } finally {
        await server.close();
      }
    });

    test('malformed and oversized input is answered 4xx, never 5xx; a refused password leaves the link usable', async () => {
      const { server, ask, settle, follow } = await setUp();
      try {
        const register = `${server.url}/uas/account/register`;
        assert.equal((await ask({ email: '' })).status, 400);
        assert.equal((await ask({ email: 'not an address' })).status, 400);
        // RFC 5322 specials a mail library would read as a display name: delivered to `postmaster`, not to example.com.
        for (const email of ['a<postmaster>x@example.com', 'a(comment)@example.com', 'a,b@example.com', '"a b"@example.com', 'a@[127.0.0.1]', 'a;b@example.com']) assert.equal((await ask({ email })).status, 400, email);
        assert.equal((await ask({ email: `${'x'.repeat(250)}@example.com` })).status, 400);
        assert.equal((await ask({ email: 'a@example.com', given_name: 'y'.repeat(201) })).status, 400);
        assert.equal((await ask({ email: 'a@example.com', family_name: 'tab\there' })).status, 400);
        const jar = new CookieJar();
        const html = await (await browse(register, jar)).text();
        const csrf = formFields(html).find(([name]) => name === 'csrf_token')![1];
        assert.equal((await submit(register, [['csrf_token', csrf], ['email', 'a@example.com'], ['email', 'b@example.com']], jar)).status, 400, 'a repeated field');
        assert.equal((await submit(register, [['email', 'a@example.com']], jar)).status, 403, 'no CSRF token');
        assert.equal((await submit(register, [['csrf_token', csrf], ['email', 'y'.repeat(200_000)]], jar)).status < 500, true);
        const json = await fetch(register, { method: 'POST', headers: { 'content-type': 'application/json', ...jar.header() }, body: '{"email":"x@example.com"}' });
        assert.equal(json.status, 400);

        const finish = `${server.url}/uas/account/register/finish`;
        for (const query of ['', '?token=', '?token=short', `?token=${'A'.repeat(43)}`, `?token=${'A'.repeat(5000)}`, '?token=a&token=b']) assert.equal((await browse(`${finish}${query}`)).status, 410, query);
        assert.equal((await submit(finish, [['csrf_token', csrf], ['token', 'A'.repeat(43)], ['password', PASSWORD], ['confirmation', PASSWORD]], jar)).status, 410);

        assert.equal((await ask({ email: 'mal@example.com' })).status, 200);
        const link = linkIn((await settle(1))[0]!);
        const token = new URL(link).searchParams.get('token')!;
        assert.equal((await submit(finish, [['csrf_token', csrf], ['token', token], ['password', 'short'], ['confirmation', 'short']], jar)).status, 400);
        assert.equal((await submit(finish, [['csrf_token', csrf], ['token', token], ['password', PASSWORD], ['confirmation', 'something else']], jar)).status, 400);
        assert.equal((await submit(finish, [['csrf_token', csrf], ['token', token], ['password', 'z'.repeat(1025)], ['confirmation', 'z'.repeat(1025)]], jar)).status, 400);
        assert.equal((await submit(finish, [['token', token], ['password', PASSWORD], ['confirmation', PASSWORD]], jar)).status, 403, 'no CSRF token');
        assert.equal((await submit(finish, [['csrf_token', csrf], ['token', token], ['password', PASSWORD], ['password', 'x'], ['confirmation', PASSWORD]], jar)).status, 400, 'a repeated field');
        // None of these spent the link, nor made an account.
        assert.equal(await server.gatehouse.store.users.getByUsername('mal@example.com'), undefined);
        assert.equal((await follow(link)).result?.status, 200);
      } finally {
        await server.close();
      }
    });
  });
}

describe('self-registration settings', () => {
  test('off by default: no link on the login page, the page says it is off', async () => {
    const smtp = await startSmtpServer();
    const server = await startServer(DATABASES[0]!, { env: { ...mailEnv(smtp), GATEHOUSE_REGISTRATION: 'off' } });
    try {
      const { client } = await addClient(server.gatehouse.store);
      const login = await browse(`${server.url}/uas/oauth2/authorization?${new URLSearchParams({ response_type: 'code', client_id: client.clientId, redirect_uri: REDIRECT_URI, scope: 'openid' })}`);
      const html = await login.text();
      assert.doesNotMatch(html, /account\/register/);
      assert.match(html, /forgot-password/, 'mail is on: the reset link is there');
      const page = await browse(`${server.url}/uas/account/register`);
      assert.equal(page.status, 404);
      assert.match(await page.text(), /cannot create an account here yourself/);
    } finally {
      await server.close();
      await smtp.stop();
    }
  });

  test('invitation: no self-registration form', async () => {
    const smtp = await startSmtpServer();
    const server = await startServer(DATABASES[0]!, { env: mailEnv(smtp, { GATEHOUSE_REGISTRATION: 'invitation' }) });
    try {
      assert.equal((await browse(`${server.url}/uas/account/register`)).status, 404);
    } finally {
      await server.close();
      await smtp.stop();
    }
  });

  test('start-up refuses registration without mail, domain mode without domains, and an organization that cannot take users', async () => {
    assert.throws(() => loadConfig({ GATEHOUSE_REGISTRATION: 'open' }), { message: 'GATEHOUSE_REGISTRATION: open needs mail: set GATEHOUSE_SMTP_URL and GATEHOUSE_MAIL_FROM (docs/mail.md), or set it to off' });
    const mail = { GATEHOUSE_SMTP_URL: 'smtp://127.0.0.1:2525', GATEHOUSE_SMTP_STARTTLS: 'off', GATEHOUSE_MAIL_FROM: FROM };
    assert.throws(() => loadConfig({ ...mail, GATEHOUSE_REGISTRATION: 'domain' }), { message: 'GATEHOUSE_REGISTRATION_DOMAINS: is required with GATEHOUSE_REGISTRATION=domain: name the e-mail domains that may register' });
    assert.throws(() => loadConfig({ ...mail, GATEHOUSE_REGISTRATION_DOMAINS: 'example.com, not a domain' }), { message: 'GATEHOUSE_REGISTRATION_DOMAINS: "not a domain" is not a domain name such as example.com' });
    assert.throws(() => loadConfig({ ...mail, GATEHOUSE_REGISTRATION_FIELDS: 'given_name,nickname' }), { message: 'GATEHOUSE_REGISTRATION_FIELDS: "nickname" is not one of given_name, family_name' });
    assert.deepEqual(loadConfig({ ...mail, GATEHOUSE_REGISTRATION: 'open' }).registrationApproval, false);
    await assert.rejects(startServer(DATABASES[0]!, { env: { ...mail, GATEHOUSE_REGISTRATION: 'open', GATEHOUSE_REGISTRATION_ORGANIZATION: 'no-such-org' } }), {
      message: 'GATEHOUSE_REGISTRATION_ORGANIZATION: organization "no-such-org" does not exist (neither an id nor a technical name)',
    });
  });
});

describe('pending registrations in the console', () => {
  test('listed under Users; approve and reject after a confirmation; the mails arrive', { timeout: 120_000 }, async () => {
    const smtp = await startSmtpServer();
    const audit = new AwaitedAudit();
    const server = await startServer(DATABASES[0]!, { env: mailEnv(smtp, { GATEHOUSE_REGISTRATION_APPROVAL: 'on' }), audit });
    try {
      await bootstrap({ databaseUrl: server.database.url, issuer: server.issuer }, 'console-admin', 'console admin password 1');
      const { jar } = await consoleSignIn(server.url, 'console-admin', 'console admin password 1');
      const store = server.gatehouse.store;
      const vera = await createTestUser(store, { username: 'vera@example.com', password: PASSWORD, email: 'vera@example.com', status: 'pending', givenName: 'Vera', familyName: 'V' });
      const walt = await createTestUser(store, { username: 'walt@example.com', password: PASSWORD, email: 'walt@example.com', status: 'pending' });
      const users = await (await browse(`${server.url}/manage/users`, jar)).text();
      assert.match(users, /<p><a href="\/manage\/registrations">Pending registrations<\/a><\/p>/);
      assert.match(users, /<td>vera@example\.com<\/td><td>awaiting approval<\/td><\/tr>/, 'a pending user\'s status in the list');
      const list = await (await browse(`${server.url}/manage/registrations`, jar)).text();
      const rows = [...list.matchAll(/<tr><td>([^<]+)<\/td><td>([^<]*)<\/td>/g)].map((m) => [m[1], m[2]]);
      assert.deepEqual(rows, [['vera@example.com', 'Vera V'], ['walt@example.com', '']]);
      assert.match(list, new RegExp(`<a href="/manage/registrations/${vera.id}/approve" aria-label="Approve vera@example.com">Approve</a>`));

      const origin = new URL(server.issuer).origin;
      for (const [user, verb, done] of [[vera, 'approve', 'approved'], [walt, 'reject', 'rejected']] as const) {
        const path = `/manage/registrations/${user.id}/${verb}`;
        const confirm = await (await browse(`${server.url}${path}`, jar)).text();
        assert.match(confirm, verb === 'approve' ? /Approve the registration of “vera@example.com”\?/ : /Reject the registration of “walt@example.com”\?/);
        const token = formFields(confirm).find(([name]) => name === 'csrf_token')![1];
        const posted = await submit(`${server.url}${path}`, [['csrf_token', token]], jar, { origin, referer: `${origin}${path}` });
        assert.equal(posted.status, 303);
        assert.equal(posted.headers.get('location'), `/manage/registrations?done=${done}`);
      }
      assert.equal((await store.users.getProfile(vera.id))?.status, 'enabled');
      assert.equal(await store.users.getProfile(walt.id), undefined);
      assert.deepEqual([audit.of('registration.approved').map((e) => e.userId), audit.of('registration.rejected').map((e) => e.userId)], [[vera.id], [walt.id]]);
      await server.gatehouse.outbox.sender.tick();
      assert.deepEqual(smtp.received.map((m) => [m.to, m.subject]).sort((a, b) => String(a[0]).localeCompare(String(b[0]))), [
        [['vera@example.com'], 'Your gatehouse account is ready'],
        [['walt@example.com'], 'Your gatehouse registration was not approved'],
      ]);
      const after = await (await browse(`${server.url}/manage/registrations?done=rejected`, jar)).text();
      assert.match(after, /The registration is rejected: the account is deleted\./);
    } finally {
      await server.close();
      await smtp.stop();
    }
  });
});
