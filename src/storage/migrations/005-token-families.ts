import { sql, type Kysely } from 'kysely';

/**
 * Fewer indexes on tokens, the table every grant writes. Each secondary index on a random key
 * costs a page write per inserted row: a rotating refresh's writes took 200–260 µs with the five
 * indexes and 143 µs with three (docs/performance.md).
 *
 * - A family is exactly the tokens descending from one code, so it is now named by the code's
 *   hash; code replay revokes the family (TokenStore.revokeFamily) and `tokens_code_hash` goes.
 *   Existing families are renamed the same way: every token of one code shares one family_id.
 *   Not additive: an instance of an older version would keep naming families otherwise, so none
 *   may run once this has (docs/operations.md, Upgrades).
 * - Logout revokes by user and session together (the session names its user), so one index on
 *   `(user_id, session_index)` serves it and the revocation of all a user's tokens.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`update tokens set family_id = code_hash where code_hash is not null and family_id <> code_hash`.execute(db);
  await db.schema.dropIndex('tokens_code_hash').execute();
  await db.schema.dropIndex('tokens_session').execute();
  await db.schema.dropIndex('tokens_user').execute();
  await db.schema.createIndex('tokens_user_session').on('tokens').columns(['user_id', 'session_index']).execute();
}

export async function down(): Promise<void> {
  throw new Error('gatehouse migrations are forward-only');
}
