import type { UserProfile } from '../../domain/user.ts';
import { dummyVerify, hashPassword, needsRehash, verifyPassword } from '../../identity/passwords.ts';
import type { LoginFailureReason } from '../../observability/audit.ts';
import type { OAuthDeps } from '../deps.ts';
import { isLookupKey } from '../lookup-key.ts';

/** Longer input is no username we could have; it is still answered after a verification's time. */
const MAX_USERNAME = 256;

/**
 * The outcome of a password check. `user` on a failure is the account the typed name matched, if
 * any: for the audit log only, never for the answer.
 */
export type CredentialCheck = { ok: true; user: UserProfile } | { ok: false; reason: LoginFailureReason; user: UserProfile | undefined };

/**
 * The password check of the login form. Every failure (unknown user, wrong password, a user who
 * is pending, disabled or locked) gets the same answer from the caller after the same work, one
 * argon2 verification, so neither the answer nor its timing tells which usernames exist (OWASP
 * Authentication Cheat Sheet). A hash made with older parameters is upgraded on success.
 */
export async function verifyCredentials(deps: Pick<OAuthDeps, 'store' | 'clock'>, username: string, password: string): Promise<CredentialCheck> {
  const credentials = isLookupKey(username, MAX_USERNAME) ? await deps.store.users.getCredentials(username) : undefined;
  if (!credentials) {
    await dummyVerify(password);
    return { ok: false, reason: 'unknown_user', user: undefined };
  }
  const matches = await verifyPassword(credentials.passwordHash, password);
  if (!matches) return { ok: false, reason: 'wrong_password', user: credentials.user };
  if (credentials.user.status !== 'enabled') return { ok: false, reason: 'not_enabled', user: credentials.user };
  if (credentials.passwordHash !== undefined && needsRehash(credentials.passwordHash)) {
    await deps.store.users.setPasswordHash(credentials.user.id, await hashPassword(password), deps.clock.now());
  }
  return { ok: true, user: credentials.user };
}
