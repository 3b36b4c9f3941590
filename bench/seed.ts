/**
 * `npm run bench:seed`: fills a store with many users and tokens, to check that the hot paths do
 * not slow down as the store grows (issue 6 §4). Multi-row INSERTs in batches, several in flight on
 * PostgreSQL; the rows look like real ones (random 256-bit token hashes, a mix of kinds, expired
 * and revoked tokens) so the indexes have a realistic shape.
 *
 *   npm run bench:seed -- --database-url sqlite:bench/results/seeded.db            (1M users, 5M tokens)
 *   npm run bench:seed -- --database-url postgres://… --users 100000 --tokens 500000
 *   npm run bench -- --scale=sqlite:bench/results/seeded.db                         (then compare)
 *
 * Nothing removes expired tokens yet: the cleanup job comes with the hardening issue.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { sql, type Kysely } from 'kysely';
import { normalizeUsername } from '../src/domain/user.ts';
import type { Database, TokensTable, UsersTable } from '../src/storage/sql/schema.ts';
import { openSqlStore } from '../src/storage/sql/store.ts';

const { values } = parseArgs({
  options: {
    'database-url': { type: 'string', default: 'sqlite:bench/results/seeded.db' },
    users: { type: 'string', default: '1000000' },
    tokens: { type: 'string', default: '5000000' },
    batch: { type: 'string', default: '1000' },
    help: { type: 'boolean', default: false },
  },
});
if (values.help) {
  process.stdout.write('npm run bench:seed -- [--database-url URL] [--users N] [--tokens N] [--batch N]\n');
  process.exit(0);
}

const url = values['database-url'];
const userCount = Number(values.users);
const tokenCount = Number(values.tokens);
const batchSize = Number(values.batch);
const DAY = 86_400_000;

const store = await openSqlStore(url, { poolSize: 4 });
const { db, dialect } = store.database;
const inFlight = dialect === 'postgres' ? 4 : 1;

if (dialect === 'sqlite') {
  // A bulk load: a large page cache; durability of each batch matters less than speed here.
  await sql`PRAGMA cache_size = -1000000`.execute(db);
  await sql`PRAGMA synchronous = OFF`.execute(db);
}

/**
 * The secondary indexes of `table` as the database describes them. They are dropped for the bulk
 * load and rebuilt afterwards (one sort each instead of millions of random B-tree inserts); read
 * from the catalogue, so the seeder follows whatever the migrations made.
 */
async function secondaryIndexes(table: string): Promise<{ name: string; definition: string }[]> {
  if (dialect === 'sqlite') {
    const { rows } = await sql<{ name: string; sql: string }>`select name, sql from sqlite_master where type = 'index' and tbl_name = ${table} and sql is not null`.execute(db);
    return rows.map((r) => ({ name: r.name, definition: r.sql }));
  }
  const { rows } = await sql<{ indexname: string; indexdef: string }>`
    select i.indexname, i.indexdef from pg_indexes i
    where i.schemaname = current_schema() and i.tablename = ${table}
      and not exists (select 1 from pg_constraint c where c.conname = i.indexname)`.execute(db);
  return rows.map((r) => ({ name: r.indexname, definition: r.indexdef }));
}

async function withoutIndexes(table: string, load: () => Promise<void>): Promise<void> {
  const indexes = await secondaryIndexes(table);
  for (const index of indexes) await sql`drop index ${sql.id(index.name)}`.execute(db);
  try {
    await load();
  } finally {
    const started = performance.now();
    for (const index of indexes) await sql.raw(index.definition).execute(db);
    if (indexes.length) process.stderr.write(`rebuilt ${indexes.length} index(es) of ${table} in ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
  }
}

function progress(what: string, done: number, total: number, started: number): void {
  const seconds = (performance.now() - started) / 1000;
  process.stderr.write(`\r${what}: ${done.toLocaleString('en-US')} / ${total.toLocaleString('en-US')} (${Math.round(done / Math.max(seconds, 0.001)).toLocaleString('en-US')}/s)   `);
}

async function inBatches<Row>(what: string, total: number, make: (index: number) => Row, insert: (db: Kysely<Database>, rows: Row[]) => Promise<unknown>): Promise<void> {
  const started = performance.now();
  const pending = new Set<Promise<unknown>>();
  for (let i = 0; i < total; i += batchSize) {
    const rows: Row[] = [];
    for (let j = i; j < Math.min(total, i + batchSize); j++) rows.push(make(j));
    const p = insert(db, rows).finally(() => pending.delete(p));
    pending.add(p);
    if (pending.size >= inFlight) await Promise.race(pending);
    if ((i / batchSize) % 20 === 0) progress(what, i + rows.length, total, started);
  }
  await Promise.all(pending);
  progress(what, total, total, started);
  process.stderr.write(`\n`);
}

const runTag = randomBytes(3).toString('hex');
const now = Date.now();
const userIds: string[] = [];

await withoutIndexes('users', () => inBatches<UsersTable>(
  'users',
  userCount,
  (i) => {
    const id = randomUUID();
    userIds.push(id);
    const username = `seed-${runTag}-${i}`;
    return {
      id,
      username,
      username_key: normalizeUsername(username),
      // Seeded users cannot log in: a login benchmark makes its own user with a real hash.
      password_hash: null,
      status: i % 50 === 0 ? 'disabled' : 'enabled',
      given_name: 'Seed',
      family_name: `User ${i}`,
      email: `${username}@example.com`,
      email_verified: 0,
      organization_id: null,
      created_at: now,
      updated_at: now,
    };
  },
  (d, rows) => d.insertInto('users').values(rows).execute(),
));

const clientId = randomUUID();
const hashes = () => randomBytes(32 * batchSize);
let pool = hashes();
let poolAt = 0;
function tokenHash(): string {
  if (poolAt >= batchSize) {
    pool = hashes();
    poolAt = 0;
  }
  return pool.subarray(32 * poolAt, 32 * ++poolAt).toString('base64url');
}

await withoutIndexes('tokens', () => inBatches<TokensTable>(
  'tokens',
  tokenCount,
  (i) => {
    const refresh = i % 3 === 2;
    const created = now - (i % 30) * DAY;
    const family = randomUUID();
    return {
      token_hash: tokenHash(),
      kind: refresh ? 'refresh_token' : 'access_token',
      client_id: clientId,
      user_id: userIds.length ? userIds[i % userIds.length]! : randomUUID(),
      scope: 'openid profile email',
      session_index: `_${family.replace(/-/g, '').padEnd(40, '0').slice(0, 40)}`,
      auth_time: created,
      amr: '["pwd"]',
      acr: null,
      code_hash: refresh ? null : family,
      family_id: family,
      created_at: created,
      expires_at: refresh ? created + 30 * DAY : created + 3_600_000,
      revoked_at: i % 97 === 0 ? created + 1000 : null,
      rotated_at: null,
    };
  },
  (d, rows) => d.insertInto('tokens').values(rows).execute(),
));

if (dialect === 'postgres') await sql`analyze`.execute(db);
await store.close();
process.stdout.write(`seeded ${userCount.toLocaleString('en-US')} users and ${tokenCount.toLocaleString('en-US')} tokens into ${url.replace(/\/\/[^@]*@/, '//')}\n`);
