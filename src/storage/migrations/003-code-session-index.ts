import type { Kysely } from 'kysely';

/** Logout spends the unredeemed codes of the ended session (CodeStore.consumeBySession): look them up by index. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex('authorization_codes_session').on('authorization_codes').column('session_index').execute();
}

export async function down(): Promise<void> {
  throw new Error('gatehouse migrations are forward-only');
}
