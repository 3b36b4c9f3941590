import { sql, type Kysely } from 'kysely';
import type { RateBudget, RateLimitStore } from '../ports.ts';
import type { Database } from './schema.ts';

/**
 * Fixed-window hit counters in the throttle's table (`throttle_counters`): `failures` counts the
 * hits of the window, `first_failure_at` is when the window began, `expires_at` when it ends. Only
 * the key scopes differ from the throttle's failure counters, so the two never share a row.
 */
export class SqlRateLimitStore implements RateLimitStore {
  readonly #db: Kysely<Database>;
  constructor(db: Kysely<Database>) {
    this.#db = db;
  }

  async take(budgets: RateBudget[], now: number, windowEndsAt: number): Promise<{ key: string; hits: number }[]> {
    // One budget per key (one statement may not update a row twice), sorted so concurrent
    // statements lock rows in one order on PostgreSQL and cannot deadlock.
    const byKey = new Map<string, number>();
    for (const { key, limit } of budgets) byKey.set(key, Math.min(byKey.get(key) ?? Infinity, limit));
    const keys = [...byKey.keys()].sort();
    if (keys.length === 0) return [];
    // The check and the count are one statement. Per row, the DO UPDATE's WHERE leaves a full
    // counter untouched (RETURNING then omits it): the row is locked (PostgreSQL) or the database
    // is (SQLite) between reading the count and writing it, so no race counts past a limit. The
    // NOT EXISTS makes the hit all or nothing: a request refused by one full counter is not
    // counted by the others. On SQLite that is exact (one writer at a time); on PostgreSQL it
    // reads the statement's snapshot, so racing requests may still count a refused hit elsewhere
    // (never past a limit).
    const limitOf = (table: string) =>
      sql<number>`case ${sql.ref(`${table}.key`)} ${sql.join(
        keys.map((key) => sql`when ${key} then cast(${byKey.get(key)!} as integer)`),
        sql` `,
      )} end`;
    const rows = await this.#db
      .insertInto('throttle_counters')
      .columns(['key', 'failures', 'first_failure_at', 'last_failure_at', 'expires_at'])
      .expression(
        sql`select v.column1, 1, cast(${now} as bigint), cast(${now} as bigint), cast(${windowEndsAt} as bigint) from (values ${sql.join(keys.map((key) => sql`(${key})`))}) as v
          where not exists (select 1 from throttle_counters as full_counter where full_counter.key in (${sql.join(keys)}) and full_counter.expires_at > ${now} and full_counter.failures >= ${limitOf('full_counter')})`,
      )
      .onConflict((oc) =>
        oc
          .column('key')
          .doUpdateSet((eb) => {
            const ended = eb('throttle_counters.expires_at', '<=', now);
            return {
              failures: eb.case().when(ended).then(1).else(eb('throttle_counters.failures', '+', 1)).end(),
              first_failure_at: eb.case().when(ended).then(eb.val(now)).else(eb.ref('throttle_counters.first_failure_at')).end(),
              last_failure_at: eb.ref('excluded.last_failure_at'),
              // A fixed window: hits inside it do not move its end.
              expires_at: eb.case().when(ended).then(eb.ref('excluded.expires_at')).else(eb.ref('throttle_counters.expires_at')).end(),
            };
          })
          .where((eb) => eb.or([eb('throttle_counters.expires_at', '<=', now), eb('throttle_counters.failures', '<', limitOf('throttle_counters'))])),
      )
      .returning(['key', 'failures'])
      .execute();
    return rows.map((r) => ({ key: r.key, hits: Number(r.failures) }));
  }
}
