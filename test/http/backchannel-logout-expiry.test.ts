/**
 * Back-channel logout when a session expires (issue 26 item 2, "or the session expires by policy
 * if configured"; docs/logout.md; decisions LO10–LO12): with GATEHOUSE_BACKCHANNEL_LOGOUT_ON_EXPIRY
 * the cleanup job ends a session EXPIRY_NOTICE_GRACE_MS after its deadline and queues a logout
 * token for each relying party that received tokens in it, in the same unit of work; without the
 * setting an expired session tells nobody. Against an administrator ending the same sessions at the
 * same moment, each session is ended by one of them and each token queued once. The clock is
 * injected; the cleanup and the sender are called. On every database.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { decodeJwt } from 'jose';
import { ManualClock } from '../../src/lib/clock.ts';
import { EXPIRY_NOTICE_GRACE_MS, GRACE_MS } from '../../src/oauth/cleanup.ts';
import { addClient } from '../helpers/back-channel.ts';
import { DATABASES } from '../helpers/databases.ts';
import { createTestUser } from '../helpers/fixtures.ts';
import { startLogoutReceiver, type LogoutReceiver } from '../helpers/logout-receiver.ts';
import { signInTo, validLogoutToken, type LoggedInRp } from '../helpers/logout-session.ts';
import { ensureManagementSetup, issueManageToken, manageCall } from '../helpers/manage.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';

const PASSWORD = 'expiry logout password 1';
const MINUTE = 60_000;
/** GATEHOUSE_SESSION_TTL's default: the idle deadline of a session not used again. */
const IDLE_TTL = 60 * MINUTE;
const NOTHING = { delivered: 0, retried: 0, dead: 0, leaseLost: 0 };

for (const db of DATABASES) {
  describe(`back-channel logout on session expiry, on ${db.name}`, () => {
    let receiver: LogoutReceiver;
    let server: RunningServer;
    let clock: ManualClock;
    let a: LoggedInRp, b: LoggedInRp;

    before(async () => {
      receiver = await startLogoutReceiver();
      clock = new ManualClock(Date.now());
      server = await startServer(db, { clock, env: { GATEHOUSE_OUTBOUND_LOOPBACK: 'on', GATEHOUSE_OUTBOX_INTERVAL: '0', GATEHOUSE_BACKCHANNEL_LOGOUT_ON_EXPIRY: 'on' } });
      const { store } = server.gatehouse;
      a = await addClient(store, { metadata: { backchannel_logout_uri: receiver.url('/a') } });
      b = await addClient(store, { metadata: { backchannel_logout_uri: receiver.url('/b') } });
      // C registered a URI, but nobody signs in to it.
      await addClient(store, { metadata: { backchannel_logout_uri: receiver.url('/c') } });
      await ensureManagementSetup(server);
    });
    after(async () => {
      await server.close();
      await receiver.stop();
    });

    const signedIn = async () => {
      const user = await createTestUser(server.gatehouse.store, { password: PASSWORD });
      return { user, ...(await signInTo(server.url, [a, b], { username: user.username, password: PASSWORD })) };
    };
    const cleanup = (batchSize?: number) => server.gatehouse.deps.admin.cleanup(batchSize === undefined ? {} : { batchSize });
    const deliver = async () => {
      receiver.received.length = 0;
      const report = await server.gatehouse.outbox.sender.tick();
      return { report, received: [...receiver.received].sort((x, y) => (x.path < y.path ? -1 : 1)) };
    };

    test('an expired session is ended EXPIRY_NOTICE_GRACE_MS after its deadline, and A and B each get one logout token with the sid they know; C nothing', async () => {
      const { user, idTokens } = await signedIn();
      clock.advance(IDLE_TTL + EXPIRY_NOTICE_GRACE_MS - MINUTE);
      assert.equal((await cleanup()).sessions, 0, 'not yet');
      assert.deepEqual((await deliver()).report, NOTHING);
      clock.advance(2 * MINUTE);
      assert.equal((await cleanup()).sessions, 1);
      const { report, received } = await deliver();
      assert.deepEqual(report, { ...NOTHING, delivered: 2 });
      assert.deepEqual(received.map((r) => r.path), ['/a', '/b']);
      for (const [i, rp] of [a, b].entries()) {
        const claims = await validLogoutToken(server.issuer, received[i]!.logoutToken!, rp.client.clientId, clock.now());
        assert.deepEqual([claims.sub, claims.sid], [user.id, decodeJwt(idTokens[i]!).sid]);
      }
      assert.equal((await cleanup()).sessions, 0, 'idempotent');
      assert.deepEqual((await deliver()).received, [], 'nothing twice');
    });

    test('an administrator ending the same expired sessions while the cleanup runs: each session is ended by one of them, each token queued and delivered once', async () => {
      const users = [];
      for (let i = 0; i < 6; i++) users.push((await signedIn()).user);
      const sessions = await Promise.all(users.map(async (user) => (await server.gatehouse.store.sessions.pageOfUser(user.id, clock.now(), { limit: 1 }))[0]!));
      clock.advance(IDLE_TTL + EXPIRY_NOTICE_GRACE_MS + MINUTE);
      const token = await issueManageToken(server);
      // The administrator's requests first, and the cleanup a session per unit of work, so that they interleave.
      const deletes = sessions.map((s) => manageCall(server, 'DELETE', `/users/${s.userId}/sessions/${s.sessionIndex}`, { token }));
      const [report, ...ends] = await Promise.all([cleanup(1), ...deletes]);
      const byAdministrator = ends.filter((e) => e.status === 204).length;
      assert.deepEqual(ends.map((e) => e.status).filter((s) => s !== 204 && s !== 404), [], 'ended, or already gone');
      assert.equal(report.sessions + byAdministrator, users.length, 'one winner per session');
      const { received } = await deliver();
      assert.equal(received.length, 2 * users.length);
      assert.equal(new Set(received.map((r) => decodeJwt(r.logoutToken!).jti)).size, 2 * users.length, 'each once, by jti');
      assert.deepEqual([...new Set(received.map((r) => r.path))], ['/a', '/b']);
      assert.deepEqual((await deliver()).received, []);
    });
  });

  describe(`without GATEHOUSE_BACKCHANNEL_LOGOUT_ON_EXPIRY, on ${db.name}`, () => {
    test('an expired session is deleted an hour after its deadline and tells nobody', async () => {
      const receiver = await startLogoutReceiver();
      const clock = new ManualClock(Date.now());
      const server = await startServer(db, { clock, env: { GATEHOUSE_OUTBOUND_LOOPBACK: 'on', GATEHOUSE_OUTBOX_INTERVAL: '0' } });
      try {
        const a = await addClient(server.gatehouse.store, { metadata: { backchannel_logout_uri: receiver.url('/a') } });
        const user = await createTestUser(server.gatehouse.store, { password: PASSWORD });
        await signInTo(server.url, [a], { username: user.username, password: PASSWORD });
        clock.advance(IDLE_TTL + EXPIRY_NOTICE_GRACE_MS + MINUTE);
        assert.equal((await server.gatehouse.deps.admin.cleanup()).sessions, 0);
        clock.advance(GRACE_MS);
        assert.equal((await server.gatehouse.deps.admin.cleanup()).sessions, 1);
        assert.deepEqual(await server.gatehouse.store.outbox.countByStatus(), { pending: 0, delivered: 0, dead: 0 });
        assert.deepEqual(await server.gatehouse.outbox.sender.tick(), NOTHING);
        assert.deepEqual(receiver.received, []);
      } finally {
        await server.close();
        await receiver.stop();
      }
    });
  });
}
