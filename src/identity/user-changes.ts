/**
 * Changing a user with CustomerID's update rule (REST API 2.0, "Update user"): the attributes
 * given replace the stored ones, an empty value deletes one, and the rest stay. The same checks
 * as createUser apply, and a status other than `enabled` ends the user's access as setStatus does.
 * A changed e-mail address is unverified unless the same change says otherwise (AM51), and the
 * user's pending verification links die with the old address.
 */
import type { User, UserStatus } from '../domain/user.ts';
import type { Clock } from '../lib/clock.ts';
import { ConflictError, MissingReferenceError, type OrganizationStore, type UserStore } from '../storage/ports.ts';
import { keepAnAdministrator, requireReachOfUser, type Authority } from './administrators.ts';
import { applyAttributeChanges, type AttributeChanges } from './attributes.ts';
import { IdentityError } from './errors.ts';
import { hashPassword } from './passwords.ts';
import type { PasswordPolicy } from './password-policy.ts';
import { optionalText, requiredText } from './text.ts';
import { checkedEmail, checkedEmailVerified, checkedPassword, endUserSessions, getUser, requireUserOrganization, userStatus, type UnitOfWork } from './users.ts';

export interface UserChangeDeps extends UnitOfWork {
  users: UserStore;
  organizations: OrganizationStore;
  clock: Clock;
  passwordPolicy?: PasswordPolicy | undefined;
}

export interface UserChanges {
  username?: string;
  /** null (for any optional field) clears it. */
  givenName?: string | null;
  familyName?: string | null;
  email?: string | null;
  /** The administrator's explicit word on the address (as it is after this change); omitted: kept while the address is unchanged, false when it changes (AM51). */
  emailVerified?: boolean;
  organizationId?: string | null;
  status?: UserStatus;
  password?: string;
  attributes?: AttributeChanges;
}

export async function updateUser(deps: UserChangeDeps, idOrUsername: string, changes: UserChanges, authority: Authority): Promise<User> {
  const found = await getUser(deps, idOrUsername);
  const id = found.id;
  // Hashed before the unit of work: argon2 must not hold SQLite's write lock. The context words
  // are the username and address the user will have after the change (password-policy.ts).
  const context = {
    username: typeof changes.username === 'string' ? changes.username : found.username,
    email: typeof changes.email === 'string' ? changes.email : changes.email === null ? undefined : found.email,
  };
  const passwordHash = changes.password === undefined ? undefined : await hashPassword(checkedPassword(changes.password, context, deps.passwordPolicy));
  const now = deps.clock.now();
  let username = changes.username;
  let organizationId = changes.organizationId ?? undefined;
  // One unit of work: the user is read and written in it, so a concurrent change of other fields
  // is not undone, and the fields, the password and the end of the user's access commit
  // together. A new password or a status that forbids logging in ends the user's sessions and
  // revokes their tokens (as setPassword and setStatus do).
  try {
    return await deps.transaction(async (tx) => {
      const current = await tx.users.get(id);
      if (!current) throw gone(idOrUsername);
      // The administrators' rules, against the members as they are in this unit (administrators.ts).
      await requireReachOfUser(tx, authority, id, `changing ${current.username}`);
      username = changes.username === undefined ? current.username : requiredText(changes.username, 'username');
      const status = changes.status === undefined ? current.status : userStatus(changes.status);
      if (changes.status !== undefined && status !== 'enabled') await keepAnAdministrator(tx, authority.groups, id, `disabling ${current.username}`);
      const givenName = changes.givenName === undefined ? current.givenName : optionalText(changes.givenName, 'givenName');
      const familyName = changes.familyName === undefined ? current.familyName : optionalText(changes.familyName, 'familyName');
      const email = changes.email === undefined ? current.email : checkedEmail(changes.email);
      const emailChanged = email !== current.email;
      const emailVerified = checkedEmailVerified(changes.emailVerified, email) ?? (emailChanged ? false : current.emailVerified);
      organizationId = changes.organizationId === undefined ? current.organizationId : optionalText(changes.organizationId, 'organizationId');
      if (organizationId !== undefined && organizationId !== current.organizationId) await requireUserOrganization(tx, organizationId);
      const attributes = changes.attributes === undefined ? current.attributes : applyAttributeChanges(current.attributes, changes.attributes);
      const next: User = { ...current, username, status, givenName, familyName, email, emailVerified, organizationId, attributes, updatedAt: now };
      if (!(await tx.users.update(next))) throw gone(idOrUsername);
      // A link sent for the old address (or to change it) no longer fits: the conditional confirmEmail would refuse it anyway.
      if (emailChanged) await tx.emailVerifications.deleteOfUser(id);
      if (passwordHash !== undefined && !(await tx.users.setPasswordHash(id, passwordHash, now))) throw gone(idOrUsername);
      if (passwordHash !== undefined || (changes.status !== undefined && status !== 'enabled')) await endUserSessions(tx, id, now);
      return next;
    });
  } catch (error) {
    if (error instanceof ConflictError) throw new IdentityError('already_exists', `a user named ${JSON.stringify(username)} already exists (usernames compare case-insensitively)`, 'username');
    if (error instanceof MissingReferenceError) throw new IdentityError('invalid_reference', `organization ${JSON.stringify(organizationId)} does not exist`, 'organizationId');
    throw error;
  }
}

function gone(idOrUsername: string): IdentityError {
  return new IdentityError('not_found', `user ${JSON.stringify(idOrUsername)} no longer exists`);
}
