/**
 * The password grant under concurrency (docs/decisions.md PW3; security.md CG1): its attempts are
 * reserved in the store before the password is verified, exactly as the login form's, under the
 * same counters. A burst of concurrent wrong-password grants from one address gets the threshold's
 * number of verifications, a right password sent while the limit is taken by guesses in flight is
 * refused as on the login form, and a burst split between the form and the grant gets the
 * threshold in all. Verifications are counted by their audit events (`login.failed`), never by
 * timing. Addresses come through X-Forwarded-For from the test's 127.0.0.1, trusted as a proxy.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Client } from '../../src/domain/client.ts';
import { ManualClock } from '../../src/lib/clock.ts';
import { AuditCapture } from '../helpers/audit.ts';
import { basic, postForm } from '../helpers/back-channel.ts';
import { DATABASES } from '../helpers/databases.ts';
import { authorizationUrl, browse, CookieJar, createTestClient, createTestUser, formAction, formFields, submit } from '../helpers/fixtures.ts';
import { assertLoginPage } from '../helpers/front-channel.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';
import { probeThrottle } from '../helpers/throttle-probe.ts';

const PASSWORD = 'correct horse battery staple';
/** GATEHOUSE_THROTTLE_USER_FAILURES's default: verifications a username and address pair gets. */
const USER_THRESHOLD = 5;

function statusCounts(statuses: number[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const s of statuses) counts[s] = (counts[s] ?? 0) + 1;
  return counts;
}

/** Waits (polling, in real time) until `condition` holds: progress of requests in flight, not time semantics. */
async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

for (const db of DATABASES) {
  describe(`concurrent password grants on ${db.name}`, () => {
    let server: RunningServer;
    let client: Client;
    let secret: string;
    const audit = new AuditCapture();
    let next = 1;
    const address = () => `198.18.0.${next++}`;

    before(async () => {
      server = await startServer(db, { clock: new ManualClock(Date.now()), audit, env: { GATEHOUSE_TRUSTED_PROXIES: '127.0.0.1' } });
      ({ client, clientSecret: secret } = await createTestClient(server.gatehouse.store, { grantTypes: ['password'], redirectUris: [] }));
    });
    after(async () => server.close());

    const grant = async (username: string, password: string, ip: string) => {
      const response = await postForm(`${server.url}/uas/oauth2/token`, { grant_type: 'password', username, password, scope: 'openid' }, { authorization: basic(client.clientId, secret), 'x-forwarded-for': ip });
      return response;
    };

    for (const burst of [40, 120]) {
      test(`${burst} concurrent wrong-password grants for one user from one address: exactly ${USER_THRESHOLD} are verified, the rest 429 slow_down (PW-10)`, async () => {
        const { id, username } = await createTestUser(server.gatehouse.store, { password: PASSWORD });
        const ip = address();
        audit.clear();
        const responses = await Promise.all(Array.from({ length: burst }, (_, i) => grant(username, `wrong-${i}`, ip)));
        const failed = audit.of('login.failed');
        assert.equal(failed.length, USER_THRESHOLD, `verified ${failed.length} of ${burst}`);
        assert.ok(failed.every((e) => e.userId === id && e.via === 'password_grant'));
        assert.equal(audit.of('login.throttled').length, burst - USER_THRESHOLD);
        const counts = statusCounts(responses.map((r) => r.status));
        assert.equal((counts[400] ?? 0) + (counts[429] ?? 0), burst, JSON.stringify(counts));
        assert.ok((counts[429] ?? 0) >= burst - USER_THRESHOLD, JSON.stringify(counts));
        for (const r of responses) assert.equal(r.body.error, r.status === 429 ? 'slow_down' : 'invalid_grant');
        assert.equal(audit.of('lockout').filter((e) => e.by === 'username').length, 1, 'one lockout for the username');
        assert.deepEqual(audit.of('token.issued'), []);
      });
    }

    test('a right password sent while the limit is taken by guesses still being verified gets no token, as on the login form (PW-10)', async () => {
      const { username } = await createTestUser(server.gatehouse.store, { password: PASSWORD });
      const ip = address();
      const burst = 40;
      // Verifications are held open (as a slow argon2 would be) until every guess is in.
      const probe = probeThrottle(server.gatehouse.store);
      try {
        audit.clear();
        let answered = 0;
        const guesses = Array.from({ length: burst }, (_, i) =>
          grant(username, `guess-${i}`, ip).then((r) => {
            answered += 1;
            return r;
          }),
        );
        // The other guesses wait for those being verified (they might be right passwords).
        await until(() => probe.held + answered === burst || (probe.held === USER_THRESHOLD && probe.refused >= burst - USER_THRESHOLD), 'every guess is verifying, waiting or answered');
        let rightAnswered = false;
        const right = grant(username, PASSWORD, ip).then((r) => {
          rightAnswered = true;
          return r;
        });
        // Refused while the guesses are in flight, it waits for them like the other waiting guesses;
        // once all have asked twice more, the guesses end — as failures — and it is refused.
        const refusedBefore = probe.refused;
        await until(() => rightAnswered || probe.refused >= refusedBefore + 2 * (burst - probe.held - answered + 1), 'the right password is answered or waiting');
        assert.equal(rightAnswered, false, 'the right password waits while the guesses are in flight');
        probe.release();
        const [answer, ...rest] = await Promise.all([right, ...guesses]);
        assert.equal(answer!.status, 429, 'the right password was refused, not checked');
        assert.equal(answer!.headers.get('retry-after'), '1');
        assert.equal(answer!.body.error, 'slow_down');
        assert.equal(probe.held, USER_THRESHOLD, 'verifications started');
        assert.equal(audit.of('login.failed').length, USER_THRESHOLD);
        assert.deepEqual(audit.of('login.succeeded'), []);
        assert.deepEqual(audit.of('token.issued'), []);
        const counts = statusCounts(rest.map((r) => r.status));
        assert.equal((counts[400] ?? 0) + (counts[429] ?? 0), burst, JSON.stringify(counts));
      } finally {
        probe.restore();
      }
    });

    test('8 concurrent right-password grants for one user from one address all get tokens (PW-10)', async () => {
      const { username } = await createTestUser(server.gatehouse.store, { password: PASSWORD });
      const ip = address();
      audit.clear();
      const responses = await Promise.all(Array.from({ length: 8 }, () => grant(username, PASSWORD, ip)));
      assert.deepEqual(statusCounts(responses.map((r) => r.status)), { 200: 8 });
      assert.equal(audit.of('token.issued').length, 8);
      assert.equal(audit.of('login.throttled').length, 0);
    });

    test(`40 concurrent wrong passwords split between the login form and the grant: exactly ${USER_THRESHOLD} are verified in all (PW-10)`, async () => {
      const { username } = await createTestUser(server.gatehouse.store, { password: PASSWORD });
      const { client: web } = await createTestClient(server.gatehouse.store);
      const ip = address();
      const headers = { 'x-forwarded-for': ip };
      // The forms are fetched beforehand so the submissions go out together with the grants.
      const forms = await Promise.all(
        Array.from({ length: 20 }, async () => {
          const jar = new CookieJar();
          const query = { client_id: web.clientId, redirect_uri: web.redirectUris[0]!, response_type: 'code', scope: 'openid', state: 's' };
          const html = await assertLoginPage(await browse(authorizationUrl(server.url, query), jar, headers));
          return { jar, html };
        }),
      );
      audit.clear();
      const viaForm = forms.map(async ({ jar, html }, i) => {
        const fields = formFields(html).map(([name, value]): [string, string] => [name, name === 'username' ? username : name === 'password' ? `form-${i}` : value]);
        const response = await submit(new URL(formAction(html), server.url).toString(), fields, jar, headers);
        await response.arrayBuffer();
        return response.status;
      });
      const viaGrant = Array.from({ length: 20 }, async (_, i) => (await grant(username, `grant-${i}`, ip)).status);
      const statuses = await Promise.all([...viaForm, ...viaGrant]);
      assert.equal(audit.of('login.failed').length, USER_THRESHOLD);
      assert.equal(audit.of('login.throttled').length, 40 - USER_THRESHOLD);
      assert.equal(statuses.filter((s) => [400, 401, 429].includes(s)).length, 40, JSON.stringify(statusCounts(statuses)));
    });
  });
}
