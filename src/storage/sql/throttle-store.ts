import type { Kysely } from 'kysely';
import type { ThrottleCounter, ThrottleStore } from '../ports.ts';
import type { Database } from './schema.ts';

export class SqlThrottleStore implements ThrottleStore {
  readonly #db: Kysely<Database>;
  constructor(db: Kysely<Database>) {
    this.#db = db;
  }

  async get(keys: string[], now: number): Promise<ThrottleCounter[]> {
    if (keys.length === 0) return [];
    const rows = await this.#db.selectFrom('throttle_counters').select(['key', 'failures', 'last_failure_at']).where('key', 'in', keys).where('expires_at', '>', now).execute();
    return rows.map(fromRow);
  }

  async recordFailure(keys: string[], now: number, expiresAt: number): Promise<ThrottleCounter[]> {
    // Sorted, so concurrent statements lock the rows in one order on PostgreSQL and cannot deadlock;
    // distinct, because one statement may not update a row twice.
    const distinct = [...new Set(keys)].sort();
    if (distinct.length === 0) return [];
    const rows = await this.#db
      .insertInto('throttle_counters')
      .values(distinct.map((key) => ({ key, failures: 1, first_failure_at: now, last_failure_at: now, expires_at: expiresAt })))
      .onConflict((oc) =>
        oc.column('key').doUpdateSet((eb) => {
          const expired = eb('throttle_counters.expires_at', '<=', now);
          return {
            failures: eb.case().when(expired).then(1).else(eb('throttle_counters.failures', '+', 1)).end(),
            first_failure_at: eb.case().when(expired).then(now).else(eb.ref('throttle_counters.first_failure_at')).end(),
            last_failure_at: eb.ref('excluded.last_failure_at'),
            expires_at: eb.ref('excluded.expires_at'),
          };
        }),
      )
      .returning(['key', 'failures', 'last_failure_at'])
      .execute();
    return rows.map(fromRow);
  }

  async clear(keys: string[]): Promise<void> {
    if (keys.length === 0) return;
    await this.#db.deleteFrom('throttle_counters').where('key', 'in', keys).execute();
  }

  async deleteExpired(now: number, limit: number): Promise<number> {
    const expired = this.#db.selectFrom('throttle_counters').select('key').where('expires_at', '<=', now).limit(limit);
    const result = await this.#db.deleteFrom('throttle_counters').where('key', 'in', expired).executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}

function fromRow(r: { key: string; failures: number; last_failure_at: number }): ThrottleCounter {
  return { key: r.key, failures: Number(r.failures), lastFailureAt: Number(r.last_failure_at) };
}
