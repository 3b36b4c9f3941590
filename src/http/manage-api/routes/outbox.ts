/**
 * `/outbox`: the durable outbox's messages (docs/mail.md, "The outbox"; docs/management-api.md):
 * newest first, by status, and redelivering a dead one. The envelope only — channel, kind,
 * destination, status, attempts, times, the last error — never the payload, which can hold a
 * secret link (docs/decisions.md AM22). Readers may list; redelivering is a change.
 */
import { OUTBOX_CHANNELS, OUTBOX_STATUSES, type OutboxStatus } from '../../../domain/outbox.ts';
import type { OutboxEnvelope, OutboxPageKey } from '../../../manage/outbox.ts';
import { notFound } from '../errors.ts';
import { decodeCursor, listQuerySchema, pageSchema, toPage } from '../pagination.ts';
import type { JsonSchema, ManageRoute } from '../route.ts';
import { isoTime, pageLimit } from './identity-shared.ts';

const idSchema: JsonSchema = { type: 'string', maxLength: 64, pattern: '^[0-9a-fA-F-]+$', description: 'The message id (a UUID; the Message-ID of a mail is `<id@domain of GATEHOUSE_MAIL_FROM>`).' };
const time = (description: string): JsonSchema => ({ type: ['string', 'null'], format: 'date-time', description });

export const outboxMessageSchema: JsonSchema = {
  type: 'object',
  required: ['id', 'channel', 'kind', 'destination', 'status', 'attempts', 'next_attempt_at', 'last_error', 'created_at', 'updated_at', 'delivered_at', 'leased_until'],
  properties: {
    id: idSchema,
    channel: { type: 'string', enum: [...OUTBOX_CHANNELS] },
    kind: { type: 'string', description: 'What caused it, e.g. `mail.test`.' },
    destination: { type: 'string', description: 'The mail address (channel `mail`) or URL.' },
    status: { type: 'string', enum: [...OUTBOX_STATUSES], description: '`pending`: to be sent (retrying when `attempts` > 0); `delivered`; `dead`: given up, may be redelivered.' },
    attempts: { type: 'integer', description: 'Attempts started since it was written or last redelivered.' },
    next_attempt_at: { type: 'string', format: 'date-time', description: 'When a pending message is tried (again).' },
    last_error: { type: ['string', 'null'], description: 'The last failure, short.' },
    created_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
    delivered_at: time('When the receiver accepted it.'),
    leased_until: time('An instance is sending it until then (null: none is).'),
  },
};

export function outboxMessageView(m: OutboxEnvelope): Record<string, unknown> {
  return {
    id: m.id,
    channel: m.channel,
    kind: m.kind,
    destination: m.destination,
    status: m.status,
    attempts: m.attempts,
    next_attempt_at: isoTime(m.nextAttemptAt),
    last_error: m.lastError ?? null,
    created_at: isoTime(m.createdAt),
    updated_at: isoTime(m.updatedAt),
    delivered_at: m.deliveredAt === undefined ? null : isoTime(m.deliveredAt),
    leased_until: m.leaseUntil === undefined ? null : isoTime(m.leaseUntil),
  };
}

/** The cursor's key `{c: created_at, i: id}`. */
export function isOutboxKey(key: unknown): key is { c: number; i: string } {
  const k = key as { c?: unknown; i?: unknown } | null;
  return typeof k === 'object' && k !== null && Number.isSafeInteger(k.c) && typeof k.i === 'string' && /^[0-9a-fA-F-]{1,64}$/.test(k.i);
}

export const outboxRoutes: ManageRoute[] = [
  {
    method: 'GET',
    path: '/outbox',
    operationId: 'listOutboxMessages',
    summary: 'List the outbox messages, newest first',
    description: 'Mail (and later webhooks and back-channel logout tokens) waiting, delivered or dead. `status=pending` with `attempts` > 0 are those being retried.',
    tag: 'Outbox',
    access: 'read',
    querystring: listQuerySchema(undefined, { status: { type: 'string', enum: [...OUTBOX_STATUSES], description: 'Only messages in this status.' } }),
    responses: { 200: { description: 'A page of messages.', schema: pageSchema(outboxMessageSchema) } },
    async handle(call) {
      const limit = pageLimit(call);
      const key = decodeCursor(call.query.cursor, isOutboxKey);
      const after: OutboxPageKey | undefined = key && { createdAt: key.c, id: key.i };
      const rows = await call.deps.admin.outbox.page({ status: call.query.status as OutboxStatus | undefined, after, limit: limit + 1 });
      return { body: toPage(rows, limit, (m) => ({ c: m.createdAt, i: m.id }), outboxMessageView) };
    },
  },
  {
    method: 'GET',
    path: '/outbox/:id',
    operationId: 'getOutboxMessage',
    summary: 'One outbox message',
    tag: 'Outbox',
    access: 'read',
    params: { type: 'object', required: ['id'], properties: { id: idSchema } },
    responses: { 200: { description: 'The message (its envelope; never the payload).', schema: outboxMessageSchema } },
    async handle(call) {
      const message = await call.deps.admin.outbox.get(call.params.id!);
      if (message === undefined) throw notFound(`no outbox message ${call.params.id}`);
      return { body: outboxMessageView(message) };
    },
  },
  {
    method: 'POST',
    path: '/outbox/:id/redeliver',
    operationId: 'redeliverOutboxMessage',
    summary: 'Redeliver a dead outbox message',
    description: 'Makes the dead message pending again, due now, with its attempts counted afresh; the next sender tick sends it. 409 when the message is not dead (pending or delivered).',
    tag: 'Outbox',
    access: 'write',
    params: { type: 'object', required: ['id'], properties: { id: idSchema } },
    responses: { 200: { description: 'The message, pending again.', schema: outboxMessageSchema } },
    async handle(call) {
      const message = await call.deps.admin.outbox.redeliver(call.acting, call.params.id!);
      if (message === undefined) throw notFound(`no outbox message ${call.params.id}`);
      return { body: outboxMessageView(message) };
    },
  },
];
