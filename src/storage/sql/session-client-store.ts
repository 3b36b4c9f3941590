import { sql, type Kysely } from 'kysely';
import type { SessionClient, SessionClientStore } from '../ports.ts';
import type { Database } from './schema.ts';

/** The relying parties of each SSO session (migration 034, `session_clients`). */
export class SqlSessionClientStore implements SessionClientStore {
  readonly #db: Kysely<Database>;

  constructor(db: Kysely<Database>) {
    this.#db = db;
  }

  async record(entry: SessionClient, now: number): Promise<void> {
    // One statement: the row exists only if the session did when it ran (no foreign key, LO3).
    await this.#db
      .insertInto('session_clients')
      .columns(['session_index', 'client_id', 'sid', 'created_at'])
      .expression((eb) =>
        eb
          .selectFrom('sessions')
          .select([eb.val(entry.sessionIndex).as('session_index'), eb.val(entry.clientId).as('client_id'), eb.val(entry.sid).as('sid'), sql<number>`${now}`.as('created_at')])
          .where('session_index', '=', entry.sessionIndex),
      )
      .onConflict((oc) => oc.columns(['session_index', 'client_id', 'sid']).doNothing())
      .execute();
  }

  async takeOfSessions(sessionIndexes: readonly string[]): Promise<SessionClient[]> {
    if (sessionIndexes.length === 0) return [];
    const rows = await this.#db
      .deleteFrom('session_clients')
      .where('session_index', 'in', [...sessionIndexes])
      .returning(['session_index', 'client_id', 'sid'])
      .execute();
    const key = (r: SessionClient) => `${r.sessionIndex}\0${r.clientId}\0${r.sid}`;
    return rows.map((r) => ({ sessionIndex: r.session_index, clientId: r.client_id, sid: r.sid })).sort((a, b) => (key(a) < key(b) ? -1 : 1));
  }

  async move(from: string, to: string): Promise<number> {
    const result = await this.#db.updateTable('session_clients').set({ session_index: to }).where('session_index', '=', from).executeTakeFirst();
    return Number(result.numUpdatedRows);
  }

  async deleteOrphans(limit: number): Promise<number> {
    const orphans = this.#db
      .selectFrom('session_clients as sc')
      .select(['sc.session_index'])
      .where((eb) => eb.not(eb.exists(eb.selectFrom('sessions').select('sessions.session_index').whereRef('sessions.session_index', '=', 'sc.session_index'))))
      .limit(limit);
    const result = await this.#db.deleteFrom('session_clients').where('session_index', 'in', orphans).executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}
