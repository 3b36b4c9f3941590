/**
 * The rule that keeps gatehouse manageable: no change through the management API may leave the
 * administrators group (GATEHOUSE_ADMIN_GROUP) without an enabled member — not removing its last
 * one, not deleting or disabling them. Without it an administrator could lock everybody out, and
 * only someone with shell access to the store could let them back in (docs/decisions.md MI6).
 */
import type { StoreTransaction } from '../../../storage/ports.ts';
import { conflict } from '../errors.ts';

/**
 * Throws 409 when taking `userId`'s administrator access away would leave the group with no
 * enabled member. Call it inside the unit of work that makes the change: the members and their
 * status are read there, so two administrators removing each other at once cannot both pass
 * (PostgreSQL runs units serializable, SQLite one writer at a time).
 */
export async function keepAnAdministrator(tx: Pick<StoreTransaction, 'groups' | 'users'>, adminGroup: string, userId: string, change: string): Promise<void> {
  const group = await tx.groups.getByName(adminGroup);
  if (!group) return;
  const members = await tx.groups.members(group.id);
  if (!members.includes(userId)) return;
  for (const id of members) if (id !== userId && (await tx.users.getProfile(id))?.status === 'enabled') return;
  throw conflict(`${change} would leave the administrators group ${JSON.stringify(group.name)} without an enabled member; make someone else an administrator first`);
}
