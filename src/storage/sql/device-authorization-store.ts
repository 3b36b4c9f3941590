import { sql, type Kysely, type Selectable } from 'kysely';
import type { DeviceAuthorization, DeviceAuthorizationStatus } from '../../domain/device-authorization.ts';
import type { DeviceAuthorizationStore, DeviceDecision, DevicePoll } from '../ports.ts';
import type { Database, DeviceAuthorizationsTable } from './schema.ts';

/** RFC 8628 §3.5: each slow_down adds 5 seconds to the interval. */
const SLOW_DOWN_STEP = 5;

/** The race rules are the port's (src/storage/ports.ts, DeviceAuthorizationStore): one conditional UPDATE per change. */
export class SqlDeviceAuthorizationStore implements DeviceAuthorizationStore {
  readonly #db: Kysely<Database>;
  constructor(db: Kysely<Database>) {
    this.#db = db;
  }

  async insert(d: DeviceAuthorization): Promise<boolean> {
    const row = toRow(d);
    // ON CONFLICT DO NOTHING rather than catching the violation: inside a PostgreSQL transaction
    // a failed statement would abort the whole unit of work.
    const inserted = await this.#db.insertInto('device_authorizations').values(row).onConflict((oc) => oc.doNothing()).returning('device_code_hash').executeTakeFirst();
    return inserted !== undefined;
  }

  async findPending(userCode: string, now: number): Promise<DeviceAuthorization | undefined> {
    const row = await this.#db
      .selectFrom('device_authorizations')
      .selectAll()
      .where('user_code', '=', userCode)
      .where('status', '=', 'pending')
      .where('expires_at', '>', now)
      .executeTakeFirst();
    return row ? fromRow(row) : undefined;
  }

  async decide(userCode: string, decision: DeviceDecision, now: number): Promise<DeviceAuthorization | undefined> {
    const changes =
      decision === 'deny'
        ? { status: 'denied', decided_at: now }
        : {
            status: 'approved',
            decided_at: now,
            user_id: decision.approve.userId,
            session_index: decision.approve.sessionIndex,
            auth_time: decision.approve.authTime,
            amr: JSON.stringify(decision.approve.amr),
            acr: decision.approve.acr ?? null,
          };
    const row = await this.#db
      .updateTable('device_authorizations')
      .set(changes)
      .where('user_code', '=', userCode)
      .where('status', '=', 'pending')
      .where('expires_at', '>', now)
      .returningAll()
      .executeTakeFirst();
    return row ? fromRow(row) : undefined;
  }

  async poll(deviceCodeHash: string, clientId: string, now: number): Promise<DevicePoll> {
    const redeemed = await this.#db
      .updateTable('device_authorizations')
      .set({ status: 'consumed', consumed_at: now })
      .where('device_code_hash', '=', deviceCodeHash)
      .where('client_id', '=', clientId)
      .where('status', '=', 'approved')
      .where('expires_at', '>', now)
      .returningAll()
      .executeTakeFirst();
    if (redeemed) return { outcome: 'redeemed', authorization: fromRow(redeemed) };

    // Every right-hand side reads the row as it was before this UPDATE (SQL semantics on both
    // databases), so `too_fast` and the new interval are decided from the previous poll's time.
    const tooFast = sql<boolean>`(last_polled_at is not null and last_polled_at > cast(${now} as bigint) - cast(interval_seconds as bigint) * 1000)`;
    const polled = await this.#db
      .updateTable('device_authorizations')
      .set({
        too_fast: sql<number>`case when ${tooFast} then 1 else 0 end`,
        interval_seconds: sql<number>`interval_seconds + case when ${tooFast} then ${sql.lit(SLOW_DOWN_STEP)} else 0 end`,
        last_polled_at: now,
      })
      .where('device_code_hash', '=', deviceCodeHash)
      .where('client_id', '=', clientId)
      .where('status', '=', 'pending')
      .where('expires_at', '>', now)
      .returningAll()
      .executeTakeFirst();
    if (polled) return { outcome: 'pending', authorization: fromRow(polled), tooFast: Number(polled.too_fast) === 1 };

    const row = await this.#db.selectFrom('device_authorizations').selectAll().where('device_code_hash', '=', deviceCodeHash).executeTakeFirst();
    return row ? { outcome: 'other', authorization: fromRow(row) } : { outcome: 'unknown' };
  }

  async deleteExpired(before: number, limit: number): Promise<number> {
    const result = await this.#db
      .deleteFrom('device_authorizations')
      .where('device_code_hash', 'in', (eb) => eb.selectFrom('device_authorizations').select('device_code_hash').where('expires_at', '<', before).limit(limit))
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}

function toRow(d: DeviceAuthorization): DeviceAuthorizationsTable {
  return {
    device_code_hash: d.deviceCodeHash,
    user_code: d.userCode,
    client_id: d.clientId,
    scope: d.scope,
    status: d.status,
    created_at: d.createdAt,
    expires_at: d.expiresAt,
    interval_seconds: d.interval,
    last_polled_at: d.lastPolledAt ?? null,
    too_fast: 0,
    user_id: d.approval?.userId ?? null,
    session_index: d.approval?.sessionIndex ?? null,
    auth_time: d.approval?.authTime ?? null,
    amr: d.approval ? JSON.stringify(d.approval.amr) : null,
    acr: d.approval?.acr ?? null,
    decided_at: d.decidedAt ?? null,
    consumed_at: d.consumedAt ?? null,
  };
}

function fromRow(r: Selectable<DeviceAuthorizationsTable>): DeviceAuthorization {
  const approved = r.user_id !== null && r.session_index !== null && r.auth_time !== null && r.amr !== null;
  return {
    deviceCodeHash: r.device_code_hash,
    userCode: r.user_code,
    clientId: r.client_id,
    scope: r.scope,
    status: r.status as DeviceAuthorizationStatus,
    createdAt: Number(r.created_at),
    expiresAt: Number(r.expires_at),
    interval: Number(r.interval_seconds),
    lastPolledAt: r.last_polled_at === null ? undefined : Number(r.last_polled_at),
    approval: approved ? { userId: r.user_id!, sessionIndex: r.session_index!, authTime: Number(r.auth_time), amr: JSON.parse(r.amr!) as string[], acr: r.acr ?? undefined } : undefined,
    decidedAt: r.decided_at === null ? undefined : Number(r.decided_at),
    consumedAt: r.consumed_at === null ? undefined : Number(r.consumed_at),
  };
}
