import type { Kysely, Selectable } from 'kysely';
import { scopeSet, type Consent } from '../../domain/consent.ts';
import type { ConsentStore } from '../ports.ts';
import { translated } from './errors.ts';
import type { ConsentsTable, Database } from './schema.ts';

/** Consents to third-party clients (migration 013, `consents`). */
export class SqlConsentStore implements ConsentStore {
  readonly #db: Kysely<Database>;

  constructor(db: Kysely<Database>) {
    this.#db = db;
  }

  async find(userId: string, clientId: string): Promise<Consent | undefined> {
    const row = await this.#db.selectFrom('consents').selectAll().where('user_id', '=', userId).where('client_id', '=', clientId).executeTakeFirst();
    return row && fromRow(row);
  }

  async put(consent: Consent): Promise<void> {
    const scope = scopeSet(consent.scope).join(' ');
    await translated('consent', () =>
      this.#db
        .insertInto('consents')
        .values({ user_id: consent.userId, client_id: consent.clientId, scope, granted_at: consent.grantedAt, updated_at: consent.updatedAt })
        .onConflict((oc) => oc.columns(['user_id', 'client_id']).doUpdateSet({ scope, updated_at: consent.updatedAt }))
        .execute(),
    );
  }

  async listForUser(userId: string): Promise<Consent[]> {
    const rows = await this.#db.selectFrom('consents').selectAll().where('user_id', '=', userId).orderBy('client_id').execute();
    return rows.map(fromRow);
  }

  async delete(userId: string, clientId: string): Promise<boolean> {
    const result = await this.#db.deleteFrom('consents').where('user_id', '=', userId).where('client_id', '=', clientId).executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }
}

function fromRow(row: Selectable<ConsentsTable>): Consent {
  return {
    userId: row.user_id,
    clientId: row.client_id,
    scope: row.scope === '' ? [] : row.scope.split(' '),
    grantedAt: Number(row.granted_at),
    updatedAt: Number(row.updated_at),
  };
}
