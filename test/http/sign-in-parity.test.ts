/**
 * The device flow's sign-in (the user-code page, RFC 8628 §3.3) and the authorization endpoint's
 * login page run the one password sign-in (src/oauth/authorize/verify-credentials.ts:
 * checkPasswordLogin, then startBrowserSession), not two copies of it (issue 23): the same
 * attempt is refused, throttled or let in identically by both — same status, Retry-After,
 * message and audit events — and their failures count against the same username. The second
 * factor (issue 24) too: both ask for it after a right password, refuse a wrong code, throttle
 * alike, and start a session whose amr says what was proved.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Client } from '../../src/domain/client.ts';
import { hashSecret } from '../../src/lib/hash.ts';
import { ManualClock } from '../../src/lib/clock.ts';
import { AuditCapture } from '../helpers/audit.ts';
import { enrolTotp, giveRecoveryCodes, totpAt } from '../helpers/factors.ts';
import { postForm } from '../helpers/back-channel.ts';
import { DATABASES } from '../helpers/databases.ts';
import { CookieJar, createTestClient, createTestUser, formAction, formFields, loginThroughForm, submit, browse } from '../helpers/fixtures.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';

const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';
const PASSWORD = 'one sign-in for every page';

type Credentials = { username: string; password: string };

/** What a sign-in attempt answered and recorded; the client's id aside (each page has its own client). */
interface Outcome {
  status: number;
  retryAfter: string | null;
  message: string | undefined;
  sessionCookie: boolean;
  /** Whether the answer set the pending sign-in's cookie (a right password, a second factor to come). */
  pendingCookie: boolean;
  events: Record<string, unknown>[];
}

/** A page that asks for the second factor, and the browser that shows it. */
interface SecondStep {
  html: string;
  jar: CookieJar;
}

for (const db of DATABASES) {
  describe(`the device sign-in and the login page share the password sign-in on ${db.name}`, () => {
    const clock = new ManualClock(Date.now());
    const audit = new AuditCapture();
    let server: RunningServer;
    let webClient: Client;
    let tv: Client;

    before(async () => {
      const env = { GATEHOUSE_DEVICE_USER_CODE_ATTEMPTS_PER_ADDRESS: '100000', GATEHOUSE_DEVICE_USER_CODE_ATTEMPTS_GLOBAL: '100000', GATEHOUSE_DEVICE_AUTHORIZATIONS_PER_ADDRESS: '0' };
      server = await startServer(db, { clock, audit, env });
      const { store } = server.gatehouse;
      ({ client: webClient } = await createTestClient(store));
      ({ client: tv } = await createTestClient(store, { name: 'Parity TV', tokenEndpointAuthMethod: 'none', redirectUris: [], grantTypes: [DEVICE_GRANT] }));
    });
    after(async () => server.close());

    /** The response, then the login.* events it caused, checked to name `clientId` and stripped of it and of the session's fingerprint. */
    async function observe(clientId: string, attempt: () => Promise<Response>): Promise<Outcome> {
      audit.clear();
      const response = await attempt();
      const html = await response.text();
      const events = audit
        .all()
        .filter((e) => e.event.startsWith('login.') || e.event.startsWith('factor.'))
        .map((e) => {
          // The log line's envelope (pino's level, time, pid, hostname, msg; the audit flag) aside: the event's own fields.
          const { clientId: named, session, audit: _a, level: _l, time: _t, pid: _p, hostname: _h, msg: _m, ...rest } = e as unknown as Record<string, unknown>;
          assert.equal(named, clientId, `${String(e.event)} names the page's client`);
          return session === undefined ? rest : { ...rest, session: 'present' };
        });
      return {
        status: response.status,
        retryAfter: response.headers.get('retry-after'),
        message: /<p class="message" role="alert"[^>]*>([^<]*)<\/p>/.exec(html)?.[1],
        sessionCookie: response.headers.getSetCookie().some((c) => c.startsWith('gatehouse_session=')),
        pendingCookie: response.headers.getSetCookie().some((c) => c.startsWith('gatehouse_pending=') && !/max-age=0|expires=thu, 01 jan 1970/i.test(c)),
        events,
      };
    }

    const throughLoginPage = async (credentials: Credentials) => (await loginPageStep(credentials)).outcome;
    const throughDevicePage = async (credentials: Credentials) => (await devicePageStep(credentials)).outcome;

    /** The login page's password step: what it answered, and its page (the second factor's, when it asks for one). */
    async function loginPageStep(credentials: Credentials): Promise<{ outcome: Outcome; step: SecondStep }> {
      const jar = new CookieJar();
      let html = '';
      const outcome = await observe(webClient.clientId, async () => {
        const response = await loginThroughForm({ baseUrl: server.url, jar }, { client_id: webClient.clientId, redirect_uri: webClient.redirectUris[0]!, response_type: 'code', scope: 'openid' }, credentials);
        html = await response.clone().text();
        return response;
      });
      return { outcome, step: { html, jar } };
    }

    /** The device page's password step, as loginPageStep. */
    async function devicePageStep(credentials: Credentials): Promise<{ outcome: Outcome; step: SecondStep }> {
      const issued = await postForm(`${server.url}${server.config.issuerPath}/oauth2/device_authorization`, { client_id: tv.clientId, scope: 'openid' });
      assert.equal(issued.status, 200, JSON.stringify(issued.body));
      const page = `${server.url}${server.config.issuerPath}/oauth2/device`;
      const jar = new CookieJar();
      const csrf = new Map(formFields(await (await browse(page, jar)).text())).get('csrf_token')!;
      const loginHtml = await (await submit(page, { csrf_token: csrf, user_code: issued.body.user_code as string }, jar)).text();
      assert.match(loginHtml, /name="password"/);
      const fields = Object.fromEntries(formFields(loginHtml));
      let html = '';
      const outcome = await observe(tv.clientId, async () => {
        const response = await submit(`${server.url}${formAction(loginHtml)}`, { ...fields, ...credentials }, jar);
        html = await response.clone().text();
        return response;
      });
      return { outcome, step: { html, jar } };
    }

    /** A code typed into the second factor's page `step` shows, from page `clientId`'s browser. */
    const answer = (clientId: string, step: SecondStep, code: string) =>
      observe(clientId, async () => {
        const response = await submit(`${server.url}${formAction(step.html)}`, { ...Object.fromEntries(formFields(step.html)), code }, step.jar);
        step.html = await response.clone().text();
        return response;
      });

    /** A user with a TOTP factor and recovery codes, and both pages' second-factor pages after the right password. */
    async function bothAtSecondFactor(): Promise<{ secret: string; codes: string[]; user: { id: string; username: string }; login: SecondStep; device: SecondStep }> {
      const user = await createTestUser(server.gatehouse.store, { password: PASSWORD });
      const secret = await enrolTotp(server.gatehouse.store, user.id);
      const codes = await giveRecoveryCodes(server.gatehouse.store, user.id);
      const credentials = { username: user.username, password: PASSWORD };
      const login = await loginPageStep(credentials);
      const device = await devicePageStep(credentials);
      assert.deepEqual(device.outcome, login.outcome, 'the device page asks for the second factor as the login page does');
      assert.deepEqual(
        { ...login.outcome, message: undefined },
        { status: 200, retryAfter: null, message: undefined, sessionCookie: false, pendingCookie: true, events: [{ event: 'login.second_factor_required', userId: user.id, username: user.username, ip: '127.0.0.1' }] },
      );
      for (const page of [login, device]) assert.match(page.step.html, /autocomplete="one-time-code"/);
      return { secret, codes, user, login: login.step, device: device.step };
    }

    test('refusals: a wrong password, an unknown user, a disabled, locked or pending user get the same 401, message and login.failed reason on both pages', async () => {
      const { store } = server.gatehouse;
      const enabled = await createTestUser(store, { password: PASSWORD });
      const disabled = await createTestUser(store, { password: PASSWORD, status: 'disabled' });
      const locked = await createTestUser(store, { password: PASSWORD, status: 'locked' });
      const pending = await createTestUser(store, { password: PASSWORD, status: 'pending' });
      const cases: [Credentials, string][] = [
        [{ username: enabled.username, password: 'wrong' }, 'wrong_password'],
        [{ username: `nobody-${enabled.id}`, password: PASSWORD }, 'unknown_user'],
        [{ username: disabled.username, password: PASSWORD }, 'not_enabled'],
        [{ username: locked.username, password: PASSWORD }, 'not_enabled'],
        [{ username: pending.username, password: PASSWORD }, 'not_enabled'],
      ];
      const messages = new Set<string | undefined>();
      for (const [credentials, reason] of cases) {
        const login = await throughLoginPage(credentials);
        const device = await throughDevicePage(credentials);
        assert.deepEqual(device, login, `${credentials.username}: the device page answers as the login page`);
        assert.deepEqual([login.status, login.retryAfter, login.sessionCookie], [401, null, false]);
        assert.deepEqual(
          login.events.map((e) => [e.event, e.reason]),
          [['login.failed', reason]],
        );
        messages.add(login.message);
      }
      assert.equal(messages.size, 1, 'one message for every refusal');
    });

    test('the throttle: failures on either page count against the same username; once it must wait, both refuse even the right password alike', async () => {
      const user = await createTestUser(server.gatehouse.store, { password: PASSWORD });
      const wrong = (i: number) => ({ username: user.username, password: `wrong-${i}` });
      // GATEHOUSE_THROTTLE_USER_FAILURES (5): four failures alternate between the pages, the fifth makes the username wait.
      for (let i = 1; i <= 4; i += 1) assert.equal((i % 2 === 0 ? await throughLoginPage(wrong(i)) : await throughDevicePage(wrong(i))).status, 401);
      const fifth = await throughDevicePage(wrong(5));
      assert.deepEqual([fifth.status, fifth.retryAfter], [429, '1']);

      const right = { username: user.username, password: PASSWORD };
      const login = await throughLoginPage(right);
      const device = await throughDevicePage(right);
      assert.deepEqual(device, login);
      assert.deepEqual([login.status, login.retryAfter, login.sessionCookie], [429, '1', false]);
      assert.deepEqual(login.events, [{ event: 'login.throttled', by: 'username', retryAfter: 1, ip: '127.0.0.1' }]);

      clock.advance(1000);
      const signedIn = await throughDevicePage(right);
      assert.deepEqual([signedIn.status, signedIn.sessionCookie], [200, true]);
    });

    test('a success: both start a new pwd session replacing the browser\'s and record the same login.succeeded', async () => {
      const user = await createTestUser(server.gatehouse.store, { password: PASSWORD });
      const credentials = { username: user.username, password: PASSWORD };
      const login = await throughLoginPage(credentials);
      const device = await throughDevicePage(credentials);
      assert.deepEqual([login.status, device.status], [303, 200], 'the login page redirects to the client; the device page asks for the decision');
      assert.deepEqual(device.events, login.events);
      assert.deepEqual(login.events, [{ event: 'login.succeeded', userId: user.id, username: user.username, session: 'present', ip: '127.0.0.1' }]);
      assert.deepEqual([login.sessionCookie, device.sessionCookie], [true, true]);
    });

    test('a sign-in on the device page ends the session the browser had, as the login page\'s does', async () => {
      const user = await createTestUser(server.gatehouse.store, { password: PASSWORD });
      const jar = new CookieJar();
      await loginThroughForm({ baseUrl: server.url, jar }, { client_id: webClient.clientId, redirect_uri: webClient.redirectUris[0]!, response_type: 'code', scope: 'openid' }, { username: user.username, password: PASSWORD });
      const first = jar.cookies.get('gatehouse_session')!;
      const { store } = server.gatehouse;
      assert.ok(await store.sessions.findLive(hashSecret(first), clock.now()));

      const issued = await postForm(`${server.url}${server.config.issuerPath}/oauth2/device_authorization`, { client_id: tv.clientId, scope: 'openid' });
      const page = `${server.url}${server.config.issuerPath}/oauth2/device`;
      // A usable session skips the sign-in form; one of another user's would too, so the form is posted directly.
      const csrf = new Map(formFields(await (await browse(page, jar)).text())).get('csrf_token')!;
      const response = await submit(`${page}/login`, { csrf_token: csrf, user_code: issued.body.user_code as string, username: user.username, password: PASSWORD }, jar);
      assert.equal(response.status, 200);
      const second = jar.cookies.get('gatehouse_session')!;
      assert.notEqual(second, first);
      assert.equal(await store.sessions.findLive(hashSecret(first), clock.now()), undefined, 'the replaced session ended');
      const session = await store.sessions.findLive(hashSecret(second), clock.now());
      assert.deepEqual(session?.amr, ['pwd']);
    });

    test('a second factor: after the right password both pages ask for it and start nothing; a wrong code gets the same 401 and message on both', async () => {
      const { login, device } = await bothAtSecondFactor();
      const wrongLogin = await answer(webClient.clientId, login, '000000');
      const wrongDevice = await answer(tv.clientId, device, '000000');
      assert.deepEqual(wrongDevice, wrongLogin);
      assert.deepEqual([wrongLogin.status, wrongLogin.retryAfter, wrongLogin.sessionCookie], [401, null, false]);
      assert.ok(wrongLogin.message);
      assert.deepEqual(
        wrongLogin.events.map((e) => e.event),
        ['factor.failed'],
      );
    });

    test('a second factor: wrong codes on either page count against the same user; once it must wait, both refuse even the right code alike', async () => {
      const { secret, login, device } = await bothAtSecondFactor();
      // The password's rules, with counters of their own: four failures alternate between the
      // pages, the fifth makes the user wait and says so already, as the password's does (SA26).
      for (let i = 1; i <= 4; i += 1) assert.equal((await answer(i % 2 === 0 ? webClient.clientId : tv.clientId, i % 2 === 0 ? login : device, `00000${i}`)).status, 401);
      const fifth = await answer(tv.clientId, device, '000005');
      assert.deepEqual([fifth.status, fifth.retryAfter, fifth.sessionCookie], [429, '1', false]);
      assert.deepEqual(fifth.events.map((e) => e.event), ['factor.failed'], 'checked (and wrong), not refused unchecked');
      const right = totpAt(secret, clock.now());
      const throttledLogin = await answer(webClient.clientId, login, right);
      const throttledDevice = await answer(tv.clientId, device, right);
      assert.deepEqual(throttledDevice, throttledLogin);
      assert.deepEqual([throttledLogin.status, throttledLogin.retryAfter, throttledLogin.sessionCookie], [429, '1', false]);
      assert.deepEqual(
        throttledLogin.events.map((e) => [e.event, e.by]),
        [['factor.throttled', 'username']],
      );
      clock.advance(1000);
      const signedIn = await answer(tv.clientId, device, totpAt(secret, clock.now()));
      assert.deepEqual([signedIn.status, signedIn.sessionCookie, signedIn.pendingCookie], [200, true, false]);
    });

    test('a second factor: a right code on either page starts a session with amr ["pwd", "otp", "mfa"] and records the same events; the pending sign-in is used up', async () => {
      const { secret, codes, user, login, device } = await bothAtSecondFactor();
      const before = { html: login.html, cookies: new Map(login.jar.cookies) };
      const okLogin = await answer(webClient.clientId, login, totpAt(secret, clock.now()));
      // A TOTP step is accepted once: the device page's code is the next step's.
      clock.advance(30_000);
      const okDevice = await answer(tv.clientId, device, totpAt(secret, clock.now()));
      assert.deepEqual([okLogin.status, okDevice.status], [303, 200], 'the login page redirects to the client; the device page asks for the decision');
      const strip = (events: Record<string, unknown>[]) => events.map(({ kind: _k, factorId: _f, ...rest }) => rest);
      assert.deepEqual(strip(okDevice.events), strip(okLogin.events));
      assert.deepEqual(strip(okLogin.events), [
        { event: 'factor.verified', userId: user.id, username: user.username, ip: '127.0.0.1' },
        { event: 'login.succeeded', userId: user.id, username: user.username, session: 'present', ip: '127.0.0.1' },
      ]);
      const { store } = server.gatehouse;
      for (const jar of [login.jar, device.jar]) {
        const session = await store.sessions.findLive(hashSecret(jar.cookies.get('gatehouse_session')!), clock.now());
        assert.deepEqual(session?.amr, ['pwd', 'otp', 'mfa']);
        assert.equal(jar.cookies.has('gatehouse_pending'), false, 'the browser forgets the pending sign-in');
      }

      // The pending sign-in started one session: the same page posted again with its old cookie, even with a right code, starts none.
      const replayJar = new CookieJar();
      for (const [name, value] of before.cookies) replayJar.cookies.set(name, value);
      assert.ok(replayJar.cookies.has('gatehouse_pending'));
      const replay = await answer(webClient.clientId, { html: before.html, jar: replayJar }, codes[0]!);
      assert.deepEqual([replay.status, replay.sessionCookie, replay.events], [400, false, []]);
    });
  });
}