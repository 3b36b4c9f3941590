import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { Kysely, PostgresAdapter, PostgresDialect, sql } from 'kysely';
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
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  return { db, dialect: 'postgres', sqlitePath: undefined, close: () => db.destroy() };
}

/** Runs every pending migration; safe to call from several processes at once. */
export async function migrateToLatest(db: Kysely<Database>): Promise<string[]> {
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => migrations },
    migrationTableName: 'gatehouse_migrations',
    migrationLockTableName: 'gatehouse_migrations_lock',
    migrationTableSchema: await currentSchema(db),
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error;
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

/**
 * On PostgreSQL, the schema our tables go to: the first existing one on search_path. Kysely's
 * migrator looks for its bookkeeping tables in every schema unless told which one, so a database
 * holding another gatehouse schema (a tenant's, a test's) would make it skip creating ours.
 */
async function currentSchema(db: Kysely<Database>): Promise<string | undefined> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return undefined;
  const { rows } = await sql<{ schema: string | null }>`select current_schema() as schema`.execute(db);
  return rows[0]?.schema ?? undefined;
}

/** A cheap round trip, for readiness. */
export async function ping(db: Kysely<Database>): Promise<void> {
  await sql`select 1`.execute(db);
}
