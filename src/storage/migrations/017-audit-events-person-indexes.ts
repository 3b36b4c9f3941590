import type { Kysely } from 'kysely';

/**
 * The audit events' indexes on the subject user (`user_id`) and the acting administrator
 * (`actor_id`), rebuilt as partial indexes of the rows that have one (docs/decisions.md AU10;
 * docs/performance.md, "Audit events in the store (issue 14)").
 *
 * Most events have no actor (every grant, login and logout) and client_credentials grants have no
 * user: the full indexes of migration 015 held one entry per such row under NULL. Their statistics
 * then told both planners that `actor_id = ?` matches half the table, so a page filtered by type
 * and user walked the whole type's range of audit_events_event_at instead of the person's range,
 * and every insert paid for an index entry no query can reach (`= ?` never matches NULL, which is
 * also why both databases may use a partial index for it). Same names, same columns: only rows
 * without the value are left out. Building them reads the table once; the table is new in this
 * release, so it is small wherever this runs.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const column of ['user_id', 'actor_id'] as const) {
    const name = column === 'user_id' ? 'audit_events_user_at' : 'audit_events_actor_at';
    await db.schema.dropIndex(name).execute();
    await db.schema.createIndex(name).on('audit_events').columns([column, 'at', 'id']).where(column, 'is not', null).execute();
  }
}

export async function down(): Promise<void> {
  throw new Error('gatehouse migrations are forward-only');
}
