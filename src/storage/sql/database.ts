import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { Kysely, PostgresDialect, sql, type DatabaseIntrospector, type SchemaMetadata, type TableMetadata } from 'kysely';
import { Migrator } from 'kysely/migration';
import pg from 'pg';
import { migrations } from '../migrations/index.ts';
import { nodeSqliteDialect } from './node-sqlite-dialect.ts';
import type { Database } from './schema.ts';

export type DialectName = 'sqlite' | 'postgres';

export interface SqlDatabase {
  db: Kysely<Database>;
  dialect: DialectName;
  /** Absolute path of the SQLite file, when the store is SQLite. */
  sqlitePath: string | undefined;
  close(): Promise<void>;
}

export interface OpenOptions {
  poolSize?: number;
}

/** Opens `sqlite:PATH` or `postgres://…`. The SQLite file's folder is created when missing. */
export function openDatabase(url: string, options: OpenOptions = {}): SqlDatabase {
  if (url.startsWith('sqlite:')) {
    const raw = url.slice('sqlite:'.length);
    const path = raw === ':memory:' ? raw : resolve(raw);
    if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
    const db = new Kysely<Database>({ dialect: nodeSqliteDialect(path) });
    return { db, dialect: 'sqlite', sqlitePath: path, close: () => db.destroy() };
  }
  const pool = new pg.Pool({
    connectionString: url,
    max: options.poolSize ?? 10,
    connectionTimeoutMillis: 5000,
    // BIGINT columns hold epoch milliseconds, well inside Number's exact range.
    types: {
      getTypeParser: (oid: number, format?: 'text' | 'binary') =>
        oid === 20 ? (value: string) => Number(value) : pg.types.getTypeParser(oid, format ?? 'text'),
    } as pg.CustomTypesConfig,
  });
  // An idle client that loses its connection must not crash the process; the pool replaces it.
  pool.on('error', () => {});
  const db = new Kysely<Database>({ dialect: new CurrentSchemaPostgresDialect({ pool }) });
  return { db, dialect: 'postgres', sqlitePath: undefined, close: () => db.destroy() };
}

/** Runs every pending migration; safe to call from several processes at once. */
export async function migrateToLatest(db: Kysely<Database>): Promise<string[]> {
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => migrations },
    migrationTableName: 'gatehouse_migrations',
    migrationLockTableName: 'gatehouse_migrations_lock',
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error;
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
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
