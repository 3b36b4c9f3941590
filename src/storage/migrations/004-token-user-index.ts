import type { Kysely } from 'kysely';

/** Disabling or deleting a user revokes all their tokens (TokenStore.revokeByUser): look them up by user. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex('tokens_user').on('tokens').column('user_id').execute();
}

export async function down(): Promise<void> {
  throw new Error('gatehouse migrations are forward-only');
}
