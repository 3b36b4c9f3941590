import { DatabaseSync, type StatementSync } from 'node:sqlite';
import { SqliteAdapter, SqliteDialect, type DialectAdapter, type Driver } from 'kysely';
import { GroupCommitDriver, isBusy, Turns, type GroupingOptions, type SqliteHandle, type SqliteStatementHandle } from './sqlite-group-commit.ts';

/**
 * Kysely's SqliteDialect on Node's built-in `node:sqlite`, so the embedded store needs no
 * native module. The file is opened in WAL mode with a busy timeout so that the CLI and a
 * running server (or several server processes) can share it. Writes arriving together are
 * committed together (src/storage/sql/sqlite-group-commit.ts).
 */
export function nodeSqliteDialect(path: string, grouping: GroupingOptions = {}): SqliteDialect {
  const handle = openDatabase(path);
  return new GroupCommitSqliteDialect(() => new GroupCommitDriver(handle, path === ':memory:' ? new Turns() : turnsOf(path), grouping));
}

const TURNS_BY_FILE = new Map<string, Turns>();

function turnsOf(path: string): Turns {
  let turns = TURNS_BY_FILE.get(path);
  if (!turns) TURNS_BY_FILE.set(path, (turns = new Turns()));
  return turns;
}

function openDatabase(path: string): SqliteHandle {
  const db = new DatabaseSync(path);
  db.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
  if (path !== ':memory:') enableWal(db);
  db.exec('PRAGMA synchronous = NORMAL');
  db.exec('PRAGMA foreign_keys = ON');
  // SQLite's own lower() folds ASCII only; case-insensitive filters must fold 'Ä' as PostgreSQL does.
  db.function('lower', { deterministic: true }, (value) => (typeof value === 'string' ? value.toLowerCase() : value));
  // Kysely prepares every query anew; compiling the SQL was the largest single cost of the hot
  // paths (docs/performance.md). The queries are few and parameterised, so their prepared
  // statements are kept, bounded, by SQL text.
  const statements = new Map<string, SqliteStatementHandle>();
  const busyTimeouts = new Map<number, StatementSync>();
  return {
    inTransaction: () => db.isTransaction,
    busyTimeoutMs: BUSY_TIMEOUT_MS,
    setBusyTimeout: (ms) => {
      // Twice per BEGIN IMMEDIATE (src/storage/sql/sqlite-group-commit.ts): prepared once per value.
      let pragma = busyTimeouts.get(ms);
      if (!pragma) busyTimeouts.set(ms, (pragma = db.prepare(`PRAGMA busy_timeout = ${Math.trunc(ms)}`)));
      pragma.get();
    },
    close: () => {
      statements.clear();
      db.close();
    },
    prepare(sqlText: string): SqliteStatementHandle {
      const cached = statements.get(sqlText);
      if (cached) return cached;
      const statement = wrap(db.prepare(sqlText));
      if (statements.size >= STATEMENT_CACHE_SIZE) statements.delete(statements.keys().next().value!);
      statements.set(sqlText, statement);
      return statement;
    },
  };
}

const STATEMENT_CACHE_SIZE = 500;

/** How long a statement waits for another process's lock before SQLITE_BUSY. */
const BUSY_TIMEOUT_MS = 10_000;

function wrap(statement: StatementSync): SqliteStatementHandle {
  const bind = (parameters: ReadonlyArray<unknown>) => parameters.map(toSqliteValue);
  return {
    reader: statement.columns().length > 0,
    all: (parameters) => statement.all(...bind(parameters)),
    run: (parameters) => statement.run(...bind(parameters)),
  };
}

/**
 * Switching to WAL needs a moment of exclusive access, and SQLite answers SQLITE_BUSY at once
 * instead of honouring busy_timeout: a process opening the file while another one opens or writes
 * it would fail. Retry for as long as busy_timeout would have waited. WAL is a property of the
 * file, so once any process has switched, the next attempt finds it done.
 */
function enableWal(db: DatabaseSync): void {
  const deadline = Date.now() + 10_000;
  for (;;) {
    try {
      db.exec('PRAGMA journal_mode = WAL');
      return;
    } catch (error) {
      if (!isBusy(error) || Date.now() > deadline) throw error;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5 + Math.random() * 20);
    }
  }
}

type SqliteValue = null | number | bigint | string | Uint8Array;

function toSqliteValue(value: unknown): SqliteValue {
  if (value === undefined) return null;
  if (typeof value === 'boolean') return value ? 1 : 0;
  return value as SqliteValue;
}

class GroupCommitSqliteDialect extends SqliteDialect {
  readonly #driver: () => Driver;
  constructor(driver: () => Driver) {
    // The database is the driver's; Kysely's own SQLite driver is never made.
    super({ database: undefined as never });
    this.#driver = driver;
  }
  override createDriver(): Driver {
    return this.#driver();
  }
  override createAdapter(): DialectAdapter {
    return new TransactionalDdlSqliteAdapter();
  }
}

/**
 * SQLite's DDL is transactional, but Kysely's adapter says otherwise, so its migrator would run
 * without any lock and two processes starting on a fresh file would both create the tables. Saying
 * so makes the migrator read its state and migrate inside one `begin immediate` transaction: a
 * second process waits for the first to commit, then finds nothing left to do.
 */
class TransactionalDdlSqliteAdapter extends SqliteAdapter {
  override get supportsTransactionalDdl(): boolean {
    return true;
  }
  // Kysely would put its own lock around each connection, held until `releaseConnection` returns;
  // a turn that hands a group on returns only after the group's commit, which the next turn
  // makes, so that lock would stop it. `Turns` keeps one holder at a time instead.
  override get supportsMultipleConnections(): boolean {
    return true;
  }
}
