import type { Kysely } from 'kysely';
import type { LogoutDelivery, LogoutDeliveryStore } from '../ports.ts';
import type { Database } from './schema.ts';

/** The last back-channel logout delivery per client (migration 037, `logout_deliveries`; decisions LO13). */
export class SqlLogoutDeliveryStore implements LogoutDeliveryStore {
  readonly #db: Kysely<Database>;

  constructor(db: Kysely<Database>) {
    this.#db = db;
  }

  async record(delivery: LogoutDelivery): Promise<void> {
    const row = { client_id: delivery.clientId, status: delivery.status, attempted_at: delivery.attemptedAt, message_id: delivery.messageId, error: delivery.error ?? null };
    // One conditional upsert: of two instances recording attempts for the same client, the later
    // attempt stays, whichever statement runs last (no read-then-write).
    await this.#db
      .insertInto('logout_deliveries')
      .values(row)
      .onConflict((oc) =>
        oc
          .column('client_id')
          .doUpdateSet((eb) => ({ status: eb.ref('excluded.status'), attempted_at: eb.ref('excluded.attempted_at'), message_id: eb.ref('excluded.message_id'), error: eb.ref('excluded.error') }))
          .where('logout_deliveries.attempted_at', '<=', delivery.attemptedAt),
      )
      .execute();
  }

  async get(clientId: string): Promise<LogoutDelivery | undefined> {
    const row = await this.#db.selectFrom('logout_deliveries').selectAll().where('client_id', '=', clientId).executeTakeFirst();
    if (!row) return undefined;
    return { clientId: row.client_id, status: row.status === 'delivered' ? 'delivered' : 'failed', attemptedAt: Number(row.attempted_at), messageId: row.message_id, error: row.error ?? undefined };
  }
}
