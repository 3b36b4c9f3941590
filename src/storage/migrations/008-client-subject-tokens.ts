import { sql, SqliteAdapter, type Kysely } from 'kysely';

/**
 * A token's subject is a user or the client itself (client_credentials, RFC 6749 §4.4): a client
 * token has no user, no SSO session and no authentication facts, so `user_id`, `session_index`,
 * `auth_time` and `amr` become nullable. A CHECK keeps the row one or the other: all four set (a
 * user token, as every token stored before this migration is) or all four null, `acr` too (a
 * client token).
 *
 * Additive for the rows already stored: they keep every value and stay usable. An instance of an
 * older version must not run once client tokens exist: it would read a client token's null
 * user_id as a user (docs/operations.md, Upgrades).
 *
 * PostgreSQL drops the NOT NULL constraints in place. SQLite cannot alter a column, so the table
 * is rebuilt (its documented procedure, "Making Other Kinds Of Table Schema Changes"): a new table,
 * the rows copied, the old one dropped, the new one renamed and its indexes (those of 001 and 005
 * that remain) created again — all inside the migration's transaction (SQLite's DDL is
 * transactional, and the migrator holds the write lock).
 */
const SUBJECT_CHECK = sql`(user_id is not null and session_index is not null and auth_time is not null and amr is not null)
  or (user_id is null and session_index is null and auth_time is null and amr is null and acr is null)`;

export async function up(db: Kysely<unknown>): Promise<void> {
  if (db.getExecutor().adapter instanceof SqliteAdapter) {
    await db.schema
      .createTable('tokens_008')
      .addColumn('token_hash', 'text', (c) => c.primaryKey())
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('client_id', 'text', (c) => c.notNull())
      .addColumn('user_id', 'text')
      .addColumn('scope', 'text', (c) => c.notNull())
      .addColumn('session_index', 'text')
      .addColumn('auth_time', 'bigint')
      .addColumn('amr', 'text')
      .addColumn('acr', 'text')
      .addColumn('code_hash', 'text')
      .addColumn('family_id', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint')
      .addColumn('revoked_at', 'bigint')
      .addColumn('rotated_at', 'bigint')
      .addCheckConstraint('tokens_subject', SUBJECT_CHECK)
      .execute();
    const columns = sql.raw(COLUMNS.join(', '));
    await sql`insert into tokens_008 (${columns}) select ${columns} from tokens`.execute(db);
    await db.schema.dropTable('tokens').execute();
    await db.schema.alterTable('tokens_008').renameTo('tokens').execute();
    await db.schema.createIndex('tokens_family').on('tokens').column('family_id').execute();
    await db.schema.createIndex('tokens_expires_at').on('tokens').column('expires_at').execute();
    await db.schema.createIndex('tokens_user_session').on('tokens').columns(['user_id', 'session_index']).execute();
    return;
  }
  for (const column of ['user_id', 'session_index', 'auth_time', 'amr']) {
    await db.schema.alterTable('tokens').alterColumn(column, (c) => c.dropNotNull()).execute();
  }
  await db.schema.alterTable('tokens').addCheckConstraint('tokens_subject', SUBJECT_CHECK).execute();
}

const COLUMNS = ['token_hash', 'kind', 'client_id', 'user_id', 'scope', 'session_index', 'auth_time', 'amr', 'acr', 'code_hash', 'family_id', 'created_at', 'expires_at', 'revoked_at', 'rotated_at'];

export async function down(): Promise<void> {
  throw new Error('gatehouse migrations are forward-only');
}
