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
import { IdentityError } from './errors.ts';
import { optionalText, requiredText } from './text.ts';
import { getUser } from './users.ts';

export interface GroupDeps {
  groups: GroupStore;
  clock: Clock;
  random: Random;
}

export interface MembershipDeps {
  groups: GroupStore;
  users: UserStore;
}

export async function createGroup(deps: GroupDeps, input: { name: string; description?: string }): Promise<Group> {
  const group: Group = {
    id: deps.random.uuid(),
    name: requiredText(input.name, 'name'),
    description: optionalText(input.description, 'description'),
    createdAt: deps.clock.now(),
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
 */
export async function deleteGroup(deps: Pick<GroupDeps, 'groups'> & UnitOfWork, name: string): Promise<DeletedGroup> {
  const group = await getGroup(deps, name);
  return deps.transaction(async (tx) => {
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

/** Adds a user (by id or username) to a group (by name); adding a member again changes nothing. */
export async function addMember(deps: MembershipDeps, groupName: string, user: string): Promise<Membership> {
  const [group, member] = await Promise.all([getGroup(deps, groupName), getUser(deps, user)]);
  try {
    return { group, user: member, changed: await deps.groups.addMember(group.id, member.id) };
  } catch (error) {
    // The group or the user was deleted in between.
    if (error instanceof MissingReferenceError) throw new IdentityError('not_found', `group ${JSON.stringify(groupName)} or user ${JSON.stringify(user)} no longer exists`);
    throw error;
  }
}

export async function removeMember(deps: MembershipDeps, groupName: string, user: string): Promise<Membership> {
  const [group, member] = await Promise.all([getGroup(deps, groupName), getUser(deps, user)]);
  return { group, user: member, changed: await deps.groups.removeMember(group.id, member.id) };
}
