import type { Store } from '../ports.ts';
import { SqlClientStore } from './client-store.ts';
import { SqlCodeStore } from './code-store.ts';
import { migrateToLatest, openDatabase, ping, type OpenOptions, type SqlDatabase } from './database.ts';
import { SqlGroupStore } from './group-store.ts';
import { SqlKeyStore } from './key-store.ts';
import { SqlOrganizationStore } from './organization-store.ts';
import { SqlSessionStore } from './session-store.ts';
import { SqlThrottleStore } from './throttle-store.ts';
import { SqlTokenStore } from './token-store.ts';
import { SqlUserStore } from './user-store.ts';

export interface SqlStore extends Store {
  database: SqlDatabase;
}

/** Opens the database at `url`, brings its schema up to date, and returns the store over it. */
export async function openSqlStore(url: string, options: OpenOptions = {}): Promise<SqlStore> {
  const database = openDatabase(url, options);
  try {
    // Migrations may build indexes on big tables: never under the per-query limit.
    if ((options.queryTimeoutMs ?? 0) > 0 && database.dialect === 'postgres') await migrateUnlimited(url, options);
    else await migrateToLatest(database.db);
  } catch (error) {
    await database.close();
    throw error;
  }
  return sqlStoreOver(database);
}

/** Migrations on a connection of their own, without the per-query timeout. */
async function migrateUnlimited(url: string, options: OpenOptions): Promise<void> {
  const migration = openDatabase(url, { ...options, poolSize: 1, queryTimeoutMs: 0 });
  try {
    await migrateToLatest(migration.db);
  } finally {
    await migration.close();
  }
}

export function sqlStoreOver(database: SqlDatabase): SqlStore {
  const { db } = database;
  return {
    database,
    clients: new SqlClientStore(db),
    users: new SqlUserStore(db),
    organizations: new SqlOrganizationStore(db),
    groups: new SqlGroupStore(db),
    sessions: new SqlSessionStore(db),
    codes: new SqlCodeStore(db),
    tokens: new SqlTokenStore(db),
    keys: new SqlKeyStore(db),
    throttling: new SqlThrottleStore(db, database.dialect),
    ping: () => ping(db),
    close: () => database.close(),
  };
}
