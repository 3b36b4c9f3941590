import type { FactorKind } from '../../domain/factor.ts';
import type { UserProfile } from '../../domain/user.ts';
import { dummyVerify, hashPassword, needsRehash, verifyPassword } from '../../identity/passwords.ts';
import { tellRelyingParties } from '../../identity/logout-notices.ts';
import { fingerprint, type LoginFailureReason } from '../../observability/audit.ts';
import type { OAuthDeps } from '../deps.ts';
import { acrClaim } from '../levels.ts';
import { isLookupKey } from '../lookup-key.ts';
import { factorsOf } from '../factors/verify.ts';
import { findSession, newSession, type NewSession } from '../sessions.ts';
import { passwordAbandoned, passwordFailed, passwordSucceeded, reservePasswordAttempt } from '../throttling/password-attempts.ts';

/** Longer input is no username we could have; it is still answered after a verification's time. */
const MAX_USERNAME = 256;

/**
 * The outcome of a password check. `user` on a failure is the account the typed name matched, if
 * any: for the audit log only, never for the answer. On success, `passwordHash` is the hash the
 * password was verified against (or upgraded to): a caller that acts later, in its own unit of
 * work, can tell whether the password has changed since.
 */
export type CredentialCheck =
  | { ok: true; user: UserProfile; passwordHash: string }
  | { ok: false; reason: LoginFailureReason; user: UserProfile | undefined };

/**
 * The password check itself. Every failure (unknown user, wrong password, a user who is pending,
 * disabled or locked) gets the same answer from the caller after the same work, one argon2
 * verification, so neither the answer nor its timing tells which usernames exist (OWASP
 * Authentication Cheat Sheet). A hash made with older parameters is upgraded on success.
 * Callers go through `checkPasswordLogin`, which puts it under the throttle.
 */
export async function verifyCredentials(deps: Pick<OAuthDeps, 'store' | 'clock'>, username: string, password: string): Promise<CredentialCheck> {
  const credentials = isLookupKey(username, MAX_USERNAME) ? await deps.store.users.getCredentials(username) : undefined;
  if (!credentials) {
    await dummyVerify(password);
    return { ok: false, reason: 'unknown_user', user: undefined };
  }
  const matches = await verifyPassword(credentials.passwordHash, password);
  if (!matches || credentials.passwordHash === undefined) return { ok: false, reason: 'wrong_password', user: credentials.user };
  if (credentials.user.status !== 'enabled') return { ok: false, reason: 'not_enabled', user: credentials.user };
  if (needsRehash(credentials.passwordHash)) {
    const upgraded = await hashPassword(password);
    const { id } = credentials.user;
    const verified = credentials.passwordHash;
    // The upgrade replaces the hash only if it is still the one just verified, in one unit of work:
    // a new password set meanwhile (an administrator's reset) must not be overwritten by the old one.
    const replaced = await deps.store.transaction(async (tx) => {
      const current = await tx.users.getCredentials(username);
      if (current?.user.id !== id || current.passwordHash !== verified) return false;
      return tx.users.setPasswordHash(id, upgraded, deps.clock.now());
    });
    return { ok: true, user: credentials.user, passwordHash: replaced ? upgraded : verified };
  }
  return { ok: true, user: credentials.user, passwordHash: credentials.passwordHash };
}

/**
 * Where a password was typed: a browser's sign-in form (the authorization endpoint's login page,
 * or the device flow's user-code page, RFC 8628 §3.3), or a client's resource owner password
 * grant (RFC 6749 §4.3).
 */
export type PasswordLoginVia = 'login_form' | 'password_grant';

export interface PasswordLoginAttempt {
  username: string;
  password: string;
  /** The client the user signs in to: the authorization request's, or the grant's authenticated client. */
  clientId: string;
  ip: string | undefined;
  via: PasswordLoginVia;
}

/**
 * `ok`: the password was right and it is all the user has: sign them in. `second_factor`: the
 * password was right, but the user has a second factor (src/oauth/factors) and nothing may be
 * issued until it is given: a browser holds the sign-in (second-factor.ts), a client without one
 * (the password grant) is refused. `failed`: the generic failure; `throttled`: refused, or failed
 * and now made to wait `retryAfter` seconds.
 */
export type PasswordLogin =
  | { type: 'ok'; user: UserProfile; passwordHash: string }
  /** `kinds`: which kinds of factor the user has (the page asks first for an authenticator's code when there is one). */
  | { type: 'second_factor'; user: UserProfile; passwordHash: string; kinds: FactorKind[] }
  | { type: 'failed' }
  | { type: 'throttled'; retryAfter: number };

/** What a right password proves (RFC 8176 §2): the amr of a password-only sign-in, and the start of one with a second factor. */
export const PASSWORD_AMR: readonly string[] = ['pwd'];

/**
 * The one credential-verification step of every password sign-in: the login form, the device
 * flow's user-code page and the password grant all call it, so all get exactly the same checks,
 * throttle, lockout and audit (issue 23: a rule added here, such as a second factor, holds for
 * every way in). The
 * attempt is reserved before the password is checked (src/oauth/throttling/password-attempts.ts:
 * concurrent guesses cannot all pass a check made before any of them failed), under the login
 * form's counters — a guess through the grant counts against the same username, address and pair
 * as one through the form. A failure is audited (`login.failed`) and counted; a success clears
 * the username's failures. The caller emits `login.succeeded` once it has acted on the success.
 * A user with a second factor is answered `second_factor` instead of `ok` (issue 24), so no way
 * in can forget to ask for it: a caller that only handles `ok` issues nothing.
 */
export async function checkPasswordLogin(deps: OAuthDeps, attempt: PasswordLoginAttempt): Promise<PasswordLogin> {
  const { clientId, ip } = attempt;
  // The login form's events stay as they were; the grant's say where they came from.
  const via = attempt.via === 'login_form' ? {} : { via: attempt.via };
  const gate = await reservePasswordAttempt(deps, { kind: 'login', username: attempt.username, ip });
  if (!gate.open) {
    deps.audit.emit({ event: 'login.throttled', by: gate.by, retryAfter: gate.retryAfter, clientId, ...via, ip });
    return { type: 'throttled', retryAfter: gate.retryAfter };
  }
  const { reservation } = gate;
  const check = await verifyCredentials(deps, attempt.username, attempt.password).catch(async (error: unknown) => {
    await passwordAbandoned(deps, reservation).catch(() => undefined);
    throw error;
  });
  if (!check.ok) {
    const account = check.user === undefined ? {} : { userId: check.user.id, username: check.user.username };
    deps.audit.emit({ event: 'login.failed', reason: check.reason, ...account, clientId, ...via, ip });
    const retryAfter = await passwordFailed(deps, reservation, { ...account, clientId });
    return retryAfter > 0 ? { type: 'throttled', retryAfter } : { type: 'failed' };
  }
  await passwordSucceeded(deps, reservation);
  // Asked only after a right password: whether a user has a second factor is told to no one else.
  const factors = await factorsOf(deps, check.user.id);
  if (factors.length === 0) return { type: 'ok', user: check.user, passwordHash: check.passwordHash };
  return { type: 'second_factor', user: check.user, passwordHash: check.passwordHash, kinds: [...new Set(factors.map((factor) => factor.kind))] };
}

export interface BrowserSignIn {
  /** The user checkPasswordLogin answered `ok` for, or the second factor completed the sign-in of (second-factor.ts). */
  user: UserProfile;
  /** The methods the user proved (RFC 8176 §2): PASSWORD_AMR, or with a second factor e.g. `["pwd", "otp", "mfa"]`. */
  amr: readonly string[];
  /** The client the user signs in to (for the audit event). */
  clientId: string;
  /** The acr of the sign-in for the authorization request (levels.ts acrClaim); none on the device and account pages: the strongest level met. */
  acr?: string | undefined;
  ip: string | undefined;
}

/**
 * A browser's sign-in, once checkPasswordLogin answered `ok` (or the second factor completed what
 * it answered `second_factor` for): the login form and the device flow's user-code page share it.
 * One browser, one session: the new SSO session (with the `amr` proved, RFC 8176 §2) replaces the
 * browser's previous one, which ends (its tokens stay valid; only logout revokes them), in one
 * unit of work with what the replacement means for the previous session's relying parties (LO4,
 * LO14); then `login.succeeded` names the new session.
 */
export async function startBrowserSession(deps: Pick<OAuthDeps, 'config' | 'store' | 'clock' | 'random' | 'audit'>, signIn: BrowserSignIn, previousCookie: string | undefined): Promise<NewSession> {
  const { user, clientId, ip } = signIn;
  const previous = await findSession(deps, previousCookie);
  // Without a request's own choice (the device and account pages), the strongest level the amr meets (levels.ts).
  const acr = signIn.acr ?? acrClaim(deps.config.levels, [], signIn.amr);
  const started = newSession(deps, { userId: user.id, amr: [...signIn.amr], acr });
  if (previous === undefined) await deps.store.sessions.insert(started.session);
  else {
    await deps.store.transaction(async (tx) => {
      await tx.sessions.insert(started.session);
      // Ended meanwhile (a logout in another tab): that end told its relying parties already.
      if ((await tx.sessions.end(previous.idHash)) === undefined) return;
      // The same user again in this browser (a step-up, a sign-in after max_age): the relying
      // parties of the session replaced are told when this one ends, by the sid they know (LO4).
      if (previous.userId === user.id) await tx.sessionClients.move(previous.sessionIndex, started.session.sessionIndex);
      // Another user signing in where this one's session was (a shared computer): the previous
      // user's relying parties must not keep them signed in in this browser (LO14).
      else await tellRelyingParties(tx, previous.userId, [previous.sessionIndex], deps.clock.now());
    });
  }
  deps.audit.emit({ event: 'login.succeeded', userId: user.id, username: user.username, clientId, session: fingerprint(started.session.sessionIndex), ip });
  return started;
}
