/**
 * Webhook endpoints (WebhookStore, migration 036) and what webhooks need of the outbox, on every
 * database (docs/decisions.md WH1–WH30): an endpoint's rows and its secret rotation (two at once
 * lose no secret); an audit batch and its webhooks written together or not at all; and the claim
 * rule that keeps one endpoint's messages about one subject in order — with several instances
 * claiming at once, a message is never claimed while an earlier one of its key is pending.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, test } from 'node:test';
import type { NewOutboxMessage, OutboxMessage } from '../../src/domain/outbox.ts';
import type { StoredWebhookEndpoint } from '../../src/domain/webhook.ts';
import { AuditIds } from '../../src/observability/audit-store-sink.ts';
import { ConflictError, type Store } from '../../src/storage/ports.ts';
import { DATABASES } from '../helpers/databases.ts';
import { openTestStore, T0, unique, warmUp, type TestStore } from '../helpers/store.ts';

const INSTANCES = 4;
const RACERS_PER_INSTANCE = 4;
const MINUTE = 60_000;

function anEndpoint(overrides: Partial<StoredWebhookEndpoint> = {}): StoredWebhookEndpoint {
  return { id: randomUUID(), url: 'https://hooks.example.com/in', description: 'd', events: ['user.created'], enabled: true, secret: 'whsec_current', previousSecret: undefined, previousSecretUntil: undefined, createdAt: T0, updatedAt: T0, ...overrides };
}

const ids = new AuditIds();
function aWebhook(key: string | undefined, createdAt: number, overrides: Partial<NewOutboxMessage> = {}): NewOutboxMessage {
  return { id: ids.next(createdAt), channel: 'webhook', kind: 'webhook.user.updated', destination: 'https://hooks.example.com/in', payload: { type: 'user.updated' }, dedupeKey: unique('key'), createdAt, nextAttemptAt: createdAt, endpointId: 'e1', ...(key === undefined ? {} : { orderingKey: key }), ...overrides };
}

for (const kind of DATABASES) {
  describe(`webhook store on ${kind.name}`, () => {
    let harness: TestStore;
    let store: Store;
    let others: Store[];
    beforeEach(async () => {
      harness = await openTestStore(kind, { poolSize: RACERS_PER_INSTANCE });
      store = harness.store;
      others = [];
      for (let i = 1; i < INSTANCES; i++) others.push(await harness.open({ poolSize: RACERS_PER_INSTANCE }));
      await Promise.all([store, ...others].map((s) => warmUp(s, RACERS_PER_INSTANCE)));
    });
    afterEach(async () => harness.close());

    test('endpoints: inserted, read, listed (enabled only on request, oldest first), changed, deleted', async () => {
      const a = anEndpoint({ events: '*' });
      const b = anEndpoint({ createdAt: T0 + 1, updatedAt: T0 + 1, enabled: false, events: ['user.created', 'user.deleted'] });
      await store.webhooks.insert(a);
      await store.webhooks.insert(b);
      await assert.rejects(store.webhooks.insert(a), ConflictError);
      assert.deepEqual(await store.webhooks.get(a.id), a);
      assert.deepEqual(await store.webhooks.list(), [a, b]);
      assert.deepEqual(await store.webhooks.list({ enabledOnly: true }), [a]);
      const changed = await store.webhooks.update(b.id, { enabled: true, events: ['user.deleted'], description: 'now' }, T0 + 5);
      assert.deepEqual(changed, { ...b, enabled: true, events: ['user.deleted'], description: 'now', updatedAt: T0 + 5 });
      assert.equal(await store.webhooks.update(randomUUID(), { enabled: true }, T0), undefined);
      assert.equal(await store.webhooks.delete(a.id), true);
      assert.equal(await store.webhooks.delete(a.id), false);
      assert.deepEqual(await store.webhooks.list(), [changed]);
    });

    test('rotation moves the current secret to previous in the same statement: two rotations at once keep both new secrets', async () => {
      const e = anEndpoint();
      await store.webhooks.insert(e);
      const one = await store.webhooks.rotateSecret(e.id, 'whsec_one', T0 + MINUTE, T0);
      assert.deepEqual([one?.secret, one?.previousSecret, one?.previousSecretUntil], ['whsec_one', 'whsec_current', T0 + MINUTE]);
      await Promise.all([store.webhooks.rotateSecret(e.id, 'whsec_a', T0 + MINUTE, T0), others[0]!.webhooks.rotateSecret(e.id, 'whsec_b', T0 + MINUTE, T0)]);
      const after = (await store.webhooks.get(e.id))!;
      assert.deepEqual([after.secret, after.previousSecret].sort(), ['whsec_a', 'whsec_b'], 'the earlier rotation\'s secret is the previous one, not lost');
      assert.equal(await store.webhooks.rotateSecret(randomUUID(), 'whsec_x', T0, T0), undefined);
    });

    test('an audit batch and its webhooks are written together, or neither', async () => {
      const record = { id: ids.next(T0), at: T0, event: 'user.updated', userId: 'u1', data: { fields: ['name'] } };
      const message = aWebhook('e1/user:u1', T0);
      await store.audit.insertManyWithMessages([record], [message]);
      assert.equal((await store.audit.page({ types: ['user.updated'], limit: 10 })).length, 1);
      assert.equal((await store.outbox.get(message.id))?.orderingKey, 'e1/user:u1');
      // The same id again with another dedupe key is a conflict: the events of the batch are not stored either.
      const record2 = { ...record, id: ids.next(T0 + 1), at: T0 + 1 };
      await assert.rejects(store.audit.insertManyWithMessages([record2], [{ ...message, dedupeKey: unique('key') }]));
      assert.equal((await store.audit.page({ types: ['user.updated'], limit: 10 })).length, 1, 'the batch rolled back');
      // The same dedupe key again writes the events and no second message (a batch written twice).
      assert.equal(await store.outbox.enqueueMany([{ ...message, id: ids.next(T0 + 2) }]), 0);
    });

    test(`in order per key: ${INSTANCES} instances claiming at once never claim a message while an earlier one of its key is pending`, async () => {
      // Three subjects with 8 messages each, some in the same ms (ordered by id), and 8 with no key.
      const keys = ['e1/user:a', 'e1/user:b', 'e2/user:a'];
      const written: NewOutboxMessage[] = [];
      for (let i = 0; i < 8; i++) for (const key of [...keys, undefined]) written.push(aWebhook(key, T0 + Math.floor(i / 2)));
      // Written out of order: the rule is (createdAt, id), not the order of the inserts.
      for (const m of [...written].reverse()) await store.outbox.enqueue(m);
      const instances = [store, ...others];
      const claimedInRound: OutboxMessage[][] = [];
      const now = T0 + MINUTE;
      let failOnce = true;
      for (let round = 0; round < 40; round++) {
        const claims = (await Promise.all(instances.flatMap((s, i) => Array.from({ length: RACERS_PER_INSTANCE }, (_, r) => s.outbox.claim({ owner: `${round}/${i}/${r}`, now, leaseMs: MINUTE, limit: 3, channels: ['webhook'] }))))).flat();
        if (claims.length === 0) break;
        claimedInRound.push(claims);
        // While claimed (leased, still pending) nothing later of the same key is claimable: each round holds at most one per key.
        for (const key of keys) assert.ok(claims.filter((m) => m.orderingKey === key).length <= 1, `round ${round}: two of ${key} claimed at once`);
        for (const m of claims) {
          // The first of e1/user:a fails once and is retried: the others of its key wait for it.
          if (failOnce && m.orderingKey === 'e1/user:a') {
            failOnce = false;
            await store.outbox.markFailed(m.id, m.leaseOwner!, { now, error: 'x', retryAt: now });
          } else await store.outbox.markDelivered(m.id, m.leaseOwner!, now, 200);
        }
      }
      const order = claimedInRound.flat();
      for (const key of keys) {
        const expected = written.filter((m) => m.orderingKey === key).map((m) => m.id);
        const claimed = order.filter((m) => m.orderingKey === key).map((m) => m.id);
        assert.deepEqual([...new Set(claimed)], expected, `${key} claimed in (createdAt, id) order`);
      }
      assert.equal(order.filter((m) => m.orderingKey === 'e1/user:a').length, 9, 'the failed one was claimed twice, the rest once');
      assert.equal(order.filter((m) => m.orderingKey === undefined).length, 8);
      // A dead message no longer holds its key back; a redelivered one is out of the order.
      const dead = aWebhook('e3/user:z', T0);
      const next = aWebhook('e3/user:z', T0 + 1);
      await store.outbox.enqueueMany([dead, next]);
      const [first] = await store.outbox.claim({ owner: 'd', now, leaseMs: MINUTE, limit: 10, channels: ['webhook'] });
      assert.equal(first?.id, dead.id);
      await store.outbox.markFailed(dead.id, 'd', { now, error: 'gone', retryAt: undefined, responseStatus: 410 });
      const redelivered = await store.outbox.redeliver(dead.id, now, { alsoDelivered: true });
      assert.deepEqual([redelivered?.status, redelivered?.orderingKey, redelivered?.responseStatus], ['pending', undefined, 410]);
      const both = await store.outbox.claim({ owner: 'e', now, leaseMs: MINUTE, limit: 10, channels: ['webhook'] });
      assert.deepEqual(both.map((m) => m.id).sort(), [dead.id, next.id].sort());
    });
  });
}
