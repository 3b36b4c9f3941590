/**
 * What administrators see and do of the outbox (docs/mail.md, "The outbox"): its messages by
 * status, newest first, and redelivering a dead one. The envelope only: a payload can hold a
 * secret (a reset link), so no use case returns it (docs/decisions.md AM22).
 */
import { OutboxStateError, type OutboxMessage, type OutboxStatus } from '../domain/outbox.ts';
import type { OutboxPageKey } from '../storage/ports.ts';
import type { Acting } from './acting.ts';
import type { AdministrationPorts } from './ports.ts';

export type { OutboxPageKey };

/** An outbox message without its payload. */
export type OutboxEnvelope = Omit<OutboxMessage, 'payload'>;

export interface OutboxAdministration {
  /** Up to `limit` messages (callers ask one more than they show), newest first, after `after`, only `status` when given. */
  page(query: { status?: OutboxStatus | undefined; after?: OutboxPageKey | undefined; limit: number }): Promise<OutboxEnvelope[]>;
  get(id: string): Promise<OutboxEnvelope | undefined>;
  /** Messages by status: the queue's depth. */
  counts(): Promise<Record<OutboxStatus, number>>;
  /**
   * Makes a dead message pending again, due now, its attempts reset; with its audit event.
   * undefined when there is no such message; OutboxStateError when it is not dead.
   */
  redeliver(acting: Acting, id: string): Promise<OutboxEnvelope | undefined>;
}

export function envelope(message: OutboxMessage): OutboxEnvelope {
  const { payload: _payload, ...rest } = message;
  return rest;
}

export function outboxAdministration(ports: Pick<AdministrationPorts, 'store' | 'clock' | 'audit'>): OutboxAdministration {
  const outbox = ports.store.outbox;
  return {
    page: async (query) => (await outbox.page(query)).map(envelope),
    get: async (id) => {
      const message = await outbox.get(id);
      return message && envelope(message);
    },
    counts: () => outbox.countByStatus(),
    async redeliver(acting, id) {
      // One conditional write decides (only a dead message turns pending); the read after it
      // only says why nothing changed.
      const redelivered = await outbox.redeliver(id, ports.clock.now());
      if (redelivered === undefined) {
        const current = await outbox.get(id);
        if (current === undefined) return undefined;
        throw new OutboxStateError(current.status, `message ${id} is ${current.status}: only a dead message can be redelivered`);
      }
      ports.audit.emit({ event: 'outbox.redelivered', messageId: id, channel: redelivered.channel, kind: redelivered.kind, actor: acting.actor });
      return envelope(redelivered);
    },
  };
}
