/**
 * Changing a user with CustomerID's update rule (REST API 2.0, "Update user"): the attributes
 * given replace the stored ones, an empty value deletes one, and the rest stay. The same checks
 * as createUser apply, and a status other than `enabled` ends the user's access as setStatus does.
 */
import type { User, UserStatus } from '../domain/user.ts';
import type { Clock } from '../lib/clock.ts';
import { ConflictError, MissingReferenceError, type CodeStore, type OrganizationStore, type SessionStore, type TokenStore, type UserStore } from '../storage/ports.ts';
import { applyAttributeChanges, type AttributeChanges } from './attributes.ts';
import { IdentityError } from './errors.ts';
import { hashPassword } from './passwords.ts';
import { optionalText, requiredText } from './text.ts';
import { checkedEmail, checkedPassword, endUserSessions, getUser, requireUserOrganization, userStatus } from './users.ts';

export interface UserChangeDeps {
  users: UserStore;
  organizations: OrganizationStore;
  sessions: SessionStore;
  codes: CodeStore;
  tokens: TokenStore;
  clock: Clock;
}

export interface UserChanges {
  username?: string;
  /** null (for any optional field) clears it. */
  givenName?: string | null;
  familyName?: string | null;
  email?: string | null;
  organizationId?: string | null;
  status?: UserStatus;
  password?: string;
  attributes?: AttributeChanges;
}

export async function updateUser(deps: UserChangeDeps, idOrUsername: string, changes: UserChanges): Promise<User> {
  const current = await getUser(deps, idOrUsername);
  const username = changes.username === undefined ? current.username : requiredText(changes.username, 'username');
  const status = changes.status === undefined ? current.status : userStatus(changes.status);
  const givenName = changes.givenName === undefined ? current.givenName : optionalText(changes.givenName, 'givenName');
  const familyName = changes.familyName === undefined ? current.familyName : optionalText(changes.familyName, 'familyName');
  const email = changes.email === undefined ? current.email : checkedEmail(changes.email);
  const organizationId = changes.organizationId === undefined ? current.organizationId : optionalText(changes.organizationId, 'organizationId');
  if (organizationId !== undefined && organizationId !== current.organizationId) await requireUserOrganization(deps, organizationId);
  const attributes = changes.attributes === undefined ? current.attributes : applyAttributeChanges(current.attributes, changes.attributes);
  const passwordHash = changes.password === undefined ? undefined : await hashPassword(checkedPassword(changes.password));

  const now = deps.clock.now();
  const next: User = { ...current, username, status, givenName, familyName, email, organizationId, attributes, updatedAt: now };
  try {
    if (!(await deps.users.update(next))) throw gone(idOrUsername);
  } catch (error) {
    if (error instanceof ConflictError) throw new IdentityError('already_exists', `a user named ${JSON.stringify(username)} already exists (usernames compare case-insensitively)`, 'username');
    if (error instanceof MissingReferenceError) throw new IdentityError('invalid_reference', `organization ${JSON.stringify(organizationId)} does not exist`, 'organizationId');
    throw error;
  }
  if (passwordHash !== undefined && !(await deps.users.setPasswordHash(current.id, passwordHash, now))) throw gone(idOrUsername);
  // A user who may no longer log in keeps no access either (as setStatus).
  if (changes.status !== undefined && status !== 'enabled') await endUserSessions(deps, current.id);
  return next;
}

function gone(idOrUsername: string): IdentityError {
  return new IdentityError('not_found', `user ${JSON.stringify(idOrUsername)} no longer exists`);
}
