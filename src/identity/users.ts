/**
 * User use cases: create, find, change password or status, delete. Usernames are unique
 * case-insensitively (`normalizeUsername`); passwords are stored as argon2id hashes only.
 */
import { USER_STATUSES, type Attributes, type User, type UserProfile, type UserStatus } from '../domain/user.ts';
import type { Clock } from '../lib/clock.ts';
import type { Random } from '../lib/random.ts';
import { isUuid } from '../lib/uuid.ts';
import { ConflictError, MissingReferenceError, type GroupStore, type OrganizationStore, type Store, type StoreTransaction, type UserQuery, type UserStore } from '../storage/ports.ts';
import { keepAnAdministrator, requireReachOfGroup, requireReachOfUser, type Authority } from './administrators.ts';
import { IdentityError } from './errors.ts';
import { tellRelyingParties } from './logout-notices.ts';
import { hashPassword } from './passwords.ts';
import { checkPassword, type PasswordContext, type PasswordPolicy } from './password-policy.ts';
import { optionalText, requiredText } from './text.ts';

/** The unit of work (Store.transaction) in which a use case changes several rows together. */
export type UnitOfWork = Pick<Store, 'transaction'>;

export interface UserDeps extends UnitOfWork {
  users: UserStore;
  organizations: OrganizationStore;
  groups: GroupStore;
  clock: Clock;
  random: Random;
  /** GATEHOUSE_PASSWORD_MIN_LENGTH's policy; the default one when omitted (password-policy.ts). */
  passwordPolicy?: PasswordPolicy | undefined;
}

/**
 * What changing a user's access touches: the user, and in one unit of work their SSO sessions,
 * those sessions' codes and their tokens.
 */
export interface UserAccessDeps extends UnitOfWork {
  users: UserStore;
  clock: Clock;
  passwordPolicy?: PasswordPolicy | undefined;
}

export interface NewUser {
  username: string;
  /** Omitted: the user cannot log in with a password until one is set. */
  password?: string;
  status?: UserStatus;
  email?: string;
  /**
   * The administrator's explicit word that `email` reaches the user (docs/email-verification.md):
   * without it a new user's address is unverified until a verification link is followed (AM51).
   */
  emailVerified?: boolean;
  givenName?: string;
  familyName?: string;
  organizationId?: string;
  /** Names of existing groups to add the user to. */
  groups?: string[];
  attributes?: Attributes;
}

/**
 * Loose (RFC 5321 allows much; the only proof of an address is a mail that arrives), but never
 * the specials of RFC 5322 §3.2.3 — `( ) < > [ ] : ; , \ "` — outside a quoted local part, which
 * gatehouse does not accept: a mail library reads them as display names, groups and comments, so
 * `a<postmaster>x@allowed.example` would pass a domain rule and be delivered to `postmaster`.
 */
const EMAIL = /^[^\s@()<>[\]:;,\\"]+@[^\s@()<>[\]:;,\\".]+(\.[^\s@()<>[\]:;,\\".]+)*$/;

/** `authority` decides whether `groups` may name an administrator group (administrators.ts). */
export async function createUser(deps: UserDeps, input: NewUser, authority: Authority): Promise<User> {
  const username = requiredText(input.username, 'username');
  const status = userStatus(input.status ?? 'enabled');
  const givenName = optionalText(input.givenName, 'givenName');
  const familyName = optionalText(input.familyName, 'familyName');
  const email = checkedEmail(input.email);
  const emailVerified = checkedEmailVerified(input.emailVerified, email) ?? false;
  const password = input.password === undefined ? undefined : checkedPassword(input.password, { username, email }, deps.passwordPolicy);
  const organizationId = optionalText(input.organizationId, 'organizationId');
  const groupNames = input.groups ?? [];
  const inGroup = (name: string) => `creating a user in the group ${JSON.stringify(name)}`;
  // Checked here to refuse before the password is hashed, and again in the unit of work.
  for (const group of await Promise.all(groupNames.map((name) => requireGroup(deps, name)))) requireReachOfGroup(authority, group, inGroup(group.name));
  const passwordHash = password === undefined ? undefined : await hashPassword(password);

  const now = deps.clock.now();
  // The id is drawn in the unit of work (newUserId); this is the rest of the user.
  const fields: Omit<User, 'id'> = {
    username,
    status,
    givenName,
    familyName,
    email,
    emailVerified,
    organizationId,
    attributes: input.attributes ?? {},
    createdAt: now,
    updatedAt: now,
  };
  // The user, their organization's check and their memberships in one unit of work: never a user
  // without the groups asked for (a group deleted meanwhile fails the whole creation).
  let user: User;
  try {
    user = await deps.transaction(async (tx) => {
      // Read in the unit: an organization made virtual meanwhile cannot take the user.
      if (organizationId !== undefined) await requireUserOrganization(tx, organizationId);
      const created: User = { id: await newUserId(tx, deps.random), ...fields };
      await tx.users.insert(created, passwordHash);
      for (const name of groupNames) {
        const group = await requireGroup(tx, name);
        requireReachOfGroup(authority, group, inGroup(group.name));
        await tx.groups.addMember(group.id, created.id);
      }
      return created;
    });
  } catch (error) {
    if (error instanceof ConflictError) throw new IdentityError('already_exists', `a user named ${JSON.stringify(username)} already exists (usernames compare case-insensitively)`, 'username');
    if (error instanceof MissingReferenceError) throw new IdentityError('invalid_reference', `organization ${JSON.stringify(organizationId)} does not exist`, 'organizationId');
    throw error;
  }
  return user;
}

/** How many ids newUserId draws before it gives up: a random UUID that is a client_id is a broken random source. */
const USER_ID_DRAWS = 3;

/**
 * A new user's id: a random UUID that is no client's client_id, read in the caller's unit of work
 * that inserts the user. A user's tokens carry the user's id as `sub`, a client's own tokens its
 * client_id (RFC 9068 §2.2), so the two sets of ids must stay apart (RFC 9068 §5); an import can
 * choose a client_id, and registerClient checks the other way round in its own unit, so of a
 * client and a user racing for one id exactly one gets it, on every instance.
 */
export async function newUserId(tx: Pick<StoreTransaction, 'clients'>, random: Pick<Random, 'uuid'>): Promise<string> {
  for (let draw = 1; ; draw++) {
    const id = random.uuid();
    if ((await tx.clients.get(id)) === undefined) return id;
    if (draw >= USER_ID_DRAWS) throw new IdentityError('inconsistent', `the user id ${JSON.stringify(id)} drawn is a client's client_id; the random source repeats itself`);
  }
}

/** A user by id or, failing that, by username (case-insensitively). */
export async function getUser(deps: { users: UserStore }, idOrUsername: string): Promise<User> {
  const key = idOrUsername.trim();
  const user = (isUuid(key) ? await deps.users.get(key.toLowerCase()) : undefined) ?? (key === '' ? undefined : await deps.users.getByUsername(key));
  if (!user) throw new IdentityError('not_found', `no user has the id or username ${JSON.stringify(idOrUsername)}`);
  return user;
}

/** The matching users' profiles, without custom attributes (`getUser` reads one user whole). */
export async function listUsers(deps: { users: UserStore }, query: UserQuery = {}): Promise<UserProfile[]> {
  return deps.users.list(query);
}

/** The matching users' ids only: what the identity API's listings answer. */
export async function listUserIds(deps: { users: UserStore }, query: UserQuery = {}): Promise<string[]> {
  return deps.users.listIds(query);
}

/**
 * Sets a user's password (an operator's or the identity API's act) and, in the same unit of work,
 * ends the user's SSO sessions and revokes their tokens: a password is reset because the old one
 * may be known to someone else, whose sessions must not outlive it (issue 10, finding 3).
 */
export async function setPassword(deps: UserAccessDeps, idOrUsername: string, password: string, authority: Authority): Promise<User> {
  const user = await getUser(deps, idOrUsername);
  const passwordHash = await hashCheckedPassword(password, { username: user.username, email: user.email }, deps.passwordPolicy);
  const now = deps.clock.now();
  await deps.transaction(async (tx) => {
    await requireReachOfUser(tx, authority, user.id, `setting the password of ${user.username}`);
    if (!(await tx.users.setPasswordHash(user.id, passwordHash, now))) throw gone(idOrUsername);
    await endUserSessions(tx, user.id, now);
  });
  return user;
}

/**
 * Sets the password a reset link allows (src/oauth/account/password-reset.ts), inside the caller's
 * unit of work: only while the user's password hash is still `expected` (one conditional UPDATE:
 * a change made meanwhile wins and this one is refused, AM42), then ends the user's sessions and
 * revokes their tokens as setPassword does. The new password passes the same rules
 * (checkedPassword) and the same argon2id hashing (hashCheckedPassword) as every other way of setting one.
 * Returns how many sessions ended, or undefined when the password had changed.
 */
export async function replacePassword(tx: Pick<StoreTransaction, 'users' | 'sessions' | 'codes' | 'tokens' | 'sessionClients' | 'clients' | 'outbox'>, userId: string, expected: string | undefined, passwordHash: string, now: number): Promise<number | undefined> {
  if (!(await tx.users.replacePasswordHash(userId, expected, passwordHash, now))) return undefined;
  return endUserSessions(tx, userId, now);
}

/** The argon2id hash of a password that passed the rules (checkedPassword): what setPassword stores. */
export async function hashCheckedPassword(password: unknown, context: PasswordContext, policy: PasswordPolicy | undefined): Promise<string> {
  return hashPassword(checkedPassword(password, context, policy));
}

/**
 * Enables, disables or locks a user. Any status but `enabled` also ends the user's SSO
 * sessions and revokes the tokens issued in them: a disabled user keeps no access.
 */
export async function setStatus(deps: UserAccessDeps, idOrUsername: string, status: UserStatus, authority: Authority): Promise<User> {
  const wanted = userStatus(status);
  const key = (await getUser(deps, idOrUsername)).id;
  const now = deps.clock.now();
  // Read and written in one unit: a concurrent change of the user's other fields is not undone,
  // and the administrators' rules are checked against the members as they are when it commits.
  return deps.transaction(async (tx) => {
    const current = await tx.users.get(key);
    if (!current) throw gone(idOrUsername);
    await requireReachOfUser(tx, authority, current.id, `changing the status of ${current.username}`);
    if (wanted !== 'enabled') await keepAnAdministrator(tx, authority.groups, current.id, `disabling ${current.username}`);
    const user: User = { ...current, status: wanted, updatedAt: now };
    if (!(await tx.users.update(user))) throw gone(idOrUsername);
    if (user.status !== 'enabled') await endUserSessions(tx, user.id, now);
    return user;
  });
}

/** Deletes a user, first ending their SSO sessions and revoking the tokens issued in them. */
export async function deleteUser(deps: UserAccessDeps, idOrUsername: string, authority: Authority): Promise<User> {
  const user = await getUser(deps, idOrUsername);
  const now = deps.clock.now();
  await deps.transaction(async (tx) => {
    await requireReachOfUser(tx, authority, user.id, `deleting ${user.username}`);
    await keepAnAdministrator(tx, authority.groups, user.id, `deleting ${user.username}`);
    await endUserSessions(tx, user.id, now);
    if (!(await tx.users.delete(user.id))) throw gone(idOrUsername);
  });
  return user;
}

/**
 * Ends every SSO session of a user, spends those sessions' unredeemed codes and revokes every
 * token of the user — also refresh tokens whose session has long expired, which re-enabling the
 * user would otherwise bring back. Returns how many sessions ended. Runs inside the caller's unit
 * of work, with the change that calls for it.
 */
export async function endUserSessions(tx: Pick<StoreTransaction, 'sessions' | 'codes' | 'tokens' | 'sessionClients' | 'clients' | 'outbox'>, userId: string, now: number): Promise<number> {
  const sessionIndexes = await tx.sessions.endAllOfUser(userId);
  for (const sessionIndex of sessionIndexes) await tx.codes.consumeBySession(sessionIndex, now);
  // Back-Channel Logout 1.0: the relying parties of every session ended are told (logout-notices.ts);
  // no browser is at hand to tell the front-channel ones.
  await tellRelyingParties(tx, userId, sessionIndexes, now);
  await tx.tokens.revokeByUser(userId, now);
  return sessionIndexes.length;
}

/**
 * A password that passes the password policy (password-policy.ts, NIST SP 800-63B-4 §3.1.1.2):
 * long enough, not too long, not a common password, not the user's username or e-mail address
 * (`context`). Throws PasswordRefused (invalid_argument, field `password`) otherwise. The one
 * check every front end's way of choosing a password goes through.
 */
export function checkedPassword(password: unknown, context: PasswordContext, policy: PasswordPolicy | undefined): string {
  return checkPassword(password, context, policy);
}

export function userStatus(value: unknown): UserStatus {
  if (!(USER_STATUSES as readonly unknown[]).includes(value)) throw new IdentityError('invalid_argument', `status must be one of ${USER_STATUSES.join(', ')}`, 'status');
  return value as UserStatus;
}

/** The organization exists and is not virtual (a virtual organization holds no users). */
export async function requireUserOrganization(deps: Pick<UserDeps, 'organizations'>, id: string): Promise<void> {
  const organization = await deps.organizations.get(id);
  if (!organization) throw new IdentityError('invalid_reference', `organization ${JSON.stringify(id)} does not exist`, 'organizationId');
  if (organization.virtual) throw new IdentityError('invalid_argument', `organization ${JSON.stringify(organization.technicalName)} is virtual and holds no users`, 'organizationId');
}

async function requireGroup(deps: Pick<UserDeps, 'groups'>, name: string) {
  const group = await deps.groups.getByName(name);
  if (!group) throw new IdentityError('invalid_reference', `group ${JSON.stringify(name)} does not exist`, 'groups');
  return group;
}

/** An optional email address, trimmed; throws invalid_argument when it is not one. */
export function checkedEmail(value: unknown): string | undefined {
  const email = optionalText(value, 'email');
  if (email !== undefined && !EMAIL.test(email)) throw new IdentityError('invalid_argument', `email ${JSON.stringify(email)} is not an email address`, 'email');
  return email;
}

/**
 * An administrator's explicit `emailVerified` (undefined: not said), checked against the address
 * it would be said of: true for no address is refused (AM51), as is anything but a boolean.
 */
export function checkedEmailVerified(value: unknown, email: string | undefined): boolean | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'boolean') throw new IdentityError('invalid_argument', 'emailVerified must be true or false', 'emailVerified');
  if (value && email === undefined) throw new IdentityError('invalid_argument', 'emailVerified cannot be true for a user with no email address', 'emailVerified');
  return value;
}

function gone(idOrUsername: string): IdentityError {
  return new IdentityError('not_found', `user ${JSON.stringify(idOrUsername)} no longer exists`);
}
