import { createHash } from 'node:crypto';
import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { ThrottleCounter, ThrottleReservation, ThrottleRule, ThrottleStore } from '../ports.ts';
import type { DialectName } from './database.ts';
import { prepared } from './prepared.ts';
import type { Database } from './schema.ts';
import { atomically } from './unit-of-work.ts';

const COLUMNS = ['key', 'failures', 'pending', 'last_failure_at', 'reserved_at'] as const;

interface CounterRow {
  key: string;
  failures: number;
  pending: number;
  last_failure_at: number;
  reserved_at: number;
}

export class SqlThrottleStore implements ThrottleStore {
  readonly #db: Kysely<Database>;
  readonly #dialect: DialectName;
  readonly #q: ReturnType<typeof statements>;

  /** `sharing`: a store whose compiled statements to reuse (the same store inside a unit of work). */
  constructor(db: Kysely<Database>, dialect: DialectName, sharing?: SqlThrottleStore) {
    this.#db = db;
    this.#dialect = dialect;
    this.#q = sharing ? sharing.#q : statements(db);
  }

  async get(keys: string[], now: number): Promise<ThrottleCounter[]> {
    return read(this.#db, keys, now);
  }

  async reserve(rules: ThrottleRule[], maxDelay: number, now: number, expiresAt: number): Promise<ThrottleReservation> {
    // Sorted, so every reservation (and every other multi-row write) takes its locks in one order.
    const sorted = [...new Map(rules.map((r) => [r.key, r])).values()].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    if (sorted.length === 0) return { granted: true, counters: [] };
    const statement = reserveStatement(sorted, maxDelay, now, expiresAt);
    const keys = sorted.map((r) => r.key);
    if (this.#dialect === 'sqlite') {
      // One writing statement: SQLite runs it under the database's write lock, alone.
      const { rows } = await statement.execute(this.#db);
      return rows.length > 0 ? { granted: true, counters: rows.map(fromRow) } : { granted: false, counters: await read(this.#db, keys, now) };
    }
    // PostgreSQL's statement reads the counters as of its start, so two reservations of one key
    // must not overlap: each first takes the key's advisory lock (held until commit), in the
    // order of the lock ids. The next holder's statement then starts after this one committed.
    return atomically(this.#db, async (trx) => {
      for (const id of keys.map(lockId).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))) {
        await sql`select pg_advisory_xact_lock(cast(${id.toString()} as bigint))`.execute(trx);
      }
      const { rows } = await statement.execute(trx);
      return rows.length > 0 ? { granted: true, counters: rows.map(fromRow) } : { granted: false, counters: await read(trx, keys, now) };
    });
  }

  async failReservation(keys: string[], reservedAt: number, now: number, expiresAt: number): Promise<ThrottleCounter[]> {
    const distinct = sortedDistinct(keys);
    if (distinct.length === 0) return [];
    const rows = await this.#db
      .insertInto('throttle_counters')
      .values(distinct.map((key) => ({ key, failures: 1, pending: 0, first_failure_at: now, last_failure_at: reservedAt, reserved_at: reservedAt, expires_at: expiresAt })))
      .onConflict((oc) =>
        oc.column('key').doUpdateSet((eb) => {
          const expired = eb('throttle_counters.expires_at', '<=', now);
          return {
            failures: eb.case().when(expired).then(1).else(eb('throttle_counters.failures', '+', 1)).end(),
            pending: eb.case().when(eb.or([expired, eb('throttle_counters.pending', '<=', 0)])).then(0).else(eb('throttle_counters.pending', '-', 1)).end(),
            first_failure_at: eb.case().when(expired).then(eb.val(now)).else(eb.ref('throttle_counters.first_failure_at')).end(),
            // The failure counts from when its attempt was reserved: the count and the time it
            // waits from stay what the reservation made them (ThrottleStore's race rules).
            last_failure_at: eb
              .case()
              .when(eb.or([expired, eb('throttle_counters.last_failure_at', '<', reservedAt)]))
              .then(eb.val(reservedAt))
              .else(eb.ref('throttle_counters.last_failure_at'))
              .end(),
            expires_at: eb.case().when(eb('throttle_counters.expires_at', '<', expiresAt)).then(eb.val(expiresAt)).else(eb.ref('throttle_counters.expires_at')).end(),
          };
        }),
      )
      .returning(COLUMNS)
      .execute();
    return rows.map(fromRow);
  }

  async releaseReservation(keys: string[]): Promise<void> {
    // One row per statement: no statement here holds one row's lock while waiting for another's.
    for (const key of sortedDistinct(keys)) {
      const left = await this.#q.release.first({ key }, this.#db);
      // Conditional, so a reservation made since the update keeps its row.
      if (left && Number(left.failures) === 0 && Number(left.pending) === 0) await this.#q.deleteEmpty.execute({ key }, this.#db);
    }
  }

  async recordFailure(keys: string[], now: number, expiresAt: number): Promise<ThrottleCounter[]> {
    // Sorted, so concurrent statements lock the rows in one order on PostgreSQL and cannot deadlock;
    // distinct, because one statement may not update a row twice.
    const distinct = sortedDistinct(keys);
    if (distinct.length === 0) return [];
    const rows = await this.#db
      .insertInto('throttle_counters')
      .values(distinct.map((key) => ({ key, failures: 1, pending: 0, first_failure_at: now, last_failure_at: now, reserved_at: 0, expires_at: expiresAt })))
      .onConflict((oc) =>
        oc.column('key').doUpdateSet((eb) => {
          const expired = eb('throttle_counters.expires_at', '<=', now);
          return {
            failures: eb.case().when(expired).then(1).else(eb('throttle_counters.failures', '+', 1)).end(),
            pending: eb.case().when(expired).then(0).else(eb.ref('throttle_counters.pending')).end(),
            first_failure_at: eb.case().when(expired).then(eb.val(now)).else(eb.ref('throttle_counters.first_failure_at')).end(),
            last_failure_at: eb.ref('excluded.last_failure_at'),
            expires_at: eb.ref('excluded.expires_at'),
          };
        }),
      )
      .returning(COLUMNS)
      .execute();
    return rows.map(fromRow);
  }

  async clear(keys: string[]): Promise<void> {
    // One row per statement (see releaseReservation).
    for (const key of sortedDistinct(keys)) await this.#q.delete.execute({ key }, this.#db);
  }

  async deleteExpired(now: number, limit: number): Promise<number> {
    const expired = this.#db.selectFrom('throttle_counters').select('key').where('expires_at', '<=', now).limit(limit);
    const result = await this.#db.deleteFrom('throttle_counters').where('key', 'in', expired).executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}

async function read(db: Kysely<Database>, keys: string[], now: number): Promise<ThrottleCounter[]> {
  if (keys.length === 0) return [];
  const rows = await db.selectFrom('throttle_counters').select(COLUMNS).where('key', 'in', keys).where('expires_at', '>', now).execute();
  return rows.map(fromRow);
}

function sortedDistinct(keys: string[]): string[] {
  return [...new Set(keys)].sort();
}

/** Every successful login runs these (passwordSucceeded): compiled once, as the hot paths' are (src/storage/sql/prepared.ts). */
function statements(db: Kysely<Database>) {
  return {
    release: prepared<{ key: string }, { failures: number; pending: number }>(db, (p) =>
      db
        .updateTable('throttle_counters')
        .set((eb) => ({ pending: eb('pending', '-', 1) }))
        .where('key', '=', p('key'))
        .where('pending', '>', 0)
        .returning(['failures', 'pending']),
    ),
    deleteEmpty: prepared<{ key: string }, unknown>(db, (p) => db.deleteFrom('throttle_counters').where('key', '=', p('key')).where('failures', '=', 0).where('pending', '=', 0)),
    delete: prepared<{ key: string }, unknown>(db, (p) => db.deleteFrom('throttle_counters').where('key', '=', p('key'))),
  };
}

/** A key's advisory lock on PostgreSQL: 64 bits of its SHA-256 (a collision only makes two keys share a lock). */
function lockId(key: string): bigint {
  return createHash('sha256').update(key).digest().readBigInt64BE(0);
}

/**
 * The reservation as one statement, the same on both databases: insert (or count on) one pending
 * attempt under every key — but select no row at all when any key waits. The `not exists`
 * reads the counters as they were before the statement (PostgreSQL: its snapshot; SQLite: the
 * select is materialized before the insert, as it reads the table it inserts into), so the keys
 * are counted all together or not at all.
 */
function reserveStatement(rules: ThrottleRule[], maxDelay: number, now: number, expiresAt: number): RawBuilder<CounterRow> {
  for (const n of [maxDelay, ...rules.map((r) => r.threshold)]) if (!Number.isSafeInteger(n) || n < 1) throw new Error(`throttle: not a positive integer: ${n}`);
  const keys = sql.join(
    rules.map((r) => sql`select cast(${r.key} as text) as key`),
    sql` union all `,
  );
  const refusals = sql.join(
    rules.map((r) => {
      const guard = r.onlyWhenCounted === undefined ? sql`` : sql` and exists (select 1 from throttle_counters g where g.key = ${r.onlyWhenCounted} and g.expires_at > ${now} and g.failures + g.pending > 0)`;
      return sql`(c.key = ${r.key} and ${waiting(r.threshold, maxDelay, now)}${guard})`;
    }),
    sql` or `,
  );
  const expired = sql`throttle_counters.expires_at <= ${now}`;
  return sql<CounterRow>`insert into throttle_counters (key, failures, pending, first_failure_at, last_failure_at, reserved_at, expires_at)
    select r.key, 0, 1, cast(${now} as bigint), cast(${now} as bigint), cast(${now} as bigint), cast(${expiresAt} as bigint)
    from (${keys}) as r
    where not exists (select 1 from throttle_counters c where c.key in (${sql.join(rules.map((r) => r.key))}) and c.expires_at > ${now} and (${refusals}))
    on conflict (key) do update set
      failures = case when ${expired} then 0 else throttle_counters.failures end,
      pending = case when ${expired} then 1 else throttle_counters.pending + 1 end,
      first_failure_at = case when ${expired} then excluded.first_failure_at else throttle_counters.first_failure_at end,
      last_failure_at = case when ${expired} then excluded.last_failure_at else throttle_counters.last_failure_at end,
      reserved_at = excluded.reserved_at,
      expires_at = case when throttle_counters.expires_at < excluded.expires_at then excluded.expires_at else throttle_counters.expires_at end
    returning key, failures, pending, last_failure_at, reserved_at`;
}

/**
 * Whether the counter `c` waits at `now`: policy.ts `waitMs` > 0, in SQL. With n = failures +
 * pending ≥ threshold, the wait is 2^(n − threshold) s up to `maxDelay`, from the later of the last
 * failure and (while one is pending) the latest reservation. 2^k is a shift, taken only for
 * k < cap, the first exponent at which 2^k reaches `maxDelay` (at most 30, as in policy.ts).
 */
function waiting(threshold: number, maxDelay: number, now: number): RawBuilder<boolean> {
  let cap = 0;
  while (cap < 30 && 2 ** cap < maxDelay) cap += 1;
  const count = sql`(c.failures + c.pending)`;
  const excess = sql`(${count} - ${sql.lit(threshold)})`;
  const delayMs = sql`case when ${excess} < 0 then 0 when ${excess} >= ${sql.lit(cap)} then ${sql.lit(maxDelay * 1000)} else (cast(1000 as bigint) << ${excess}) end`;
  const from = sql`case when c.pending > 0 and c.reserved_at > c.last_failure_at then c.reserved_at else c.last_failure_at end`;
  return sql<boolean>`(${count} >= ${sql.lit(threshold)} and ${from} + ${delayMs} > ${now})`;
}

function fromRow(r: CounterRow): ThrottleCounter {
  return { key: r.key, failures: Number(r.failures), pending: Number(r.pending), lastFailureAt: Number(r.last_failure_at), reservedAt: Number(r.reserved_at) };
}
