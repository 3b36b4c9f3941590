/**
 * Group use cases. Groups are flat and named; names compare case-insensitively. Membership of
 * the configured API group ("Identity API Users") is what lets a bearer token call the
 * identity API.
 */
import type { Group } from '../domain/group.ts';
import type { User } from '../domain/user.ts';
import type { Clock } from '../lib/clock.ts';
import type { Random } from '../lib/random.ts';
import { ConflictError, MissingReferenceError, type GroupStore, type UserStore } from '../storage/ports.ts';
import type { UnitOfWork } from './users.ts';
import { isAdminGroup, isAdministratorGroup, keepAnAdministrator, keepTheAdministratorsGroup, requireReachOfGroup, requireReachOfUser, type Authority } from './administrators.ts';
import { IdentityError } from './errors.ts';
import { optionalText, requiredText } from './text.ts';
import { getUser } from './users.ts';

export interface GroupDeps {
  groups: GroupStore;
  clock: Clock;
  random: Random;
}

export interface MembershipDeps extends UnitOfWork {
  groups: GroupStore;
  users: UserStore;
}

/**
 * Creates a group. One that a setting names as an administrator group (GATEHOUSE_ADMIN_GROUP,
 * GATEHOUSE_ADMIN_READONLY_GROUP) is created marked as one (AD4).
 */
export async function createGroup(deps: GroupDeps, input: { name: string; description?: string }, authority: Authority): Promise<Group> {
  const name = requiredText(input.name, 'name');
  const group: Group = {
    id: deps.random.uuid(),
    name,
    description: optionalText(input.description, 'description'),
    createdAt: deps.clock.now(),
    administrator: isAdministratorGroup(authority.groups, name),
  };
  try {
    await deps.groups.insert(group);
  } catch (error) {
    if (error instanceof ConflictError) throw new IdentityError('already_exists', `a group named ${JSON.stringify(group.name)} already exists (names compare case-insensitively)`, 'name');
    throw error;
  }
  return group;
}

export async function listGroups(deps: Pick<GroupDeps, 'groups'>): Promise<Group[]> {
  return deps.groups.list();
}

export async function getGroup(deps: Pick<GroupDeps, 'groups'>, name: string): Promise<Group> {
  const group = await deps.groups.getByName(name);
  if (!group) throw new IdentityError('not_found', `no group is named ${JSON.stringify(name)}`);
  return group;
}

/** The ids of a group's members. */
export async function groupMembers(deps: Pick<GroupDeps, 'groups'>, name: string): Promise<string[]> {
  return deps.groups.members((await getGroup(deps, name)).id);
}

export async function groupsOfUser(deps: Pick<GroupDeps, 'groups'>, userId: string): Promise<Group[]> {
  return deps.groups.groupsOf(userId);
}

export interface DeletedGroup {
  group: Group;
  /** The ids of the users who were its members when it was deleted. */
  members: string[];
}

/**
 * Deletes a group (by name) and its memberships. Its members are read and the group deleted in one
 * unit of work, so the members reported are exactly those removed, whoever adds one meanwhile.
 * The administrators group is never deleted, the read-only one only by an administrator
 * (administrators.ts).
 */
export async function deleteGroup(deps: Pick<GroupDeps, 'groups'> & UnitOfWork, name: string, authority: Authority): Promise<DeletedGroup> {
  keepTheAdministratorsGroup(authority.groups, name);
  await getGroup(deps, name);
  return deps.transaction(async (tx) => {
    // Read in the unit: its mark as it is when the group goes.
    const group = await tx.groups.getByName(name);
    if (!group) throw new IdentityError('not_found', `group ${JSON.stringify(name)} no longer exists`);
    requireReachOfGroup(authority, group, `deleting the group ${JSON.stringify(group.name)}`);
    const members = await tx.groups.members(group.id);
    if (!(await tx.groups.delete(group.id))) throw new IdentityError('not_found', `group ${JSON.stringify(name)} no longer exists`);
    return { group, members };
  });
}

export interface Membership {
  group: Group;
  user: User;
  /** false when nothing changed: the user already was (or was not) a member. */
  changed: boolean;
}

/**
 * Adds a user (by id or username) to a group (by name); adding a member again changes nothing.
 * Checked and added in one unit of work: an administrator group, or a user who is an
 * administrator when the unit commits, is out of reach of a caller who is not one.
 */
export async function addMember(deps: MembershipDeps, groupName: string, user: string, authority: Authority): Promise<Membership> {
  const [found, member] = await Promise.all([getGroup(deps, groupName), getUser(deps, user)]);
  const change = `adding ${member.username} to ${JSON.stringify(found.name)}`;
  try {
    return await deps.transaction(async (tx) => {
      // Read in the unit: a mark set meanwhile (a server starting with other settings) counts.
      const group = await tx.groups.getByName(found.name);
      if (!group) throw new MissingReferenceError(`group ${found.name}`);
      requireReachOfGroup(authority, group, change);
      await requireReachOfUser(tx, authority, member.id, change);
      return { group, user: member, changed: await tx.groups.addMember(group.id, member.id) };
    });
  } catch (error) {
    // The group or the user was deleted in between.
    if (error instanceof MissingReferenceError) throw new IdentityError('not_found', `group ${JSON.stringify(groupName)} or user ${JSON.stringify(user)} no longer exists`);
    throw error;
  }
}

/**
 * Clears the administrator mark of a group no setting names any more (AD4): an operator's act, for
 * a group that is to stay as an ordinary group. Refused (`in_use`) while GATEHOUSE_ADMIN_GROUP or
 * GATEHOUSE_ADMIN_READONLY_GROUP names it, and to anyone not acting as an administrator.
 */
export async function unmarkAdministratorGroup(deps: Pick<GroupDeps, 'groups'>, name: string, authority: Authority): Promise<{ group: Group; changed: boolean }> {
  const group = await getGroup(deps, name);
  const change = `unmarking the administrator group ${JSON.stringify(group.name)}`;
  requireReachOfGroup(authority, group, change);
  if (isAdministratorGroup(authority.groups, group.name)) throw new IdentityError('in_use', `${change} is refused: GATEHOUSE_ADMIN_GROUP or GATEHOUSE_ADMIN_READONLY_GROUP names it, and it stays marked while a setting does`);
  const changed = await deps.groups.unmarkAdministrator(group.id);
  return { group: { ...group, administrator: false }, changed };
}

/**
 * Ends a user's membership of a group; `changed` false when they were not a member. The group is
 * read, the administrators' rules checked (who may, and that an enabled administrator remains)
 * and the member removed in one unit of work, so two removals at once cannot both pass.
 */
export async function removeMember(deps: MembershipDeps, groupName: string, user: string, authority: Authority): Promise<Membership> {
  const member = await getUser(deps, user);
  const change = `removing ${member.username}`;
  return deps.transaction(async (tx) => {
    const group = await tx.groups.getByName(groupName);
    // The name as given, cut short: a path segment can be long, and the answer need not repeat it all.
    if (!group) throw new IdentityError('not_found', `no group is named ${JSON.stringify(groupName.slice(0, 80))}`);
    requireReachOfGroup(authority, group, `${change} from ${JSON.stringify(group.name)}`);
    await requireReachOfUser(tx, authority, member.id, `${change} from ${JSON.stringify(group.name)}`);
    if (isAdminGroup(authority.groups, group.name)) await keepAnAdministrator(tx, authority.groups, member.id, change);
    return { group, user: member, changed: await tx.groups.removeMember(group.id, member.id) };
  });
}
