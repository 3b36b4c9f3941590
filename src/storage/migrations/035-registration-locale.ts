import type { Kysely } from 'kysely';

/**
 * The language a self-registered user registered in (issue 25 item 4; docs/registration.md,
 * "Approval"; decision AM105): `users.registration_locale`, written with the account when its
 * registration link is followed, read when an administrator approves or rejects it, so those
 * mails go out in the registrant's language, not the administrator's. Nullable: accounts made
 * otherwise, or before this migration, have none (the mail is then in the language the
 * administrator gives, else English). Additive: older instances never read the column.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('users').addColumn('registration_locale', 'text').execute();
}

export async function down(): Promise<void> {
  throw new Error('gatehouse migrations are forward-only');
}
