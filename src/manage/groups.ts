/**
 * The use cases of groups and their members: each takes who acts (acting.ts) and its input, runs the rules and the
 * unit of work of the change, and emits its audit event. Every front end calls these.
 *
 * The rules stay in src/identity/groups.ts and administrators.ts (who may change an administrator
 * group, keep an administrator); a membership is changed the same way whether a front end names it
 * from the group's side (`groups/{name}/members/{user}`) or the user's (`users/{id}/groups/{name}`).
 */
import type { Group } from '../domain/group.ts';
import type { UserProfile } from '../domain/user.ts';
import { addMember, createGroup, deleteGroup, getGroup, groupMembers, listGroups, removeMember, unmarkAdministratorGroup, type DeletedGroup, type Membership } from '../identity/groups.ts';
import type { PageQuery } from '../storage/ports.ts';
import type { Acting } from './acting.ts';
import type { AdministrationPorts } from './ports.ts';

export type { DeletedGroup, Membership };

export interface GroupAdministration {
  /** Every group. */
  list(): Promise<Group[]>;
  /** Up to `query.limit + 1` groups after `query.after` (a name key), in name order; the one past `limit` says that a next page exists. */
  page(query: PageQuery<string>): Promise<Group[]>;
  /** A group by name (IdentityError `not_found`). */
  get(name: string): Promise<Group>;
  /** The ids of a group's members. */
  memberIds(name: string): Promise<string[]>;
  /** A group's members, in username order; one deleted meanwhile is not listed. */
  members(name: string): Promise<UserProfile[]>;
  /** Up to `query.limit + 1` members of the group (by name) after `query.after` (a username key). */
  memberPage(name: string, query: PageQuery<string>): Promise<UserProfile[]>;
  create(acting: Acting, input: { name: string; description?: string }): Promise<Group>;
  /** The administrators group is never deleted, the read-only one only by an administrator. */
  delete(acting: Acting, name: string): Promise<DeletedGroup>;
  /** Adds a user (by id or username); `changed` false (and no audit event) when they already were a member. */
  addMember(acting: Acting, groupName: string, user: string): Promise<Membership>;
  /** Ends a membership; `changed` false (and no audit event) when there was none. Keeps an enabled administrator. */
  removeMember(acting: Acting, groupName: string, user: string): Promise<Membership>;
  /** Clears the administrator mark of a group no setting names any more (AD4). */
  unmarkAdministrator(acting: Acting, name: string): Promise<{ group: Group; changed: boolean }>;
}

export function groupAdministration(ports: Pick<AdministrationPorts, 'store' | 'clock' | 'random' | 'audit'>): GroupAdministration {
  const { store, clock, random, audit } = ports;
  return {
    list: () => listGroups(store),
    page: (query) => store.groups.page({ ...query, limit: query.limit + 1 }),
    get: (name) => getGroup(store, name),
    memberIds: (name) => groupMembers(store, name),
    async members(name) {
      const ids = await groupMembers(store, name);
      const profiles = (await Promise.all(ids.map((id) => store.users.getProfile(id)))).filter((u): u is UserProfile => u !== undefined);
      return profiles.sort((a, b) => a.username.localeCompare(b.username));
    },
    async memberPage(name, query) {
      const group = await getGroup(store, name);
      return store.groups.memberPage(group.id, { ...query, limit: query.limit + 1 });
    },
    async create(acting, input) {
      const group = await createGroup({ groups: store.groups, clock, random }, input, acting.authority);
      audit.emit({ event: 'group.created', group: group.name, actor: acting.actor });
      return group;
    },
    async delete(acting, name) {
      const deleted = await deleteGroup(store, name, acting.authority);
      audit.emit({ event: 'group.deleted', group: deleted.group.name, members: deleted.members.length, actor: acting.actor });
      return deleted;
    },
    async addMember(acting, groupName, user) {
      const membership = await addMember(store, groupName, user, acting.authority);
      if (membership.changed) audit.emit({ event: 'user.group_added', userId: membership.user.id, username: membership.user.username, group: membership.group.name, actor: acting.actor });
      return membership;
    },
    async removeMember(acting, groupName, user) {
      const membership = await removeMember(store, groupName, user, acting.authority);
      if (membership.changed) audit.emit({ event: 'user.group_removed', userId: membership.user.id, username: membership.user.username, group: membership.group.name, actor: acting.actor });
      return membership;
    },
    // No audit event: the catalogue (src/observability/audit-catalog.ts) has none for it.
    unmarkAdministrator: (acting, name) => unmarkAdministratorGroup(store, name, acting.authority),
  };
}
