import type { UserProfile } from '../../domain/user.ts';
import { InvalidGrant } from '../errors.ts';

/** The grant's user as read (undefined: deleted), if it may still use the grant. */
export function activeUser(user: UserProfile | undefined): UserProfile {
  if (!user || user.status !== 'enabled') throw new InvalidGrant('The grant is no longer valid.', { detail: user ? `user is ${user.status}` : 'user deleted' });
  return user;
}
