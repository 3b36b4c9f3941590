/**
 * Back-Channel Logout 1.0 through the durable outbox under faults (issue 26, "Done when"; docs/logout.md;
 * decisions LO6–LO8, LO10): every logout token arrives at its relying party, and none twice by `jti`.
 *
 * - Three instances on one store (SQLite and PostgreSQL), users logging out on each while the
 *   relying parties are down: all three senders try at once, each message fails once and is kept;
 *   the relying parties come back; after the back-off all three senders run at once again and each
 *   token arrives exactly once. The clock is injected; the senders' ticks are called.
 * - A gatehouse process killed (SIGKILL) with logout tokens queued and not yet sent, and a new
 *   process started on the same database and port: it sends each queued token once, signed with
 *   the same keys, validated here as a relying party does (§2.6).
 * An application registered with a URI that the user never used hears nothing throughout.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { decodeJwt } from 'jose';
import { ManualClock } from '../../src/lib/clock.ts';
import { openSqlStore, type SqlStore } from '../../src/storage/sql/store.ts';
import { addClient } from '../helpers/back-channel.ts';
import { DATABASES, type TestDatabase } from '../helpers/databases.ts';
import { createTestUser } from '../helpers/fixtures.ts';
import { startLogoutReceiver, type LogoutReceiver } from '../helpers/logout-receiver.ts';
import { logOutWith, signInTo, validLogoutToken, type LoggedInRp } from '../helpers/logout-session.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';
import type { Store } from '../../src/storage/ports.ts';
import { startGatehouse, type GatehouseProcess } from './processes.ts';

const PASSWORD = 'fault logout password 1';
const MINUTE = 60_000;
const USERS = 6;

/** Relying parties A and B, which the users sign in to, and C, which registered a URI and is never used. */
async function relyingParties(store: Store, receiver: LogoutReceiver): Promise<{ a: LoggedInRp; b: LoggedInRp }> {
  const withUri = (path: string) => ({ metadata: { backchannel_logout_uri: receiver.url(path) } });
  const a = await addClient(store, withUri('/a'));
  const b = await addClient(store, withUri('/b'));
  await addClient(store, withUri('/c'));
  return { a, b };
}

/** How many times each jti arrived, and at which path. */
function arrivals(receiver: LogoutReceiver): Map<string, { path: string; count: number }> {
  const byJti = new Map<string, { path: string; count: number }>();
  for (const received of receiver.received) {
    const jti = String(decodeJwt(received.logoutToken!).jti);
    const seen = byJti.get(jti);
    if (seen) seen.count++;
    else byJti.set(jti, { path: received.path, count: 1 });
  }
  return byJti;
}

/** The expected arrivals: every back-channel message in the outbox, once, at the path it was queued for. */
async function everyMessageOnce(store: Store): Promise<Map<string, { path: string; count: number }>> {
  const messages = (await store.outbox.page({ limit: 100 })).filter((m) => m.channel === 'backchannel_logout');
  return new Map(messages.map((m) => [m.id, { path: new URL(m.destination).pathname, count: 1 }]));
}

for (const kind of DATABASES) {
  describe(`back-channel logout from three instances on ${kind.name}, the relying parties down during the logouts`, () => {
    let receiver: LogoutReceiver;
    let servers: RunningServer[] = [];
    before(async () => {
      receiver = await startLogoutReceiver();
    });
    after(async () => {
      for (const server of servers.slice(1).reverse()) await server.close();
      await servers[0]?.close();
      await receiver.stop();
    });

    test('each logout token fails while they are down, is kept, and arrives exactly once (by jti) when they are back, whichever instance sends it', async () => {
      const clock = new ManualClock(Date.now());
      const env = { GATEHOUSE_OUTBOUND_LOOPBACK: 'on', GATEHOUSE_OUTBOX_INTERVAL: '0' };
      const first = await startServer(kind, { env, clock });
      servers = [first, await startServer(kind, { env, clock, database: first.database }), await startServer(kind, { env, clock, database: first.database })];
      const { store } = first.gatehouse;
      const { a, b } = await relyingParties(store, receiver);
      const tickAll = async () => (await Promise.all(servers.map((s) => s.gatehouse.outbox.sender.tick()))).reduce((sum, r) => ({ delivered: sum.delivered + r.delivered, retried: sum.retried + r.retried, dead: sum.dead + r.dead, leaseLost: sum.leaseLost + r.leaseLost }));

      await receiver.stop();
      for (let i = 0; i < USERS; i++) {
        const server = servers[i % servers.length]!;
        const user = await createTestUser(store, { password: PASSWORD });
        const { jar, idTokens } = await signInTo(server.url, [a, b], { username: user.username, password: PASSWORD });
        await logOutWith(server.url, jar, idTokens[0]!);
      }
      assert.deepEqual(await store.outbox.countByStatus(), { pending: 2 * USERS, delivered: 0, dead: 0 });

      // Down: every instance tries at once; each message is claimed by one, fails, and is kept.
      assert.deepEqual(await tickAll(), { delivered: 0, retried: 2 * USERS, dead: 0, leaseLost: 0 });
      await receiver.start();
      assert.deepEqual(await tickAll(), { delivered: 0, retried: 0, dead: 0, leaseLost: 0 }, 'nothing before its back-off');
      clock.advance(10 * MINUTE);
      assert.deepEqual(await tickAll(), { delivered: 2 * USERS, retried: 0, dead: 0, leaseLost: 0 });
      // Each instance here has an issuer of its own (its port): the token names the one that signed it.
      for (const received of receiver.received) {
        const signer = servers.find((s) => s.issuer === decodeJwt(received.logoutToken!).iss);
        assert.ok(signer, 'signed by one of the instances');
        await validLogoutToken(signer.issuer, received.logoutToken!, (received.path === '/a' ? a : b).client.clientId, clock.now());
      }
      clock.advance(60 * MINUTE);
      assert.deepEqual(await tickAll(), { delivered: 0, retried: 0, dead: 0, leaseLost: 0 }, 'nothing again');
      assert.deepEqual(arrivals(receiver), await everyMessageOnce(store), 'every token once, by jti; none to C');
    });
  });

  describe(`a gatehouse process killed with logout tokens queued, restarted on the same ${kind.name} database`, () => {
    let database: TestDatabase;
    let store: SqlStore;
    let receiver: LogoutReceiver;
    let server: GatehouseProcess | undefined;
    before(async () => {
      database = await kind.create();
      store = await openSqlStore(database.url);
      receiver = await startLogoutReceiver();
    });
    after(async () => {
      await server?.kill();
      await receiver.stop();
      await store.close();
      await database.drop();
    });

    test('the new process sends every queued token once (by jti), valid as a relying party checks it; C hears nothing', async () => {
      const { a, b } = await relyingParties(store, receiver);
      const env = { GATEHOUSE_OUTBOUND_LOOPBACK: 'on' };
      // The first process sends nothing (interval 0): its tokens are queued when it dies.
      server = await startGatehouse({ databaseUrl: database.url, env: { ...env, GATEHOUSE_OUTBOX_INTERVAL: '0' } });
      const { port } = server;
      for (let i = 0; i < 2; i++) {
        const user = await createTestUser(store, { password: PASSWORD });
        const { jar, idTokens } = await signInTo(server.url, [a, b], { username: user.username, password: PASSWORD });
        await logOutWith(server.url, jar, idTokens[0]!);
      }
      assert.deepEqual(await store.outbox.countByStatus(), { pending: 4, delivered: 0, dead: 0 });
      assert.equal(await server.kill(), 'SIGKILL');
      assert.equal(receiver.received.length, 0, 'nothing sent before the kill');

      // Same port, so the same issuer; the sender looks every second.
      server = await startGatehouse({ databaseUrl: database.url, port, env: { ...env, GATEHOUSE_OUTBOX_INTERVAL: '1' } });
      const deadline = Date.now() + 20_000;
      while ((await store.outbox.countByStatus()).delivered < 4 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
      // Two more of its ticks: nothing is sent again.
      await new Promise((resolve) => setTimeout(resolve, 2_500));
      assert.deepEqual(await store.outbox.countByStatus(), { pending: 0, delivered: 4, dead: 0 }, server.output());
      assert.deepEqual(arrivals(receiver), await everyMessageOnce(store), 'every token once, by jti; none to C');
      for (const received of receiver.received) {
        const rp = received.path === '/a' ? a : b;
        await validLogoutToken(`${server.url}/uas`, received.logoutToken!, rp.client.clientId);
      }
    });
  });
}
