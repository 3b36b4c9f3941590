import { closeSync, constants, existsSync, mkdirSync, openSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { Kysely, PostgresDialect, sql, type DatabaseIntrospector, type LogEvent, type SchemaMetadata, type TableMetadata } from 'kysely';
import { Migrator, type MigrationResultSet } from 'kysely/migration';
import pg from 'pg';
import { migrations } from '../migrations/index.ts';
import { StoreMissingError } from '../ports.ts';
import { nodeSqliteDialect } from './node-sqlite-dialect.ts';
import { isRetriedBegin } from './sqlite-group-commit.ts';
import { statementName } from './prepared.ts';
import type { Database } from './schema.ts';

export type DialectName = 'sqlite' | 'postgres';

export interface SqlDatabase {
  db: Kysely<Database>;
  dialect: DialectName;
  /** Absolute path of the SQLite file, when the store is SQLite. */
  sqlitePath: string | undefined;
  /** PostgreSQL: the pool's connections now (metrics); undefined on SQLite. */
  poolStats(): { total: number; idle: number; waiting: number; max: number } | undefined;
  close(): Promise<void>;
}

export interface OpenOptions {
  poolSize?: number;
  /**
   * PostgreSQL: the longest to wait for a free pooled connection or for a new connection to open
   * (ms); past it the caller gets an error instead of hanging while the database is unreachable.
   * Default 5000.
   */
  connectTimeoutMs?: number;
  /**
   * PostgreSQL: the longest to wait for the answer to one query (ms); the connection is then
   * dropped. Default 0: no limit (bulk loads, index builds). The server sets it.
   */
  queryTimeoutMs?: number;
  /**
   * PostgreSQL: run the hot queries as named prepared statements (default true). Off for a
   * connection pooler in transaction mode that cannot track them.
   */
  namedStatements?: boolean;
  /** Told of every query, how long it took and its SQL text (metrics, tests); Kysely's `log` hook. */
  onQuery?: (seconds: number, failed: boolean, sqlText: string) => void;
  /**
   * SQLite: told of each COMMIT and how many turns (units of work and statements) it made durable
   * at once (src/storage/sql/sqlite-group-commit.ts; metrics, tests). Not called on PostgreSQL.
   */
  onCommit?: (turns: number) => void;
  /**
   * SQLite: a group commits once the event loop's round has run (true: the one server process on
   * the file), or as soon as no turn of this connection waits (default: the CLI, cluster workers,
   * tests' second stores), which holds the write lock no longer than one transaction did.
   */
  groupAcrossRounds?: boolean;
  /**
   * false: refuse a store that does not exist yet (StoreMissingError): a missing SQLite file, or a
   * database without gatehouse's migration table. Default true: create or complete it.
   */
  create?: boolean;
}

const DEFAULT_CONNECT_TIMEOUT_MS = 5000;

/**
 * Opens `sqlite:PATH` or `postgres://…`. The SQLite file and the folders missing on its path are
 * created private to the account running gatehouse (file 0600, folders 0700): the file holds
 * password hashes, token hashes and, unless sealed, the private signing keys.
 */
export function openDatabase(url: string, options: OpenOptions = {}): SqlDatabase {
  if (url.startsWith('sqlite:')) {
    const raw = url.slice('sqlite:'.length);
    const path = raw === ':memory:' ? raw : resolve(raw);
    // Checked before opening: opening a missing file creates it.
    if (path !== ':memory:' && options.create === false && !existsSync(path)) throw new StoreMissingError(`no SQLite file at ${path}`);
    if (path !== ':memory:') createPrivately(path);
    const db = new Kysely<Database>({ dialect: nodeSqliteDialect(path, { onCommit: options.onCommit, acrossRounds: options.groupAcrossRounds ?? false }), ...queryLog(options) });
    return { db, dialect: 'sqlite', sqlitePath: path, poolStats: () => undefined, close: () => db.destroy() };
  }
  const connectTimeoutMs = options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
  const queryTimeoutMs = options.queryTimeoutMs ?? 0;
  const pool = new pg.Pool({
    connectionString: url,
    max: options.poolSize ?? 10,
    connectionTimeoutMillis: connectTimeoutMs,
    ...(queryTimeoutMs > 0 ? { query_timeout: queryTimeoutMs } : {}),
    // The kernel probes idle connections, so a peer that vanished is noticed without traffic.
    keepAlive: true,
    // BIGINT columns hold epoch milliseconds, well inside Number's exact range.
    types: {
      getTypeParser: (oid: number, format?: 'text' | 'binary') =>
        oid === 20 ? (value: string) => Number(value) : pg.types.getTypeParser(oid, format ?? 'text'),
    } as pg.CustomTypesConfig,
  });
  // An idle client that loses its connection must not crash the process; the pool replaces it.
  pool.on('error', () => {});
  const named = options.namedStatements ?? true;
  pool.on('connect', (client: pg.PoolClient) => guardClient(client, named));
  const db = new Kysely<Database>({ dialect: new CurrentSchemaPostgresDialect({ pool }), ...queryLog(options) });
  // Ending a connection waits for the server to acknowledge; during a network partition it never
  // does. Give up after the timeout: the process is about to exit or to open a new pool anyway.
  const close = () => settleWithin(db.destroy(), connectTimeoutMs);
  const max = options.poolSize ?? 10;
  const poolStats = () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount, max });
  return { db, dialect: 'postgres', sqlitePath: undefined, poolStats, close };
}

/** Kysely's `log` option when someone listens for query durations; none otherwise (no timing cost). */
function queryLog(options: OpenOptions): { log?: (event: LogEvent) => void } {
  const onQuery = options.onQuery;
  return onQuery
    ? {
        log: (event) => {
          // A BEGIN IMMEDIATE that found another process writing is waited out and tried again.
          if (event.level === 'error' && isRetriedBegin(event.query.sql, event.error)) return;
          onQuery(event.queryDurationMillis / 1000, event.level === 'error', event.query.sql);
        },
      }
    : {};
}

/**
 * Creates the folders missing on the way to the SQLite file with mode 0700, and the file itself,
 * when missing, empty with mode 0600 (both less the umask, which can only take more away). SQLite
 * gives its -wal and -shm files the mode of the database file (os_unix.c, robust_open), so they
 * are 0600 too; left to itself it would create all three 0644. A folder or file that exists
 * already is the operator's: its mode is left alone (a shared or mounted folder may be meant to
 * be so), and `sqliteAccessWarnings` names it when others may read it.
 */
function createPrivately(path: string): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  try {
    // O_EXCL: only a file this call creates gets the mode; a concurrent creator's file is left as is.
    closeSync(openSync(path, constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY, 0o600));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
}

/**
 * What the server logs at start about a SQLite store that others than its owner may read or
 * write: the file's folder, and the file with its -wal and -shm. Empty when all are private.
 */
export function sqliteAccessWarnings(path: string): string[] {
  const warnings: string[] = [];
  for (const [what, target] of [
    ['folder', dirname(path)],
    ['file', path],
    ['file', `${path}-wal`],
    ['file', `${path}-shm`],
  ] as const) {
    let mode: number;
    try {
      mode = statSync(target).mode & 0o777;
    } catch {
      continue;
    }
    const wanted = what === 'folder' ? '0700' : '0600';
    if ((mode & 0o077) !== 0) warnings.push(`the SQLite ${what} ${target} has mode 0${mode.toString(8)}: other accounts may reach it (gatehouse creates it ${wanted})`);
  }
  return warnings;
}

/**
 * Makes a pooled PostgreSQL client safe when the network fails:
 * - a connection that breaks while a query runs fails that query, and pg then also emits 'error'
 *   on the client, which nobody listens to while it is checked out: the process would crash with an
 *   unhandled 'error' event (it did, when the network to PostgreSQL went silent). The listener
 *   swallows it; the pool drops the client when it is released, as it is no longer queryable.
 * - pg's query timeout rejects the query but leaves the connection waiting for the answer, so every
 *   later query on it would time out too, even once the database is back. Such a connection is
 *   destroyed, which makes the pool drop it.
 */
function guardClient(client: pg.PoolClient, namedStatements: boolean): void {
  client.on('error', () => {});
  const query = client.query as (...args: unknown[]) => unknown;
  client.query = function guardedQuery(this: pg.PoolClient, ...args: unknown[]): unknown {
    // A hot query (src/storage/sql/prepared.ts) runs as a named statement: parsed and planned once
    // per connection, then only bound and executed (pg keeps track of what each connection has).
    const name = namedStatements && typeof args[0] === 'string' && Array.isArray(args[1]) ? statementName(args[0]) : undefined;
    const result = name === undefined ? query.apply(this, args) : query.call(this, { name, text: args[0], values: args[1] });
    if (result instanceof Promise) {
      result.catch((error: unknown) => {
        if ((error as Error | undefined)?.message === QUERY_TIMEOUT_MESSAGE) (client as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy();
      });
    }
    return result;
  } as typeof client.query;
}

/** What pg's `query_timeout` rejects with (pg/lib/client.js). */
export const QUERY_TIMEOUT_MESSAGE = 'Query read timeout';

async function settleWithin(work: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
    timer.unref();
  });
  try {
    await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Runs every pending migration; safe to call from several processes at once. */
export async function migrateToLatest(db: Kysely<Database>): Promise<string[]> {
  return migrate(db, (migrator) => migrator.migrateToLatest());
}

/** Runs the migrations up to and including `name` only (tests of a migration's data changes). */
export async function migrateUpTo(db: Kysely<Database>, name: string): Promise<string[]> {
  return migrate(db, (migrator) => migrator.migrateTo(name));
}

const MIGRATION_TABLE = 'gatehouse_migrations';

async function migrate(db: Kysely<Database>, run: (migrator: Migrator) => Promise<MigrationResultSet>): Promise<string[]> {
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => migrations },
    migrationTableName: MIGRATION_TABLE,
    migrationLockTableName: 'gatehouse_migrations_lock',
  });
  const { error, results } = await run(migrator);
  if (error) throw error;
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

/** Whether the database holds gatehouse's migration table: whether it is a gatehouse store at all. */
export async function hasSchema(database: SqlDatabase): Promise<boolean> {
  if (database.dialect === 'sqlite') {
    const { rows } = await sql<{ name: string }>`select name from sqlite_master where type = 'table' and name = ${MIGRATION_TABLE}`.execute(database.db);
    return rows.length > 0;
  }
  // to_regclass looks the name up along the search_path, where Kysely's migrator creates it.
  const { rows } = await sql<{ found: string | null }>`select to_regclass(${MIGRATION_TABLE})::text as found`.execute(database.db);
  return rows[0]?.found != null;
}

/** A cheap round trip, for readiness. */
export async function ping(db: Kysely<Database>): Promise<void> {
  await sql`select 1`.execute(db);
}

/**
 * Kysely's PostgreSQL introspector reads the tables of every schema in the database, so its
 * migrator took another schema's gatehouse_migrations for ours (and skipped creating them), and
 * failed outright when some schema was dropped while it read. The store lives in one schema, the
 * first on search_path; only that one is looked at. Columns are not read: the migrator, the only
 * user of introspection, needs table names alone.
 */
class CurrentSchemaPostgresDialect extends PostgresDialect {
  override createIntrospector(db: Kysely<unknown>): DatabaseIntrospector {
    return new CurrentSchemaIntrospector(db);
  }
}

class CurrentSchemaIntrospector implements DatabaseIntrospector {
  readonly #db: Kysely<unknown>;
  constructor(db: Kysely<unknown>) {
    this.#db = db;
  }

  async getSchemas(): Promise<SchemaMetadata[]> {
    const { rows } = await sql<SchemaMetadata>`select nspname as name from pg_namespace where nspname = current_schema()`.execute(this.#db);
    return rows;
  }

  async getTables(): Promise<TableMetadata[]> {
    const { rows } = await sql<{ schema: string; name: string; kind: string }>`
      select n.nspname as schema, c.relname as name, c.relkind as kind
      from pg_class c join pg_namespace n on n.oid = c.relnamespace
      where n.nspname = current_schema() and c.relkind in ('r', 'p', 'v', 'm', 'f')`.execute(this.#db);
    return rows.map((r) => ({ schema: r.schema, name: r.name, isView: r.kind === 'v' || r.kind === 'm', isForeign: r.kind === 'f', columns: [] }));
  }
}
