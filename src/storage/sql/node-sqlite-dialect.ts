import { DatabaseSync, type StatementSync } from 'node:sqlite';
import { CompiledQuery, SqliteAdapter, SqliteDialect, SqliteDriver, type DatabaseConnection, type DialectAdapter, type Driver, type SqliteDatabase, type SqliteStatement } from 'kysely';

/**
 * Kysely's SqliteDialect on Node's built-in `node:sqlite`, so the embedded store needs no
 * native module. The file is opened in WAL mode with a busy timeout so that the CLI and a
 * running server (or several server processes) can share it.
 */
export function nodeSqliteDialect(path: string): SqliteDialect {
  const database = openDatabase(path);
  return new ImmediateSqliteDialect({ database }, path === ':memory:' ? new Turns() : turnsOf(path));
}

/**
 * Connections to one file in one process take turns, a statement or a whole transaction at a
 * time. SQLite makes a connection that finds the file locked wait in its busy handler, and
 * node:sqlite is synchronous, so that wait blocks the thread: a second store on the same file in
 * the same process (tests run two server instances so) that waited for a transaction of the first
 * would stop the very thread that has to finish that transaction, until busy_timeout ran out.
 * Processes still exclude each other through SQLite's own locks and busy_timeout.
 */
class Turns {
  #tail: Promise<void> = Promise.resolve();
  /** Resolves when it is the caller's turn, with the function that ends the turn. */
  take(): Promise<() => void> {
    let end!: () => void;
    const ended = new Promise<void>((resolve) => (end = resolve));
    const turn = this.#tail.then(() => end);
    this.#tail = this.#tail.then(() => ended);
    return turn;
  }
}

const TURNS_BY_FILE = new Map<string, Turns>();

function turnsOf(path: string): Turns {
  let turns = TURNS_BY_FILE.get(path);
  if (!turns) TURNS_BY_FILE.set(path, (turns = new Turns()));
  return turns;
}

function openDatabase(path: string): SqliteDatabase {
  const db = new DatabaseSync(path);
  db.exec('PRAGMA busy_timeout = 10000');
  if (path !== ':memory:') enableWal(db);
  db.exec('PRAGMA synchronous = NORMAL');
  db.exec('PRAGMA foreign_keys = ON');
  // SQLite's own lower() folds ASCII only; case-insensitive filters must fold 'Ä' as PostgreSQL does.
  db.function('lower', { deterministic: true }, (value) => (typeof value === 'string' ? value.toLowerCase() : value));
  // Kysely prepares every query anew; compiling the SQL was the largest single cost of the hot
  // paths (docs/performance.md). The queries are few and parameterised, so their prepared
  // statements are kept, bounded, by SQL text.
  const statements = new Map<string, SqliteStatement>();
  return {
    close: () => {
      statements.clear();
      db.close();
    },
    prepare(sqlText: string): SqliteStatement {
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

function wrap(statement: StatementSync): SqliteStatement {
  const bind = (parameters: ReadonlyArray<unknown>) => parameters.map(toSqliteValue);
  return {
    reader: statement.columns().length > 0,
    all: (parameters) => statement.all(...bind(parameters)),
    run: (parameters) => statement.run(...bind(parameters)),
    iterate: (parameters) => statement.iterate(...bind(parameters)),
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
      if ((error as { errcode?: number }).errcode !== 5 || Date.now() > deadline) throw error;
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

/**
 * Transactions start with BEGIN IMMEDIATE: a deferred transaction that later writes can fail with
 * SQLITE_BUSY without waiting when another process holds the write lock.
 */
class ImmediateSqliteDriver extends SqliteDriver {
  readonly #turns: Turns;
  #endTurn: (() => void) | undefined;
  constructor(config: { database: SqliteDatabase }, turns: Turns) {
    super(config);
    this.#turns = turns;
  }

  // Kysely holds a connection for one statement or one whole transaction, one holder at a time
  // per Kysely instance; the turn extends that to every instance on the file in this process.
  override async acquireConnection(): Promise<DatabaseConnection> {
    this.#endTurn = await this.#turns.take();
    return super.acquireConnection();
  }

  override async releaseConnection(): Promise<void> {
    const end = this.#endTurn;
    this.#endTurn = undefined;
    end?.();
  }

  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }
}

class ImmediateSqliteDialect extends SqliteDialect {
  readonly #config: { database: SqliteDatabase };
  readonly #turns: Turns;
  constructor(config: { database: SqliteDatabase }, turns: Turns) {
    super(config);
    this.#config = config;
    this.#turns = turns;
  }
  override createDriver(): Driver {
    return new ImmediateSqliteDriver(this.#config, this.#turns);
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
}
