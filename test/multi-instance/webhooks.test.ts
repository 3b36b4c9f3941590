/**
 * Webhooks from three instances on one PostgreSQL store (issue 26, "Done when"; decisions WH11,
 * WH17): events happen on every instance, every instance's sender ticks at the same time, and the
 * receiver gets each webhook exactly once by its `webhook-id`, every signature checked with the
 * Standard Webhooks reference library. An endpoint registered on one instance is picked up by the
 * others at their next refresh of the subscriptions (called here, as their timer would).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DATABASES, type TestDatabase } from '../helpers/databases.ts';
import { createTestUser } from '../helpers/fixtures.ts';
import { ensureManagementSetup, issueManageToken, manageCall } from '../helpers/manage.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.ts';

const INSTANCES = 3;
const EVENTS_PER_INSTANCE = 12;

for (const kind of DATABASES.filter((k) => k.name === 'postgres')) {
  describe(`webhooks from ${INSTANCES} instances on one ${kind.name} store`, () => {
    let database: TestDatabase;
    let servers: RunningServer[] = [];
    let receiver: WebhookReceiver;

    before(async () => {
      receiver = await startWebhookReceiver(() => Date.now());
      database = await kind.create();
      const env = { GATEHOUSE_OUTBOUND_LOOPBACK: 'on', GATEHOUSE_OUTBOX_INTERVAL: '0' };
      for (let i = 0; i < INSTANCES; i++) servers.push(await startServer(kind, { database, env }));
      await ensureManagementSetup(servers[0]!);
    });
    after(async () => {
      await Promise.all(servers.map((s) => s.close()));
      servers = [];
      await database?.drop();
      await receiver?.stop();
    });

    test('each webhook arrives exactly once, signed, whichever instance caused it and whichever sends it', async () => {
      const made = await manageCall(servers[0]!, 'POST', '/webhooks', { token: await issueManageToken(servers[0]!), body: { url: receiver.url('/all'), events: ['user.updated'] } });
      assert.equal(made.status, 201, made.text);
      receiver.secrets.push(made.json.secret as string);
      await Promise.all(servers.map((s) => s.gatehouse.webhooks.subscriptions.refresh()));
      const users = await Promise.all(Array.from({ length: 4 }, () => createTestUser(servers[0]!.gatehouse.store, { password: 'multi webhook 1' })));
      // Events on every instance at once.
      await Promise.all(
        servers.map(async (server, i) => {
          const token = await issueManageToken(server);
          for (let n = 0; n < EVENTS_PER_INSTANCE; n++) {
            const changed = await manageCall(server, 'PATCH', `/users/${users[n % users.length]!.id}`, { token, body: { given_name: `i${i}n${n}` } });
            assert.equal(changed.status, 200, changed.text);
          }
        }),
      );
      await Promise.all(servers.map((s) => s.gatehouse.webhooks.flush()));
      // Every sender at once, until none has anything left.
      for (let round = 0; round < 40; round++) {
        const reports = await Promise.all(servers.map((s) => s.gatehouse.outbox.sender.tick()));
        if (reports.every((r) => r.delivered + r.retried + r.dead === 0)) break;
      }
      const ids = receiver.received.map((r) => r.id);
      assert.equal(ids.length, INSTANCES * EVENTS_PER_INSTANCE, 'one delivery per event');
      assert.equal(new Set(ids).size, ids.length, 'none twice');
      assert.ok(receiver.received.every((r) => r.verifiedWith.length === 1 && r.payload.type === 'user.updated'));
    });
  });
}
