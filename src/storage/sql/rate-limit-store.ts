import { sql, type Kysely } from 'kysely';
import type { RateBudget, RateLimitStore } from '../ports.ts';
import { prepared, type Prepared } from './prepared.ts';
import type { Database } from './schema.ts';

/**
 * Fixed-window hit counters in the throttle's table (`throttle_counters`): `failures` counts the
 * hits of the window, `first_failure_at` is when the window began, `expires_at` when it ends. Only
 * the key scopes differ from the throttle's failure counters, so the two never share a row.
 */
export class SqlRateLimitStore implements RateLimitStore {
  readonly #db: Kysely<Database>;
  /** The statement for one and for two budgets (the shapes the server uses), compiled once. */
  readonly #q: ReturnType<typeof statements>;

  /** `sharing`: a store whose compiled statements to reuse (the same store inside a unit of work). */
  constructor(db: Kysely<Database>, sharing?: SqlRateLimitStore) {
    this.#db = db;
    this.#q = sharing ? sharing.#q : statements(db);
  }

  async take(budgets: RateBudget[], now: number, windowEndsAt: number): Promise<{ key: string; hits: number }[]> {
    // One budget per key (one statement may not update a row twice), sorted so concurrent
    // statements lock rows in one order on PostgreSQL and cannot deadlock.
    const byKey = new Map<string, number>();
    for (const { key, limit } of budgets) byKey.set(key, Math.min(byKey.get(key) ?? Infinity, limit));
    const keys = [...byKey.keys()].sort();
    if (keys.length === 0) return [];
    const params: TakeParams = { now, windowEndsAt };
    keys.forEach((key, i) => {
      params[`key${i}`] = key;
      params[`limit${i}`] = byKey.get(key)!;
    });
    const statement = this.#q[keys.length] ?? takeStatement(this.#db, keys.length);
    const { rows } = await statement.execute(params, this.#db);
    return rows.map((r) => ({ key: r.key, hits: Number(r.failures) }));
  }
}

type TakeParams = Record<string, string | number>;

function statements(db: Kysely<Database>): Record<number, Prepared<TakeParams, { key: string; failures: number }>> {
  return { 1: takeStatement(db, 1), 2: takeStatement(db, 2) };
}

/**
 * The check and the count of `n` budgets are one statement. Per row, the DO UPDATE's WHERE leaves
 * a full counter untouched (RETURNING then omits it): the row is locked (PostgreSQL) or the
 * database is (SQLite) between reading the count and writing it, so no race counts past a limit.
 * The NOT EXISTS makes the hit all or nothing: a request refused by one full counter is not
 * counted by the others. On SQLite that is exact (one writer at a time); on PostgreSQL it reads
 * the statement's snapshot, so racing requests may still count a refused hit elsewhere (never
 * past a limit). Every value is a bound parameter, so the text depends on `n` alone
 * (test/contract/statement-texts.test.ts).
 */
function takeStatement(db: Kysely<Database>, n: number): Prepared<TakeParams, { key: string; failures: number }> {
  return prepared<TakeParams, { key: string; failures: number }>(db, (param) => {
    const indexes = Array.from({ length: n }, (_, i) => i);
    const now = () => sql<number>`cast(${param('now')} as bigint)`;
    const limitOf = (table: string) =>
      sql<number>`case ${sql.ref(`${table}.key`)} ${sql.join(
        indexes.map((i) => sql`when ${param(`key${i}`)} then cast(${param(`limit${i}`)} as integer)`),
        sql` `,
      )} end`;
    return db
      .insertInto('throttle_counters')
      .columns(['key', 'failures', 'first_failure_at', 'last_failure_at', 'expires_at'])
      .expression(
        sql`select v.column1, 1, ${now()}, ${now()}, cast(${param('windowEndsAt')} as bigint) from (values ${sql.join(indexes.map((i) => sql`(${param(`key${i}`)})`))}) as v
          where not exists (select 1 from throttle_counters as full_counter where full_counter.key in (${sql.join(indexes.map((i) => param(`key${i}`)))}) and full_counter.expires_at > ${now()} and full_counter.failures >= ${limitOf('full_counter')})`,
      )
      .onConflict((oc) =>
        oc
          .column('key')
          .doUpdateSet((eb) => {
            const ended = () => sql<boolean>`${eb.ref('throttle_counters.expires_at')} <= ${now()}`;
            return {
              failures: eb.case().when(ended()).then(1).else(eb('throttle_counters.failures', '+', 1)).end(),
              first_failure_at: eb.case().when(ended()).then(now()).else(eb.ref('throttle_counters.first_failure_at')).end(),
              last_failure_at: eb.ref('excluded.last_failure_at'),
              // A fixed window: hits inside it do not move its end.
              expires_at: eb.case().when(ended()).then(eb.ref('excluded.expires_at')).else(eb.ref('throttle_counters.expires_at')).end(),
            };
          })
          .where((eb) => eb.or([sql<boolean>`${eb.ref('throttle_counters.expires_at')} <= ${now()}`, eb('throttle_counters.failures', '<', limitOf('throttle_counters'))])),
      )
      .returning(['key', 'failures']);
  });
}
