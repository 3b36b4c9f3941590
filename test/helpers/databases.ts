/**
 * The databases every storage and HTTP suite runs on: SQLite always, and PostgreSQL when
 * GATEHOUSE_TEST_POSTGRES_URL is set (CI sets it). Each call gets a fresh, empty database — a
 * temporary SQLite file, or a new PostgreSQL schema — so no test sees another's rows.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

export interface TestDatabase {
  name: 'sqlite' | 'postgres';
  url: string;
  drop(): Promise<void>;
}

export interface TestDatabaseKind {
  name: 'sqlite' | 'postgres';
  create(): Promise<TestDatabase>;
}

const postgresUrl = process.env.GATEHOUSE_TEST_POSTGRES_URL;

export const DATABASES: TestDatabaseKind[] = [
  { name: 'sqlite', create: createSqlite },
  ...(postgresUrl ? [{ name: 'postgres' as const, create: () => createPostgres(postgresUrl) }] : []),
];

async function createSqlite(): Promise<TestDatabase> {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-test-'));
  return {
    name: 'sqlite',
    url: `sqlite:${join(dir, 'gatehouse.db')}`,
    drop: async () => rmSync(dir, { recursive: true, force: true }),
  };
}

async function createPostgres(baseUrl: string): Promise<TestDatabase> {
  const schema = `gh_test_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
  const admin = new pg.Client({ connectionString: baseUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE SCHEMA ${schema}`);
  } finally {
    await admin.end();
  }
  const url = new URL(baseUrl);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return {
    name: 'postgres',
    url: url.toString(),
    async drop() {
      const client = new pg.Client({ connectionString: baseUrl });
      await client.connect();
      try {
        await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      } finally {
        await client.end();
      }
    },
  };
}
