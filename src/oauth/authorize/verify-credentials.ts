import type { User } from '../../domain/user.ts';
import { dummyVerify, hashPassword, needsRehash, verifyPassword } from '../../identity/passwords.ts';
import type { OAuthDeps } from '../deps.ts';
import { isLookupKey } from '../lookup-key.ts';

/** Longer input is no username we could have; it is still answered after a verification's time. */
const MAX_USERNAME = 256;

/**
 * The password check of the login form. Every failure (unknown user, wrong password, a user who
 * is pending, disabled or locked) answers the same `undefined` after the same work, one argon2
 * verification, so neither the answer nor its timing tells which usernames exist (OWASP
 * Authentication Cheat Sheet). A hash made with older parameters is upgraded on success.
 */
export async function verifyCredentials(deps: Pick<OAuthDeps, 'store' | 'clock'>, username: string, password: string): Promise<User | undefined> {
  const credentials = isLookupKey(username, MAX_USERNAME) ? await deps.store.users.getCredentials(username) : undefined;
  if (!credentials) {
    await dummyVerify(password);
    return undefined;
  }
  const matches = await verifyPassword(credentials.passwordHash, password);
  if (!matches || credentials.user.status !== 'enabled') return undefined;
  if (credentials.passwordHash !== undefined && needsRehash(credentials.passwordHash)) {
    await deps.store.users.setPasswordHash(credentials.user.id, await hashPassword(password), deps.clock.now());
  }
  return credentials.user;
}
