import type { Kysely } from 'kysely';

/**
 * Administrator groups remembered (issue 22 item 1; docs/decisions.md AD4). `groups.administrator`
 * (0/1) marks a group that is or was an administrator group (GATEHOUSE_ADMIN_GROUP or
 * GATEHOUSE_ADMIN_READONLY_GROUP): the identity API keeps out of it and its members even after the
 * setting names another group, so it cannot fill a group that becomes the administrators again
 * when the setting returns. The server marks the configured groups when it starts; nothing clears
 * a mark but an operator (`gatehouse group unmark-administrator`, or deleting the group).
 *
 * A migration knows no configuration, so it marks the groups of the default names, the
 * administrator groups of every store whose settings were never changed; the server marks the
 * configured ones when it starts. Additive: an older instance never reads the column.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('groups').addColumn('administrator', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  const groups = db as unknown as Kysely<{ groups: { name_key: string; administrator: number } }>;
  // The name keys of `Administrators` and `Administrators (read-only)` (normalizeUsername: NFKC, lower case).
  await groups.updateTable('groups').set({ administrator: 1 }).where('name_key', 'in', ['administrators', 'administrators (read-only)']).execute();
}

export async function down(): Promise<void> {
  throw new Error('gatehouse migrations are forward-only');
}
