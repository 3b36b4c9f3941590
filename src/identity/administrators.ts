/**
 * The administrators' rules, which every front end (CLI, identity API, management API and through
 * it the console) gets by calling the use cases of users.ts, user-changes.ts and groups.ts: those
 * take an `Authority` and run these checks inside the unit of work that makes the change.
 *
 * 1. Keep an administrator (docs/decisions.md MI6, AD2): no change may leave the administrators
 *    group (GATEHOUSE_ADMIN_GROUP) without an enabled member — not removing its last one, not
 *    deleting or disabling them — and that group cannot be deleted. Whoever asks, administrators
 *    included: otherwise nobody could manage gatehouse but someone with shell access to the store.
 * 2. Administrators are out of reach of everyone else (AD1): the two administrator groups
 *    (GATEHOUSE_ADMIN_GROUP, GATEHOUSE_ADMIN_READONLY_GROUP), every group marked as one that was
 *    (`Group.administrator`, AD4), and the accounts that are their members can be changed only by
 *    someone acting as an administrator. The identity API's account, the members of its group and
 *    its machine clients are not: letting them put a user in the administrators group, or set an
 *    administrator's password, would make the identity API a way to become a management
 *    administrator (issue 22, item 1) — also through a group that becomes the administrators
 *    again when a changed setting returns, hence the mark.
 *
 * No framework and no wire format here: the refusals are IdentityErrors (`last_administrator`,
 * `administrators_only`), which each front end renders in its own format.
 */
import type { Group } from '../domain/group.ts';
import { normalizeUsername } from '../domain/user.ts';
import type { GroupStore, StoreTransaction } from '../storage/ports.ts';
import { IdentityError } from './errors.ts';

/** The names of the two administrator groups, as configured. */
export interface AdministratorGroups {
  /** GATEHOUSE_ADMIN_GROUP: its enabled members may change everything the management API shows. */
  admin: string;
  /** GATEHOUSE_ADMIN_READONLY_GROUP: its enabled members may read it. */
  readonly: string;
}

/** Who asks for a change to users or groups, as far as the administrators' rules are concerned. */
export interface Authority {
  groups: AdministratorGroups;
  /**
   * The caller acts as a management administrator: the CLI's operator (shell access to the store),
   * a writer of the management API (an administrator's token or a machine client allowed that
   * API), an administrator's bearer token at the identity API. False for everyone else.
   */
  administrator: boolean;
}

/** The configured group names (GATEHOUSE_ADMIN_GROUP, GATEHOUSE_ADMIN_READONLY_GROUP). */
export function administratorGroups(config: { manageAdminGroup: string; manageReadonlyGroup: string }): AdministratorGroups {
  return { admin: config.manageAdminGroup, readonly: config.manageReadonlyGroup };
}

/** Group names compare as the store compares them (case-insensitively, Unicode-folded). */
function sameGroup(a: string, b: string): boolean {
  return normalizeUsername(a) === normalizeUsername(b);
}

/** Whether `name` is the administrators group (GATEHOUSE_ADMIN_GROUP). */
export function isAdminGroup(groups: AdministratorGroups, name: string): boolean {
  return sameGroup(name, groups.admin);
}

/** Whether `name` is one of the two administrator groups. */
export function isAdministratorGroup(groups: AdministratorGroups, name: string): boolean {
  return sameGroup(name, groups.admin) || sameGroup(name, groups.readonly);
}

function administratorsOnly(change: string, why: string): IdentityError {
  return new IdentityError('administrators_only', `${change} is refused: ${why}; only a management administrator may change it (docs/identity-api.md, "Administrators are out of reach")`);
}

/**
 * Whether a group is out of the reach of callers who are not administrators: one of the configured
 * administrator groups (by name, marked or not), or marked as one that is or was (AD4).
 */
function outOfReach(groups: AdministratorGroups, group: Pick<Group, 'name' | 'administrator'>): boolean {
  return group.administrator || isAdministratorGroup(groups, group.name);
}

function whyOutOfReach(groups: AdministratorGroups, group: Pick<Group, 'name'>): string {
  return isAdministratorGroup(groups, group.name) ? 'an administrator group' : 'marked as an administrator group (it was one; an operator may unmark it)';
}

/**
 * Refuses a change of an administrator group (its members, its existence) to a caller who is not
 * an administrator. `group` as read in the unit of work that makes the change, so a mark set
 * meanwhile is seen.
 */
export function requireReachOfGroup(authority: Authority, group: Pick<Group, 'name' | 'administrator'>, change: string): void {
  if (authority.administrator || !outOfReach(authority.groups, group)) return;
  throw administratorsOnly(change, `${JSON.stringify(group.name)} is ${whyOutOfReach(authority.groups, group)}`);
}

/**
 * Refuses any change of an account that is a member of an administrator group, configured or
 * marked (its password, status, attributes, username, groups, existence) to a caller who is not
 * an administrator. Call it inside the unit of work that makes the change, so someone made an
 * administrator meanwhile is either changed before or refused after, never changed after.
 */
export async function requireReachOfUser(tx: Pick<StoreTransaction, 'groups'>, authority: Authority, userId: string, change: string): Promise<void> {
  if (authority.administrator) return;
  const group = (await tx.groups.groupsOf(userId)).find((g) => outOfReach(authority.groups, g));
  if (group) throw administratorsOnly(change, `the user is a member of ${JSON.stringify(group.name)}, which is ${whyOutOfReach(authority.groups, group)}`);
}

/**
 * Refuses (`last_administrator`) a change that takes `userId`'s administrator access away when no
 * other enabled member would remain in the administrators group. Call it inside the unit of work
 * that makes the change: the members and their status are read there, so two removals at once
 * cannot both pass (PostgreSQL runs units serializable, SQLite one writer at a time). Disabled
 * members do not count: they cannot sign in.
 */
export async function keepAnAdministrator(tx: Pick<StoreTransaction, 'groups' | 'users'>, groups: AdministratorGroups, userId: string, change: string): Promise<void> {
  const group = await tx.groups.getByName(groups.admin);
  if (!group) return;
  const members = await tx.groups.members(group.id);
  if (!members.includes(userId)) return;
  for (const id of members) if (id !== userId && (await tx.users.getProfile(id))?.status === 'enabled') return;
  throw new IdentityError('last_administrator', `${change} would leave the administrators group ${JSON.stringify(group.name)} without an enabled member; make someone else an administrator first`);
}

/**
 * Marks the configured administrator groups that exist as administrator groups (AD4): run when a
 * server starts, so a group stays out of the identity API's reach after the setting names another.
 * One conditional statement, idempotent, safe for instances starting together; never clears a
 * mark. Returns the names newly marked.
 */
export async function markAdministratorGroups(deps: { groups: Pick<GroupStore, 'markAdministrator'> }, groups: AdministratorGroups): Promise<string[]> {
  return deps.groups.markAdministrator([groups.admin, groups.readonly]);
}

/** Refuses deleting the administrators group, whoever asks: it would leave nobody to manage gatehouse. */
export function keepTheAdministratorsGroup(groups: AdministratorGroups, name: string): void {
  if (isAdminGroup(groups, name)) throw new IdentityError('last_administrator', `group ${JSON.stringify(name)} is the administrators group (GATEHOUSE_ADMIN_GROUP); deleting it would leave nobody to manage gatehouse`);
}
