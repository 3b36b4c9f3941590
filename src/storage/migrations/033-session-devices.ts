import type { Kysely } from 'kysely';

/**
 * What the account page's session list shows of each SSO session (issue 25 item 6,
 * docs/account.md, decisions AM83): the browser's User-Agent (at most 256 characters) and the
 * client address, both as they were at sign-in, both nullable (sessions started before this
 * migration, or by a request without them, show "unknown"). Additive: older instances never read
 * the columns, and their inserts leave them null.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('sessions').addColumn('user_agent', 'text').execute();
  await db.schema.alterTable('sessions').addColumn('client_ip', 'text').execute();
}

export async function down(): Promise<void> {
  throw new Error('gatehouse migrations are forward-only');
}
