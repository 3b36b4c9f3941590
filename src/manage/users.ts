/**
 * The use cases of users: list, read, create, update, password, status, delete: each takes who acts (acting.ts) and its input, runs the rules and the
 * unit of work of the change, and emits its audit event. Every front end calls these.
 *
 * The rules themselves stay in src/identity (users.ts, user-changes.ts, administrators.ts): this
 * file binds them to the store once and says, once, which audit event each change emits, so the
 * CLI, the identity API and the management API cannot drift apart (they used to emit their own).
 */
import type { Group } from '../domain/group.ts';
import type { User, UserProfile, UserStatus } from '../domain/user.ts';
import { groupsOfUser } from '../identity/groups.ts';
import { userIdsOfOrganization } from '../identity/organization-tree.ts';
import { updateUser, type UserChanges } from '../identity/user-changes.ts';
import { createUser, deleteUser, getUser, listUserIds, listUsers, setPassword, setStatus, type NewUser } from '../identity/users.ts';
import type { UserPageQuery, UserQuery } from '../storage/ports.ts';
import type { Acting } from './acting.ts';
import type { AdministrationPorts, AdministrationSettings } from './ports.ts';
import { userFactorAdministration, type UserFactorAdministration } from './user-factors.ts';
import { passwordResetAdministration, type PasswordResetAdministration } from './password-resets.ts';
import { passwordPolicyOf } from '../identity/password-policy.ts';
import { emailVerificationAdministration, type EmailVerificationAdministration } from './email-verifications.ts';

export type { NewUser, UserChanges };

/** A page of users: UserPageQuery, with the group named rather than by id. */
export interface UserPage extends Omit<UserPageQuery, 'groupId'> {
  /** Only the members of the group of this name; a group that does not exist has none. */
  group?: string | undefined;
}

/** The identity API's listing: UserQuery, or with `organizationId` and `recursive` that organization's whole subtree. */
export interface UserIdQuery extends Omit<UserQuery, 'organizationIds'> {
  /** The users of this organization's subtree (404 when it does not exist); with `filters`, the other filters. */
  subtreeOf?: string | undefined;
}

/** The user's second factors are administered here too (user-factors.ts): `factors`, `resetFactors`, `removeFactor`, `importTotp`, `renameFactor`, `sealTotpSecrets`. */
export interface UserAdministration extends UserFactorAdministration, PasswordResetAdministration, EmailVerificationAdministration {
  /** A user by id or, failing that, by username (IdentityError `not_found`). */
  get(idOrUsername: string): Promise<User>;
  /** A user by id only (never a username, which could look like another user's id); undefined when none. */
  byId(id: string): Promise<User | undefined>;
  /** A user without custom attributes, by id; undefined when none. */
  profile(id: string): Promise<UserProfile | undefined>;
  /** The matching users' profiles in username order, without custom attributes. */
  list(query?: UserQuery): Promise<UserProfile[]>;
  /** The matching users' ids in username order (the identity API's listings). */
  listIds(query: UserIdQuery): Promise<string[]>;
  /** Up to `query.limit + 1` users after `query.after` (the one past `limit` says that a next page exists). */
  page(query: UserPage): Promise<UserProfile[]>;
  /** The groups the user is a member of. */
  groupsOf(userId: string): Promise<Group[]>;
  /**
   * Whether the user is a member of the administrators group (GATEHOUSE_ADMIN_GROUP), read now:
   * what makes a bearer token's user a management administrator at the identity API.
   */
  isAdministrator(userId: string): Promise<boolean>;
  create(acting: Acting, input: NewUser): Promise<User>;
  /** CustomerID's update rule (user-changes.ts); `user.updated` names the fields given, never their values. */
  update(acting: Acting, idOrUsername: string, changes: UserChanges): Promise<User>;
  /** Also ends the user's sessions and revokes their tokens (users.ts setPassword). */
  setPassword(acting: Acting, idOrUsername: string, password: string): Promise<User>;
  setStatus(acting: Acting, idOrUsername: string, status: UserStatus): Promise<User>;
  delete(acting: Acting, idOrUsername: string): Promise<User>;
}

/** The ports of the user use cases: of the settings, only the administrators group's name. */
export type UserPorts = Pick<AdministrationPorts, 'store' | 'clock' | 'random' | 'audit' | 'mail'> & { settings: Pick<AdministrationSettings, 'manageAdminGroup' | 'keyEncryptionKey'> & Partial<Pick<AdministrationSettings, 'issuer' | 'passwordResetLifetime' | 'passwordMinLength' | 'emailVerificationLifetime'>> };

export function userAdministration(ports: UserPorts): UserAdministration {
  const { store, clock, random, audit } = ports;
  const passwordPolicy = passwordPolicyOf(ports.settings);
  const deps = { ...store, transaction: store.transaction, clock, random, passwordPolicy };
  return {
    ...userFactorAdministration(ports),
    ...passwordResetAdministration(ports),
    ...emailVerificationAdministration(ports),
    get: (idOrUsername) => getUser(store, idOrUsername),
    byId: (id) => store.users.get(id),
    profile: (id) => store.users.getProfile(id),
    list: (query) => listUsers(store, query),
    async listIds({ subtreeOf, ...query }) {
      if (subtreeOf !== undefined) return userIdsOfOrganization(store, subtreeOf, { ...query, recursive: true });
      return listUserIds(store, query);
    },
    async page({ group: groupName, ...query }) {
      let groupId: string | undefined;
      if (groupName !== undefined) {
        const group = await store.groups.getByName(groupName);
        // A group that does not exist has no members.
        if (!group) return [];
        groupId = group.id;
      }
      return store.users.page({ ...query, limit: query.limit + 1, groupId });
    },
    groupsOf: (userId) => groupsOfUser(store, userId),
    isAdministrator: (userId) => store.groups.isMember(userId, ports.settings.manageAdminGroup),
    async create(acting, input) {
      const user = await createUser(deps, input, acting.authority);
      audit.emit({ event: 'user.created', userId: user.id, username: user.username, actor: acting.actor });
      if (input.emailVerified !== undefined) audit.emit({ event: 'email_verification.marked', userId: user.id, username: user.username, verified: user.emailVerified, actor: acting.actor });
      return user;
    },
    async update(acting, idOrUsername, changes) {
      const updated = await updateUser(deps, idOrUsername, changes, acting.authority);
      // The names of what changed, never the values (a password among them); the status as the
      // identity API always said it (the one front end whose update can change it).
      const fields = Object.entries(changes).flatMap(([name, value]) => (value === undefined ? [] : [name]));
      audit.emit({ event: 'user.updated', userId: updated.id, username: updated.username, fields, status: changes.status, actor: acting.actor });
      // The administrator's explicit word on the address (AM51), an event of its own: what makes a claim say "verified" without a link.
      if (changes.emailVerified !== undefined) audit.emit({ event: 'email_verification.marked', userId: updated.id, username: updated.username, verified: updated.emailVerified, actor: acting.actor });
      return updated;
    },
    async setPassword(acting, idOrUsername, password) {
      const changed = await setPassword(deps, idOrUsername, password, acting.authority);
      audit.emit({ event: 'user.password_changed', userId: changed.id, username: changed.username, actor: acting.actor });
      return changed;
    },
    async setStatus(acting, idOrUsername, status) {
      const changed = await setStatus(deps, idOrUsername, status, acting.authority);
      audit.emit({ event: 'user.status_changed', userId: changed.id, username: changed.username, status: changed.status, actor: acting.actor });
      return changed;
    },
    async delete(acting, idOrUsername) {
      const deleted = await deleteUser(deps, idOrUsername, acting.authority);
      audit.emit({ event: 'user.deleted', userId: deleted.id, username: deleted.username, actor: acting.actor });
      return deleted;
    },
  };
}
