/**
 * The account page (issue 25 item 6; docs/account.md; decisions AM80–AM89) over real HTTP, on
 * every database: the overview and its sections ask for a sign-in without a session and come back
 * to the section asked for; the back link is only ever the registered client's own home; the
 * password changes by the current password (under the login throttle) or a recent sign-in, ends
 * the other sessions and revokes the tokens not issued in this one; sessions are listed with their
 * browser and end one by one or all others; consents are listed in words and withdrawn with the
 * client's tokens; every POST needs the CSRF token and the issuer's Origin; another user's session
 * or consent is untouchable; hostile input is a clear answer, never a 5xx (the test server fails
 * close() on any 5xx).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Client } from '../../src/domain/client.ts';
import type { User } from '../../src/domain/user.ts';
import { verifyCredentials } from '../../src/oauth/authorize/verify-credentials.ts';
import { ManualClock } from '../../src/lib/clock.ts';
import { cryptoRandom } from '../../src/lib/random.ts';
import { createSession } from '../../src/oauth/sessions.ts';
import { AuditCapture } from '../helpers/audit.ts';
import { basic, postForm } from '../helpers/back-channel.ts';
import { DATABASES } from '../helpers/databases.ts';
import { enrolTotp, totpAt } from '../helpers/factors.ts';
import { aStoredUser } from '../helpers/store.ts';
import { browse, CookieJar, createTestClient, createTestUser, formAction, formFields, loginThroughForm, redirectParams, submit } from '../helpers/fixtures.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';

const PASSWORD = 'my account, my rules 1';
const NEW_PASSWORD = 'a brand new passphrase 2';
const FIREFOX = 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0';
const SAFARI_IOS = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1';

for (const db of DATABASES) {
  describe(`the account page on ${db.name}`, () => {
    const clock = new ManualClock(Date.now());
    const audit = new AuditCapture();
    let server: RunningServer;
    let app: { client: Client; clientSecret: string };
    let partner: { client: Client; clientSecret: string };
    const url = (path: string) => `${server.url}/uas/account${path}`;

    before(async () => {
      server = await startServer(db, { clock, audit, env: { GATEHOUSE_THROTTLE_USER_FAILURES: '2', GATEHOUSE_PASSWORD_MIN_LENGTH: '12' } });
      app = await createTestClient(server.gatehouse.store, { name: 'Staff Portal', refreshTokens: true, redirectUris: ['https://portal.example.test/callback', 'https://other.example.test/cb'], metadata: { 'client_name#fi': 'Henkilöstöportaali' } });
      partner = await createTestClient(server.gatehouse.store, { name: 'Partner App', refreshTokens: true, metadata: { consent_required: true } });
    });
    after(async () => server.close());

    const fieldsOf = (html: string) => Object.fromEntries(formFields(html));
    /** A form post as a browser on the page sends it: with the issuer's Origin. */
    const post = (action: string, form: Record<string, string>, jar: CookieJar, headers: Record<string, string> = { origin: server.url }) => submit(new URL(action, server.url).toString(), form, jar, headers);
    const newUser = () => createTestUser(server.gatehouse.store, { password: PASSWORD, givenName: 'Ada', familyName: 'Lovelace', email: 'ada@example.test' });

    /** Signs `user` in on the account page itself, by `userAgent`'s browser; the browser's cookies. */
    async function signedIn(user: User, userAgent = FIREFOX, password = PASSWORD): Promise<CookieJar> {
      const jar = new CookieJar();
      const html = await (await browse(url(''), jar, { 'user-agent': userAgent })).text();
      const answer = await submit(new URL(formAction(html), server.url).toString(), { ...fieldsOf(html), username: user.username, password }, jar, { origin: server.url, 'user-agent': userAgent });
      assert.equal(answer.status, 303);
      return jar;
    }

    async function page(path: string, jar: CookieJar, status = 200): Promise<string> {
      const response = await browse(url(path), jar);
      assert.equal(response.status, status);
      return response.text();
    }

    /** The form whose action's path ends with `suffix`, as the browser would post it. */
    function formOf(html: string, suffix: string, extra: Record<string, string> = {}, nth = 0): { action: string; fields: Record<string, string> } {
      const matches = [...html.matchAll(/<form\b[^>]*\baction="([^"]*)"[^>]*>([\s\S]*?)<\/form>/g)].filter((m) => m[1]!.replace(/&amp;/g, '&').split('?')[0]!.endsWith(suffix));
      const match = matches[nth];
      assert.ok(match, `a form posting to …${suffix}`);
      return { action: match[1]!.replace(/&amp;/g, '&'), fields: { ...fieldsOf(match[2]!), ...extra } };
    }

    /** Signs in through the login page for `client` (a new session of the browser `jar`) and exchanges the code: the tokens. */
    async function tokensFor(user: User, jar: CookieJar, client: { client: Client; clientSecret: string }): Promise<{ refresh_token: string; access_token: string }> {
      const query = { client_id: client.client.clientId, redirect_uri: client.client.redirectUris[0]!, response_type: 'code', scope: 'openid', state: 's' };
      let response = await loginThroughForm({ baseUrl: server.url, jar }, query, { username: user.username, password: PASSWORD });
      if (response.status === 200) {
        // A third-party client: its consent page, allowed.
        const html = await response.text();
        response = await submit(new URL(formAction(html), server.url).toString(), [...formFields(html), ['decision', 'allow']], jar);
      }
      const code = redirectParams(response).get('code');
      assert.ok(code, `a code (${response.status})`);
      const tokens = await postForm(`${server.url}/uas/oauth2/token`, { grant_type: 'authorization_code', code, redirect_uri: client.client.redirectUris[0]! }, { authorization: basic(client.client.clientId, client.clientSecret) });
      assert.equal(tokens.status, 200, JSON.stringify(tokens.body));
      return tokens.body as { refresh_token: string; access_token: string };
    }

    const refreshes = async (client: { client: Client; clientSecret: string }, refreshToken: string) =>
      (await postForm(`${server.url}/uas/oauth2/token`, { grant_type: 'refresh_token', refresh_token: refreshToken }, { authorization: basic(client.client.clientId, client.clientSecret) })).status;
    const passwordIs = async (user: User, password: string) => (await verifyCredentials({ store: server.gatehouse.store, clock }, user.username, password)).ok;
    const signedInAt = async (jar: CookieJar) => !/name="password"/.test(await page('', jar));

    test('without a session every section is the sign-in form, strict CSP, no-store, same-origin referrer; signing in comes back to the section with its client_id', async () => {
      for (const section of ['', '/password', '/sessions', '/applications']) {
        const jar = new CookieJar();
        const response = await browse(`${url(section)}?client_id=${encodeURIComponent(app.client.clientId)}`, jar);
        assert.equal(response.status, 200);
        assert.equal(response.headers.get('cache-control'), 'no-store');
        const csp = response.headers.get('content-security-policy') ?? '';
        assert.match(csp, /default-src 'none'/);
        assert.doesNotMatch(csp, /script-src/);
        assert.equal(response.headers.get('referrer-policy'), 'same-origin');
        const html = await response.text();
        assert.equal(formAction(html), '/uas/account/security/sign-in');
        const fields = fieldsOf(html);
        assert.deepEqual([fields.section, fields.client_id], [section === '' ? 'overview' : section.slice(1), app.client.clientId]);
        const user = await newUser();
        const answer = await post(formAction(html), { ...fields, username: user.username, password: PASSWORD }, jar);
        assert.equal(answer.status, 303);
        assert.equal(answer.headers.get('location'), `/uas/account${section}?client_id=${encodeURIComponent(app.client.clientId)}`);
      }
    });

    test('with a second factor: the code step carries the section and the client_id, and comes back to them', async () => {
      const user = await newUser();
      const secret = await enrolTotp(server.gatehouse.store, user.id, clock.now());
      const jar = new CookieJar();
      const html = await (await browse(`${url('/applications')}?client_id=${encodeURIComponent(app.client.clientId)}`, jar)).text();
      const codePage = await (await post(formAction(html), { ...fieldsOf(html), username: user.username, password: PASSWORD }, jar)).text();
      assert.deepEqual([fieldsOf(codePage).section, fieldsOf(codePage).client_id], ['applications', app.client.clientId]);
      const done = await post(formAction(codePage), { ...fieldsOf(codePage), code: totpAt(secret, clock.now()) }, jar);
      assert.equal(done.status, 303);
      assert.equal(done.headers.get('location'), `/uas/account/applications?client_id=${encodeURIComponent(app.client.clientId)}`);
    });

    test('a sign-in form naming no known section comes back to the security page, as before', async () => {
      const jar = new CookieJar();
      const html = await page('', jar);
      const answer = await post(formAction(html), { ...fieldsOf(html), section: 'https://evil.example/', username: (await newUser()).username, password: PASSWORD }, jar);
      assert.equal(answer.headers.get('location'), '/uas/account/security');
    });

    test('the overview: who is signed in, the navigation on every section, and the back link to the client’s own home only', async () => {
      const user = await newUser();
      const jar = await signedIn(user);
      const html = await page(`?client_id=${encodeURIComponent(app.client.clientId)}`, jar);
      assert.match(html, new RegExp(`<dd>${user.username}</dd>`));
      assert.match(html, /<dd>Ada Lovelace<\/dd>/);
      assert.match(html, /<dd>ada@example.test<\/dd>/);
      const nav = /<nav class="account-nav"[^>]*>([\s\S]*?)<\/nav>/.exec(html)?.[1] ?? '';
      const id = encodeURIComponent(app.client.clientId);
      assert.deepEqual(
        [...nav.matchAll(/<a href="([^"]*)"[^>]*>([^<]*)<\/a>/g)].map((m) => [m[1], m[2]]),
        [
          [`/uas/account?client_id=${id}`, 'Overview'],
          [`/uas/account/profile?client_id=${id}`, 'Profile'],
          [`/uas/account/password?client_id=${id}`, 'Password'],
          [`/uas/account/security?client_id=${id}`, 'Security'],
          [`/uas/account/sessions?client_id=${id}`, 'Sessions'],
          [`/uas/account/applications?client_id=${id}`, 'Applications'],
          ['https://portal.example.test/', 'Back to Staff Portal'],
        ],
      );
      assert.match(nav, /<a href="\/uas\/account\?client_id=[^"]*" aria-current="page">Overview<\/a>/);
      // Every section shows it, the security page too, in the page's language.
      for (const section of ['/password', '/sessions', '/applications', '/security']) {
        const shown = await page(`${section}?client_id=${id}`, jar);
        assert.match(shown, /<p class="back-link"><a href="https:\/\/portal.example.test\/">Back to Staff Portal<\/a><\/p>/, section);
      }
      const fi = await (await browse(`${url('/sessions')}?client_id=${id}&ui_locales=fi`, jar)).text();
      assert.match(fi, /<a href="https:\/\/portal.example.test\/">Takaisin palveluun Henkilöstöportaali<\/a>/);
      assert.match(fi, /<html lang="fi">/);
      const sv = await (await browse(`${url('')}?client_id=${id}`, jar, { 'accept-language': 'sv-SE, en;q=0.5' })).text();
      assert.match(sv, /<nav class="account-nav" aria-label="Konto">/);
      assert.match(sv, /<a href="https:\/\/portal.example.test\/">Tillbaka till Staff Portal<\/a>/);
      // Never a URL from the query: an unknown client, a URL as client_id, a return_to.
      for (const query of ['?client_id=nope', `?client_id=${encodeURIComponent('https://evil.example/')}`, `?client_id=${id}&return_to=${encodeURIComponent('https://evil.example/')}`, `?client_id=${'x'.repeat(5000)}`]) {
        const shown = await page(query, jar);
        assert.doesNotMatch(shown, /evil\.example/);
        if (!query.includes('return_to')) assert.doesNotMatch(shown, /class="back-link"/);
      }
    });

    test('a native client gets no back link (its redirect URIs are no pages)', async () => {
      const { client } = await createTestClient(server.gatehouse.store, { redirectUris: ['com.example.app:/cb'], metadata: { application_type: 'native' } });
      const html = await page(`?client_id=${encodeURIComponent(client.clientId)}`, await signedIn(await newUser()));
      assert.doesNotMatch(html, /class="back-link"/);
    });

    test('password change by the current password: the other sessions end and their tokens are revoked, this session and its tokens stay', async () => {
      const user = await newUser();
      const here = new CookieJar();
      const there = new CookieJar();
      const mine = await tokensFor(user, here, app);
      const theirs = await tokensFor(user, there, app);
      clock.advance(3600_000 / 2 - 1000);
      // Signed in half an hour ago: the current password is asked for.
      const html = await page('/password', here);
      assert.match(html, /name="current_password"/);
      const form = formOf(html, '/password');
      const wrong = await post(form.action, { ...form.fields, current_password: 'not it', new_password: NEW_PASSWORD, confirm_password: NEW_PASSWORD }, here);
      assert.equal(wrong.status, 401);
      assert.match(await wrong.text(), /The current password is incorrect/);
      const right = await post(form.action, { ...form.fields, current_password: PASSWORD, new_password: NEW_PASSWORD, confirm_password: NEW_PASSWORD }, here);
      assert.equal(right.status, 303);
      assert.equal(right.headers.get('location'), '/uas/account/password?notice=password_changed');
      assert.match(await page('/password?notice=password_changed', here), /Your password was changed/);
      assert.deepEqual([await passwordIs(user, NEW_PASSWORD), await passwordIs(user, PASSWORD)], [true, false]);
      assert.deepEqual([await signedInAt(here), await signedInAt(there)], [true, false], 'this browser stays, the other is signed out');
      assert.deepEqual([await refreshes(app, mine.refresh_token), await refreshes(app, theirs.refresh_token)], [200, 400]);
      const event = audit.of('account.password_changed').find((e) => e.userId === user.id);
      assert.deepEqual(event && { by: event.by, sessionsEnded: event.sessionsEnded, revoked: event.revoked }, { by: 'current_password', sessionsEnded: 1, revoked: 2 });
    });

    test('two password changes at once, from two browsers: exactly one wins, the other changes nothing (409, or 401 once signed out by the winner)', async () => {
      const user = await newUser();
      const jars = [await signedIn(user), await signedIn(user, SAFARI_IOS)];
      clock.advance(server.config.accountReauthWindow * 1000 + 1000);
      const forms = await Promise.all(jars.map(async (jar) => formOf(await page('/password', jar), '/password')));
      const chosen = [`${NEW_PASSWORD} one`, `${NEW_PASSWORD} two`];
      const answers = await Promise.all(jars.map((jar, i) => post(forms[i]!.action, { ...forms[i]!.fields, current_password: PASSWORD, new_password: chosen[i]!, confirm_password: chosen[i]! }, jar)));
      // The loser either finds the password changed (409) or, when its request came in after the
      // winner's commit had already ended its session, no session at all (401): never a second 303.
      const statuses = answers.map((a) => a.status);
      assert.equal(statuses.filter((status) => status === 303).length, 1, `one winner: ${statuses.join(', ')}`);
      const winner = statuses.indexOf(303);
      assert.ok([401, 409].includes(statuses[1 - winner]!), `the loser: ${statuses[1 - winner]}`);
      assert.deepEqual([await passwordIs(user, chosen[winner]!), await passwordIs(user, chosen[1 - winner]!), await passwordIs(user, PASSWORD)], [true, false, false]);
      assert.deepEqual([await signedInAt(jars[winner]!), await signedInAt(jars[1 - winner]!)], [true, false], 'the loser\'s session was ended by the winner\'s change');
    });

    test('a wrong current password counts against the login throttle of the username', async () => {
      const user = await newUser();
      const jar = await signedIn(user);
      clock.advance(600_000);
      const form = formOf(await page('/password', jar), '/password');
      const attempt = () => post(form.action, { ...form.fields, current_password: 'not it', new_password: NEW_PASSWORD, confirm_password: NEW_PASSWORD }, jar);
      assert.equal((await attempt()).status, 401);
      const throttled = await attempt();
      assert.equal(throttled.status, 429);
      assert.ok(Number(throttled.headers.get('retry-after')) > 0);
      // The same throttle as the login page's: the right password is refused there too, for now.
      const loginJar = new CookieJar();
      const loginPage = await page('', loginJar);
      const login = await post(formAction(loginPage), { ...fieldsOf(loginPage), username: user.username, password: 'still not it' }, loginJar);
      assert.equal(login.status, 429);
      assert.equal(await passwordIs(user, PASSWORD), true, 'nothing changed');
    });

    test('password change after a recent sign-in: no current password asked for; later, an empty one is refused', async () => {
      const user = await newUser();
      const jar = await signedIn(user);
      const html = await page('/password', jar);
      assert.doesNotMatch(html, /name="current_password"/);
      assert.match(html, /You signed in a moment ago/);
      const form = formOf(html, '/password');
      clock.advance(server.config.accountReauthWindow * 1000 + 1000);
      const stale = await post(form.action, { ...form.fields, new_password: NEW_PASSWORD, confirm_password: NEW_PASSWORD }, jar);
      assert.equal(stale.status, 401);
      assert.match(await stale.text(), /Enter your current password/);
      assert.equal(await passwordIs(user, PASSWORD), true);

      const fresh = await signedIn(user);
      const done = await post(formOf(await page('/password', fresh), '/password').action, { ...fieldsOf(await page('/password', fresh)), new_password: NEW_PASSWORD, confirm_password: NEW_PASSWORD }, fresh);
      assert.equal(done.status, 303);
      assert.equal(await passwordIs(user, NEW_PASSWORD), true);
      assert.equal(audit.of('account.password_changed').find((e) => e.userId === user.id)?.by, 'recent_sign_in');
    });

    test('a user without a password (passkey-only) sets one after a recent sign-in; after the window, is told to sign in again', async () => {
      const user = await aStoredUser(server.gatehouse.store, { status: 'enabled' });
      // Their session as a passkey sign-in at the login page makes it (sessions.ts createSession).
      const started = await createSession({ config: server.config, store: server.gatehouse.store, clock, random: cryptoRandom }, { userId: user.id, amr: ['hwk', 'user'] });
      const jar = new CookieJar();
      jar.cookies.set('gatehouse_session', started.cookieValue);
      const html = await page('/password', jar);
      assert.match(html, /You have no password yet/);
      assert.doesNotMatch(html, /name="current_password"/);
      const form = formOf(html, '/password');
      clock.advance(server.config.accountReauthWindow * 1000 + 1000);
      assert.match(await page('/password', jar), /You signed in too long ago to set a password/);
      const stale = await post(form.action, { ...form.fields, new_password: NEW_PASSWORD, confirm_password: NEW_PASSWORD }, jar);
      assert.equal(stale.status, 401);
      assert.equal(await passwordIs(user, NEW_PASSWORD), false);
      const fresh = await createSession({ config: server.config, store: server.gatehouse.store, clock, random: cryptoRandom }, { userId: user.id, amr: ['hwk', 'user'] });
      jar.cookies.set('gatehouse_session', fresh.cookieValue);
      const done = await post(form.action, { ...form.fields, new_password: NEW_PASSWORD, confirm_password: NEW_PASSWORD }, jar);
      assert.equal(done.status, 303);
      assert.equal(await passwordIs(user, NEW_PASSWORD), true);
      assert.deepEqual([await signedInAt(jar), (await server.gatehouse.store.sessions.findLive(started.session.idHash, clock.now())) === undefined], [true, true], 'the stale session was ended, this one kept');
    });

    test('a refused new password: different twice, under the configured minimum, common, the username or address, huge — 400 with the policy’s reason, nothing changed', async () => {
      const user = await newUser();
      const jar = await signedIn(user);
      const form = formOf(await page('/password', jar), '/password');
      const twice = (password: string) => ({ new_password: password, confirm_password: password });
      const cases: [Record<string, string>, string][] = [
        [{ new_password: NEW_PASSWORD, confirm_password: `${NEW_PASSWORD}!` }, 'The two passwords are not the same.'],
        // GATEHOUSE_PASSWORD_MIN_LENGTH=12: 11 characters pass the default 8, not this server's policy.
        [twice('sea otter 7'), 'The password must be at least 12 characters long.'],
        [twice('QWERTY123456'), 'This password is one of the most commonly used ones, which attackers try first. Choose another.'],
        [twice(user.username), 'The password must not be your username or e-mail address.'],
        [twice('ada@example.test'), 'The password must not be your username or e-mail address.'],
        [twice('x'.repeat(3000)), 'The password must be at most 1024 characters long.'],
      ];
      for (const [fields, text] of cases) {
        const answer = await post(form.action, { ...form.fields, ...fields }, jar);
        assert.equal(answer.status, 400);
        const html = await answer.text();
        assert.equal(/<p[^>]*role="alert"[^>]*>([^<]*)</.exec(html)?.[1], text);
        assert.match(html, /id="new_password"[^>]*aria-invalid="true"/);
      }
      assert.equal(await passwordIs(user, PASSWORD), true);
    });

    test('sessions: listed with their browser, this one marked; end the other, then all others; its SSO is gone', async () => {
      const user = await newUser();
      const here = await signedIn(user, FIREFOX);
      clock.advance(1000);
      const phone = await signedIn(user, SAFARI_IOS);
      clock.advance(1000);
      const laptop = await signedIn(user, 'curl/8.0');
      const html = await page('/sessions', here);
      const rows = [...html.matchAll(/<tr>\s*<th scope="row">([^<]*)<\/th>[\s\S]*?<\/tr>/g)].map((m) => [m[1], /This device/.test(m[0])]);
      assert.deepEqual(rows, [
        ['Unknown device', false],
        ['Safari on iOS', false],
        ['Firefox on Linux', true],
      ]);
      assert.match(html, /<td>127\.0\.0\.1<\/td>|<td>::1<\/td>|<td>::ffff:127\.0\.0\.1<\/td>/);
      const end = formOf(html, '/sessions/end', {}, 1);
      const ended = await post(end.action, end.fields, here);
      assert.equal(ended.status, 303);
      assert.equal(ended.headers.get('location'), '/uas/account/sessions?notice=session_ended');
      assert.deepEqual([await signedInAt(here), await signedInAt(phone), await signedInAt(laptop)], [true, false, true]);
      const again = await post(end.action, end.fields, here);
      assert.equal(again.status, 404, 'already ended: no such session');
      const others = formOf(await page('/sessions', here), '/sessions/end-others');
      assert.equal((await post(others.action, others.fields, here)).status, 303);
      assert.deepEqual([await signedInAt(here), await signedInAt(laptop)], [true, false]);
      assert.doesNotMatch(await page('/sessions', here), /\/sessions\/end-others/, 'no other session left to end');
      assert.equal(audit.of('account.session_ended').filter((e) => e.userId === user.id).length, 1);
      assert.equal(audit.of('account.other_sessions_ended').find((e) => e.userId === user.id)?.sessionsEnded, 1);
    });

    test('the recorded User-Agent is cut at 256 characters; one sent without any lists as an unknown device', async () => {
      const user = await newUser();
      const long = `${FIREFOX} ${'x'.repeat(2000)}`;
      await signedIn(user, long);
      const jar = new CookieJar();
      const html = await page('', jar);
      assert.equal((await submit(new URL(formAction(html), server.url).toString(), { ...fieldsOf(html), username: user.username, password: PASSWORD }, jar, { origin: server.url, 'user-agent': '' })).status, 303);
      const sessions = await server.gatehouse.store.sessions.pageOfUser(user.id, clock.now(), { after: undefined, limit: 10 });
      assert.deepEqual(sessions.map((s) => s.userAgent).sort(), [long.slice(0, 256), undefined]);
    });

    test('ending a session: another user’s session index, a malformed or huge one — the same 404, nothing ended', async () => {
      const alice = await newUser();
      const bob = await newUser();
      const alicesJar = await signedIn(alice);
      const bobsJar = await signedIn(bob);
      const bobsIndex = formOf(await page('/sessions', await signedIn(bob)), '/sessions/end').fields.session!;
      const form = formOf(await page('/password', alicesJar), '/password');
      for (const session of [bobsIndex, 'not an index', 'x'.repeat(3000), '']) {
        const answer = await post(`/uas/account/sessions/end`, { csrf_token: form.fields.csrf_token!, session }, alicesJar);
        assert.equal(answer.status, 404);
        assert.match(await answer.text(), /There is no such session/);
      }
      assert.equal(await signedInAt(bobsJar), true, 'Bob’s sessions are untouched');
    });

    test('applications: the consents listed in words; withdraw revokes the client’s tokens; another user’s consent is untouchable', async () => {
      const alice = await newUser();
      const bob = await newUser();
      const alicesJar = new CookieJar();
      const tokens = await tokensFor(alice, alicesJar, partner);
      await tokensFor(bob, new CookieJar(), partner);
      const html = await page('/applications', alicesJar);
      assert.deepEqual([...html.matchAll(/<h2 id="app-\d+">([^<]*)<\/h2>/g)].map((m) => m[1]), ['Partner App']);
      assert.deepEqual([.../<ul class="scopes">([\s\S]*?)<\/ul>/.exec(html)![1]!.matchAll(/<li>([^<]*)<\/li>/g)].map((m) => m[1]), ['Sign you in']);
      // Carol has no consent: naming the client Alice and Bob consented to withdraws nothing of theirs.
      const carolsJar = await signedIn(await newUser());
      const carolsForm = formOf(await page('/password', carolsJar), '/password');
      for (const application of [partner.client.clientId, app.client.clientId, '', 'x'.repeat(3000)]) {
        const answer = await post('/uas/account/applications/withdraw', { csrf_token: carolsForm.fields.csrf_token!, application }, carolsJar);
        assert.equal(answer.status, 404);
        assert.match(await answer.text(), /You have not allowed that application/);
      }
      assert.notEqual(await server.gatehouse.store.consents.find(alice.id, partner.client.clientId), undefined);
      const withdraw = formOf(html, '/applications/withdraw');
      const done = await post(withdraw.action, withdraw.fields, alicesJar);
      assert.equal(done.status, 303);
      assert.equal(done.headers.get('location'), '/uas/account/applications?notice=withdrawn');
      assert.match(await page('/applications?notice=withdrawn', alicesJar), /You have not allowed any application/);
      assert.equal(await server.gatehouse.store.consents.find(alice.id, partner.client.clientId), undefined);
      assert.notEqual(await server.gatehouse.store.consents.find(bob.id, partner.client.clientId), undefined, 'Bob’s consent stays');
      assert.equal(await refreshes(partner, tokens.refresh_token), 400);
      assert.equal(audit.of('account.consent_withdrawn').find((e) => e.userId === alice.id)?.revoked, 2);
    });

    test('a notice name that is an inherited member of a plain object (__proto__, constructor, toString) is no notice, never a 500', async () => {
      const jar = await signedIn(await newUser());
      for (const path of ['?notice=__proto__', '/sessions?notice=constructor', '/password?notice=toString', '/applications?notice=hasOwnProperty']) {
        const html = await page(path, jar);
        assert.doesNotMatch(html, /role="status"/, path);
      }
    });

    test('every POST needs the CSRF token and the issuer’s Origin; without a session, the sign-in form (401)', async () => {
      const user = await newUser();
      const other = await signedIn(user, SAFARI_IOS);
      const jar = await signedIn(user);
      const html = await page('/sessions', jar);
      const endOthers = formOf(html, '/sessions/end-others');
      const noToken = await post(endOthers.action, {}, jar);
      assert.equal(noToken.status, 403);
      assert.match(await noToken.text(), /The form expired/);
      assert.equal((await post(endOthers.action, endOthers.fields, jar, { origin: 'https://evil.example' })).status, 403);
      assert.equal((await post(endOthers.action, endOthers.fields, jar, {})).status, 403, 'no Origin, no Referer');
      assert.equal(await signedInAt(other), true, 'nothing ended');
      const password = formOf(await page('/password', jar), '/password');
      assert.equal((await post(password.action, { new_password: NEW_PASSWORD, confirm_password: NEW_PASSWORD }, jar)).status, 403);
      assert.equal(await passwordIs(user, PASSWORD), true);
      const anonymous = await post(endOthers.action, endOthers.fields, new CookieJar());
      assert.equal(anonymous.status, 401);
      assert.equal(formAction(await anonymous.text()), '/uas/account/security/sign-in');
    });
  });
}
