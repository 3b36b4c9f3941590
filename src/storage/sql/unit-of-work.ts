/**
 * Units of work over the SQL store (`Store.transaction`, src/storage/ports.ts).
 *
 * PostgreSQL runs them SERIALIZABLE: its serializable snapshot isolation lets two units that
 * touch the same rows (or the same range a statement read, such as "the tokens of this session")
 * commit only if the outcome is the same as running them one after the other, and otherwise fails
 * one of them with a serialization failure (SQLSTATE 40001) or a deadlock (40P01). Such a unit
 * is run again from the start, a bounded number of times with a short random back-off; it then
 * sees what the other committed. Weaker levels do not do this: under READ COMMITTED a refresh that
 * inserts new tokens while a logout revokes "every token of the session" can commit tokens the
 * logout never saw (issue 10, finding 5).
 *
 * SQLite has one writer at a time: a unit begins with BEGIN IMMEDIATE, or, when it joins the
 * group commit of units arriving together, with a savepoint inside the group's transaction
 * (src/storage/sql/sqlite-group-commit.ts); either way units on the same file (from any process)
 * run one after another, which is serializable by construction.
 */
import type { Kysely, Transaction } from 'kysely';
import type { DialectName } from './database.ts';
import type { Database } from './schema.ts';

/** How often a unit of work is tried before its serialization failure is given up on. */
export const MAX_ATTEMPTS = 30;

/** SQLSTATEs after which a unit of work is run again: serialization_failure, deadlock_detected. */
const RETRYABLE = new Set(['40001', '40P01']);

export async function runUnitOfWork<T>(db: Kysely<Database>, dialect: DialectName, work: (trx: Transaction<Database>) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      const transaction = dialect === 'postgres' ? db.transaction().setIsolationLevel('serializable') : db.transaction();
      return await transaction.execute(work);
    } catch (error) {
      if (attempt >= MAX_ATTEMPTS || !isRetryable(error)) throw error;
      // Full jitter, growing: contenders that failed together do not all come back together.
      await delay(Math.random() * Math.min(100, 2 ** attempt));
    }
  }
}

/**
 * Runs `work` atomically on `db`: inside the caller's transaction when `db` already is one (a
 * store method called within a unit of work), else in a transaction of its own. Kysely cannot
 * nest transactions, and a store method that opened its own on the outer connection would, on
 * SQLite's single connection, wait for the unit of work that waits for it.
 */
export async function atomically<T>(db: Kysely<Database>, work: (trx: Kysely<Database>) => Promise<T>): Promise<T> {
  if (db.isTransaction) return work(db);
  return db.transaction().execute(work);
}

export function isRetryable(error: unknown): boolean {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' && RETRYABLE.has(code);
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
