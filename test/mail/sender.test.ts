/**
 * The outbox sender with transports of the test's own making, on every database (src/oauth/outbox/
 * sender.ts; docs/decisions.md AM4–AM11): the back-off schedule exactly (jitter fixed) until a
 * temporary failure is dead, a permanent one dead after three; and a sender whose lease expired
 * while it was sending, overtaken by another: the message is marked delivered once, by the
 * holder of the lease, and the late sender learns it lost the lease (the at-least-once point).
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import type { OutboxMessage } from '../../src/domain/outbox.ts';
import { ManualClock } from '../../src/lib/clock.ts';
import { cryptoRandom } from '../../src/lib/random.ts';
import { noAudit } from '../../src/observability/audit.ts';
import { retryPolicy } from '../../src/oauth/outbox/retry.ts';
import { OutboxSender, type DeliveryOutcome } from '../../src/oauth/outbox/sender.ts';
import { DeliveryFailure, type OutboxTransport } from '../../src/oauth/outbox/transport.ts';
import type { Store } from '../../src/storage/ports.ts';
import { DATABASES } from '../helpers/databases.ts';
import { T0, withTestStore } from '../helpers/store.ts';

const SECOND = 1000;
const LEASE = 300 * SECOND;

function senderOver(store: Store, clock: ManualClock, transport: OutboxTransport, observed: DeliveryOutcome[] = []): OutboxSender {
  return new OutboxSender({ outbox: store.outbox, clock, random: cryptoRandom, audit: noAudit, transports: [transport], policy: retryPolicy(12), leaseMs: LEASE, instance: 'test', jitter: () => 0, observe: (_channel, outcome) => observed.push(outcome) });
}

async function aQueuedMessage(store: Store): Promise<string> {
  const id = randomUUID();
  await store.outbox.enqueue({ id, channel: 'mail', kind: 'mail.test', destination: 'a@example.com', payload: {}, dedupeKey: id, createdAt: T0, nextAttemptAt: T0 });
  return id;
}

const failing = (permanent: boolean): OutboxTransport => ({ channel: 'mail', deliver: async () => Promise.reject(permanent ? new DeliveryFailure('SMTP 550: no', true) : new Error('connect ECONNREFUSED')) });

for (const kind of DATABASES) {
  describe(`the outbox sender on ${kind.name}`, () => {
    test('a temporary failure is retried after 15 s, 30 s, 60 s … up to 30 min (jitter 0: half of each wait), and dead at the 12th attempt; a permanent one at the 3rd', () =>
      withTestStore(kind, async (store) => {
        const clock = new ManualClock(T0);
        const id = await aQueuedMessage(store);
        const sender = senderOver(store, clock, failing(false));
        const waits: number[] = [];
        for (let attempt = 1; attempt <= 12; attempt++) {
          await sender.tick();
          const row = (await store.outbox.get(id))!;
          if (row.status === 'dead') break;
          waits.push((row.nextAttemptAt - clock.now()) / SECOND);
          clock.set(row.nextAttemptAt);
        }
        assert.deepEqual(waits, [15, 30, 60, 120, 240, 480, 960, 1800, 1800, 1800, 1800]);
        assert.deepEqual([(await store.outbox.get(id))?.status, (await store.outbox.get(id))?.attempts, (await store.outbox.get(id))?.lastError], ['dead', 12, 'connect ECONNREFUSED']);

        const permanent = await aQueuedMessage(store);
        const refusing = senderOver(store, clock, failing(true));
        const outcomes: string[] = [];
        for (let attempt = 1; attempt <= 3; attempt++) {
          const report = await refusing.tick();
          outcomes.push(report.dead === 1 ? 'dead' : 'retry');
          clock.advance(3600 * SECOND);
        }
        assert.deepEqual(outcomes, ['retry', 'retry', 'dead']);
        assert.equal((await store.outbox.get(permanent))?.attempts, 3);
      }));

    test('a sender whose lease expired mid-send is overtaken: one mark, by the holder; the late one learns it lost the lease', () =>
      withTestStore(kind, async (store) => {
        const clock = new ManualClock(T0);
        const id = await aQueuedMessage(store);
        const sent: string[] = [];
        const observed: DeliveryOutcome[] = [];
        const fast: OutboxTransport = { channel: 'mail', deliver: async (m: OutboxMessage) => void sent.push(`fast ${m.id}`) };
        const second = senderOver(store, clock, fast, observed);
        // The slow send outlives its lease; meanwhile another instance claims and sends it.
        const slow: OutboxTransport = {
          channel: 'mail',
          async deliver(m) {
            clock.advance(LEASE);
            assert.deepEqual(await second.tick(), { delivered: 1, retried: 0, dead: 0, leaseLost: 0 });
            sent.push(`slow ${m.id}`);
          },
        };
        const first = senderOver(store, clock, slow, observed);
        assert.deepEqual(await first.tick(), { delivered: 0, retried: 0, dead: 0, leaseLost: 1 });
        assert.deepEqual(sent, [`fast ${id}`, `slow ${id}`], 'sent twice: the one at-least-once point (same Message-ID)');
        assert.deepEqual(observed, ['delivered', 'lease_lost']);
        const row = await store.outbox.get(id);
        assert.deepEqual([row?.status, row?.attempts, row?.deliveredAt], ['delivered', 2, T0 + LEASE]);
        assert.deepEqual(await first.tick(), { delivered: 0, retried: 0, dead: 0, leaseLost: 0 }, 'never again');
      }));
  });
}
