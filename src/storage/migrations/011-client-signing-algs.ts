import type { Kysely } from 'kysely';

/**
 * The algorithms a client's ID tokens and UserInfo responses are signed with (OIDC Registration
 * §2: `id_token_signed_response_alg`, `userinfo_signed_response_alg`), as typed columns: UserInfo
 * reads the second with the access token, in the statement that already joins the client.
 * Additive: null is RS256 for ID tokens (the registered default) and plain JSON for UserInfo, which
 * is what every existing client has (only RS256 was accepted before, and it was kept in
 * `metadata`, where it stays harmless). Signing keys already carry their `alg` (001-initial); each
 * algorithm's keys rotate on their own without a schema change.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('clients').addColumn('id_token_signed_response_alg', 'text').execute();
  await db.schema.alterTable('clients').addColumn('userinfo_signed_response_alg', 'text').execute();
}

export async function down(): Promise<void> {
  throw new Error('gatehouse migrations are forward-only');
}
