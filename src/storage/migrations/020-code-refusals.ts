import type { Kysely } from 'kysely';

/**
 * Why a code's redemption was refused after it was consumed (`refused_for`: `code_verifier`,
 * `redirect_uri`, `client_id`, `expired`, `user`, `scope`), null for a code redeemed or never
 * presented. The code stays spent either way (RFC 6749 §4.1.2, RFC 7636 §4.6); the column only
 * lets a later presentation be told apart from a replay: a client retrying after a wrong
 * code_verifier got no tokens, so it is counted as `code.retried`, not as `code.replayed`, the
 * alarm of a stolen code (docs/operations.md, "Metrics"; docs/decisions.md, back channel 17).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('authorization_codes').addColumn('refused_for', 'text').execute();
}

export async function down(): Promise<void> {
  throw new Error('gatehouse migrations are forward-only');
}
