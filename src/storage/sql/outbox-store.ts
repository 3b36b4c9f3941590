import { sql, type ExpressionBuilder, type Kysely } from 'kysely';
import { OUTBOX_ERROR_LENGTH, type NewOutboxMessage, type OutboxChannel, type OutboxMessage, type OutboxStatus } from '../../domain/outbox.ts';
import type { OutboxClaim, OutboxFailure, OutboxPageKey, OutboxStore } from '../ports.ts';
import type { DialectName } from './database.ts';
import { translated } from './errors.ts';
import type { Database, OutboxTable } from './schema.ts';

/** The durable outbox (migration 027, `outbox`); the race rules are OutboxStore's (ports.ts). */
export class SqlOutboxStore implements OutboxStore {
  readonly #db: Kysely<Database>;
  readonly #dialect: DialectName;

  constructor(db: Kysely<Database>, dialect: DialectName) {
    this.#db = db;
    this.#dialect = dialect;
  }

  async enqueue(m: NewOutboxMessage): Promise<boolean> {
    const result = await translated(`outbox message ${m.id}`, () =>
      this.#db
        .insertInto('outbox')
        .values(toRow(m))
        // The idempotency key decides, in the INSERT itself: no read before it to race with.
        .onConflict((oc) => oc.column('dedupe_key').doNothing())
        .returning('id')
        .executeTakeFirst(),
    );
    return result !== undefined;
  }

  enqueueMany(messages: readonly NewOutboxMessage[]): Promise<number> {
    return insertOutboxMessages(this.#db, messages);
  }

  async claim(c: OutboxClaim): Promise<OutboxMessage[]> {
    if (c.channels.length === 0 || c.limit <= 0) return [];
    let picked = this.#db
      .selectFrom('outbox')
      .select('id')
      .where('status', '=', 'pending')
      .where('next_attempt_at', '<=', c.now)
      .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<=', c.now)]))
      .where('channel', 'in', [...c.channels])
      // In order per key (WH15): not while an earlier message of its key is pending — leased or
      // waiting for its retry. Decided in this statement, on its snapshot: a claimed message stays
      // pending until it is marked, so no concurrent claim can see it gone early.
      .where((eb) =>
        eb.or([
          eb('ordering_key', 'is', null),
          eb.not(
            eb.exists(
              eb
                .selectFrom('outbox as earlier')
                .select('earlier.id')
                .whereRef('earlier.ordering_key', '=', 'outbox.ordering_key')
                .where('earlier.status', '=', 'pending')
                .where((e) => e.or([e('earlier.created_at', '<', e.ref('outbox.created_at')), e.and([e('earlier.created_at', '=', e.ref('outbox.created_at')), e('earlier.id', '<', e.ref('outbox.id'))])])),
            ),
          ),
        ]),
      )
      .orderBy('next_attempt_at')
      .orderBy('id')
      .limit(c.limit);
    if (c.id !== undefined) picked = picked.where('id', '=', c.id);
    const lease = (eb: ExpressionBuilder<Database, 'outbox'>) => ({ lease_owner: c.owner, lease_until: c.now + c.leaseMs, attempts: eb('attempts', '+', 1), updated_at: c.now });
    // The conditions again in the UPDATE, on the row as it is when written (PostgreSQL re-reads a
    // row a claim that committed meanwhile changed): never a second lease on a live one.
    const stillClaimable = (eb: ExpressionBuilder<Database, 'outbox'>) => eb.and([eb('status', '=', 'pending'), eb.or([eb('lease_until', 'is', null), eb('lease_until', '<=', c.now)])]);
    let rows: OutboxTable[];
    if (this.#dialect === 'postgres') {
      // Rows another claim has locked are skipped, not waited for, so concurrent senders take
      // different messages instead of queueing behind each other. The pick is a MATERIALIZED CTE:
      // as a plain `IN (subquery)` the planner may run the subquery again per row, and its LIMIT
      // then bounds nothing (a claim of 4 took 60 in the contract test).
      rows = await this.#db
        .with((cte) => cte('picked').materialized(), () => picked.forUpdate().skipLocked())
        .updateTable('outbox')
        .set(lease)
        .where('id', 'in', (eb) => eb.selectFrom('picked').select('picked.id'))
        .where(stillClaimable)
        .returningAll()
        .execute();
    } else {
      // SQLite has one writer: the UPDATE runs alone, its subquery once.
      rows = await this.#db.updateTable('outbox').set(lease).where('id', 'in', picked).where(stillClaimable).returningAll().execute();
    }
    return rows.map(fromRow).sort((a, b) => a.nextAttemptAt - b.nextAttemptAt || (a.id < b.id ? -1 : 1));
  }

  async markDelivered(id: string, owner: string, now: number, responseStatus?: number): Promise<boolean> {
    const result = await this.#db
      .updateTable('outbox')
      .set({ status: 'delivered', delivered_at: now, updated_at: now, lease_owner: null, lease_until: null, last_error: null, ...(responseStatus === undefined ? {} : { response_status: responseStatus }) })
      .where('id', '=', id)
      .where('status', '=', 'pending')
      .where('lease_owner', '=', owner)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async markFailed(id: string, owner: string, f: OutboxFailure): Promise<boolean> {
    const result = await this.#db
      .updateTable('outbox')
      .set({
        status: f.retryAt === undefined ? 'dead' : 'pending',
        next_attempt_at: f.retryAt ?? f.now,
        last_error: f.error.slice(0, OUTBOX_ERROR_LENGTH),
        updated_at: f.now,
        lease_owner: null,
        lease_until: null,
        ...(f.responseStatus === undefined ? {} : { response_status: f.responseStatus }),
      })
      .where('id', '=', id)
      .where('status', '=', 'pending')
      .where('lease_owner', '=', owner)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async redeliver(id: string, now: number, options: { alsoDelivered?: boolean } = {}): Promise<OutboxMessage | undefined> {
    const row = await this.#db
      .updateTable('outbox')
      .set({ status: 'pending', attempts: 0, next_attempt_at: now, updated_at: now, lease_owner: null, lease_until: null, ordering_key: null })
      .where('id', '=', id)
      .where('status', 'in', options.alsoDelivered === true ? ['dead', 'delivered'] : ['dead'])
      .returningAll()
      .executeTakeFirst();
    return row && fromRow(row);
  }

  async get(id: string): Promise<OutboxMessage | undefined> {
    const row = await this.#db.selectFrom('outbox').selectAll().where('id', '=', id).executeTakeFirst();
    return row && fromRow(row);
  }

  async page(query: { status?: OutboxStatus | undefined; endpointId?: string | undefined; after?: OutboxPageKey | undefined; limit: number }): Promise<OutboxMessage[]> {
    let q = this.#db.selectFrom('outbox').selectAll();
    if (query.status !== undefined) q = q.where('status', '=', query.status);
    if (query.endpointId !== undefined) q = q.where('endpoint_id', '=', query.endpointId);
    const after = query.after;
    if (after !== undefined) q = q.where((eb) => eb.or([eb('created_at', '<', after.createdAt), eb.and([eb('created_at', '=', after.createdAt), eb('id', '<', after.id)])]));
    const rows = await q.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(query.limit).execute();
    return rows.map(fromRow);
  }

  async deleteFinished(deliveredBefore: number, deadBefore: number, limit: number): Promise<number> {
    const batch = this.#db.selectFrom('outbox').select('id').where(finished(deliveredBefore, deadBefore)).limit(limit);
    // The condition again on the DELETE: a message redelivered meanwhile is pending, and stays.
    const result = await this.#db.deleteFrom('outbox').where('id', 'in', batch).where(finished(deliveredBefore, deadBefore)).executeTakeFirst();
    return Number(result.numDeletedRows);
  }

  async countByStatus(): Promise<Record<OutboxStatus, number>> {
    const rows = await this.#db.selectFrom('outbox').select(['status', sql<string | number>`count(*)`.as('n')]).groupBy('status').execute();
    const counts: Record<OutboxStatus, number> = { pending: 0, delivered: 0, dead: 0 };
    for (const r of rows) counts[r.status as OutboxStatus] = Number(r.n);
    return counts;
  }
}

function finished(deliveredBefore: number, deadBefore: number) {
  return (eb: ExpressionBuilder<Database, 'outbox'>) =>
    eb.or([eb.and([eb('status', '=', 'delivered'), eb('delivered_at', '<', deliveredBefore)]), eb.and([eb('status', '=', 'dead'), eb('updated_at', '<', deadBefore)])]);
}

function fromRow(r: OutboxTable): OutboxMessage {
  return {
    id: r.id,
    channel: r.channel as OutboxChannel,
    kind: r.kind,
    destination: r.destination,
    payload: JSON.parse(r.payload) as Record<string, unknown>,
    dedupeKey: r.dedupe_key,
    createdAt: Number(r.created_at),
    nextAttemptAt: Number(r.next_attempt_at),
    status: r.status as OutboxStatus,
    attempts: Number(r.attempts),
    leaseOwner: r.lease_owner ?? undefined,
    leaseUntil: r.lease_until === null ? undefined : Number(r.lease_until),
    lastError: r.last_error ?? undefined,
    updatedAt: Number(r.updated_at),
    deliveredAt: r.delivered_at === null ? undefined : Number(r.delivered_at),
    // Only where set: a mail's message has none of the webhook fields.
    ...(r.endpoint_id === null ? {} : { endpointId: r.endpoint_id }),
    ...(r.ordering_key === null ? {} : { orderingKey: r.ordering_key }),
    ...(r.response_status === null ? {} : { responseStatus: Number(r.response_status) }),
  };
}

/**
 * Writes the messages (each unless its dedupe key exists) in multi-row INSERTs over `db` — the
 * database or a transaction of it (the audit store writes a batch's webhooks with its events,
 * src/storage/sql/audit-store.ts); how many were written.
 */
export async function insertOutboxMessages(db: Kysely<Database>, messages: readonly NewOutboxMessage[]): Promise<number> {
  let written = 0;
  // Bounded statements: each row binds 18 parameters, and SQLite allows 32 766 per statement.
  for (let i = 0; i < messages.length; i += ENQUEUE_CHUNK) {
    const rows = await translated('outbox messages', () =>
      db
        .insertInto('outbox')
        .values(messages.slice(i, i + ENQUEUE_CHUNK).map(toRow))
        .onConflict((oc) => oc.column('dedupe_key').doNothing())
        .returning('id')
        .execute(),
    );
    written += rows.length;
  }
  return written;
}

/** Rows per multi-row insert. */
const ENQUEUE_CHUNK = 500;

function toRow(m: NewOutboxMessage): OutboxTable {
  return {
    id: m.id,
    channel: m.channel,
    kind: m.kind,
    destination: m.destination,
    payload: JSON.stringify(m.payload),
    dedupe_key: m.dedupeKey,
    status: 'pending',
    attempts: 0,
    next_attempt_at: m.nextAttemptAt,
    lease_owner: null,
    lease_until: null,
    last_error: null,
    created_at: m.createdAt,
    updated_at: m.createdAt,
    delivered_at: null,
    endpoint_id: m.endpointId ?? null,
    ordering_key: m.orderingKey ?? null,
    response_status: null,
  };
}
