/**
 * The second step of a browser sign-in (issue 24): the password was right, the user has a second
 * factor, and nothing is issued until it is given. The login page and the device flow's user-code
 * page share these steps as they share checkPasswordLogin and startBrowserSession
 * (verify-credentials.ts; test/http/sign-in-parity.test.ts).
 *
 * The half-finished sign-in is a store row (PendingSignInStore; docs/decisions.md SA20): the
 * browser holds only a random value (256 bits) in a cookie, the row its SHA-256, the user, the
 * amr proved so far and what it answers (`binding`: the authorization request, or the device's
 * user code), for PENDING_SIGN_IN_SECONDS. It serves only the request it was made for, starts at
 * most one session (taken by one conditional DELETE once the factor is right), and expires.
 */
import type { FactorKind } from '../../domain/factor.ts';
import type { PendingSignIn } from '../../domain/pending-sign-in.ts';
import type { UserProfile } from '../../domain/user.ts';
import { hashSecret } from '../../lib/hash.ts';
import type { OAuthDeps } from '../deps.ts';
import { sendSignInCode, type EmailCodeSent } from '../factors/email-code.ts';
import { verifySecondFactor, type SecondFactorResult } from '../factors/verify.ts';
import type { MailLocale } from '../outbox/mail.ts';

/**
 * How long the second factor may take after the password (seconds): long enough to unlock a phone
 * and open the authenticator app, short enough that a password typed on a shared computer and
 * abandoned is soon worth nothing. At most 5 minutes (issue 24).
 */
export const PENDING_SIGN_IN_SECONDS = 300;

/** Cookie values we issue are 43 base64url characters; anything else is not worth a lookup. */
const COOKIE_VALUE = /^[A-Za-z0-9_-]{43}$/;

/** What a pending sign-in answers: a purpose and the request's own words, hashed (never stored in the clear). */
export function signInBinding(purpose: 'authorize' | 'device' | 'account', request: string): string {
  return hashSecret(`${purpose}\n${request}`);
}

export interface HeldSignIn {
  user: UserProfile;
  clientId: string;
  /** signInBinding of the request the sign-in answers. */
  binding: string;
  /** The methods proved so far: PASSWORD_AMR. */
  amr: readonly string[];
  ip: string | undefined;
}

/** Holds a sign-in whose password was right until its second factor is given; the value for the browser's cookie. */
export async function holdSignIn(deps: Pick<OAuthDeps, 'store' | 'clock' | 'random' | 'audit'>, held: HeldSignIn): Promise<string> {
  const now = deps.clock.now();
  deps.audit.emit({ event: 'login.second_factor_required', userId: held.user.id, username: held.user.username, clientId: held.clientId, ip: held.ip });
  const cookieValue = deps.random.token(32);
  await deps.store.pendingSignIns.insert({
    idHash: hashSecret(cookieValue),
    userId: held.user.id,
    clientId: held.clientId,
    binding: held.binding,
    amr: [...held.amr],
    createdAt: now,
    expiresAt: now + PENDING_SIGN_IN_SECONDS * 1000,
  });
  return cookieValue;
}

export interface SecondFactorAnswer {
  /** The pending sign-in's cookie value, if the browser sent one. */
  cookieValue: string | undefined;
  clientId: string;
  binding: string;
  /** The code as typed: an authenticator's code or a recovery code (the factors' registry tells which). */
  code: string;
  ip: string | undefined;
  /** The kinds of factor the held sign-in may use (found: the held sign-in); undefined: any of the user's. */
  kinds?: (found: FoundSignIn) => Promise<readonly FactorKind[] | undefined>;
}

/**
 * `ok`: the factor was right and the pending sign-in is used up; sign `user` in with `amr`.
 * `refused`: a wrong or used code (the sign-in still waits). `throttled`: not checked (the same
 * throttle rules as passwords, src/oauth/factors/verify.ts). `expired`: no pending sign-in for this
 * request (none, expired, another request's, or already used): the password must be typed again.
 */
export type SecondFactorStep = { type: 'ok'; user: UserProfile; amr: string[] } | { type: 'refused' } | { type: 'throttled'; retryAfter: number } | { type: 'expired' };

/**
 * Checks the second factor of a held sign-in. The row is read first only to learn whose factor to
 * check; the sign-in goes on only if the one conditional `take` that follows a right code wins
 * (two right codes sent at once with one cookie start one session, not two).
 */
export async function answerSecondFactor(deps: OAuthDeps, answer: SecondFactorAnswer): Promise<SecondFactorStep> {
  return answerHeldSignIn(deps, answer, async (user, found) => {
    const kinds = await answer.kinds?.(found);
    return verifySecondFactor(deps, { userId: user.id, username: user.username, code: answer.code, ip: answer.ip ?? 'unknown', clientId: answer.clientId, ...(kinds === undefined ? {} : { kinds }) });
  });
}

/** A held sign-in found by the browser's cookie value, for this client and binding, of a user who may still sign in. */
export interface FoundSignIn {
  idHash: string;
  pending: PendingSignIn;
  user: UserProfile;
}

/** A held sign-in's identity: the browser's cookie, and the client and binding it was held for. */
export interface HeldFor {
  cookieValue: string | undefined;
  clientId: string;
  binding: string;
}

/** The live sign-in held for this request (none: expired, used, another request's, or its user may no longer sign in). Only reads. */
export async function findHeldSignIn(deps: Pick<OAuthDeps, 'store' | 'clock'>, held: HeldFor): Promise<FoundSignIn | undefined> {
  const { cookieValue, clientId } = held;
  if (cookieValue === undefined || !COOKIE_VALUE.test(cookieValue)) return undefined;
  const idHash = hashSecret(cookieValue);
  const pending = await deps.store.pendingSignIns.find(idHash, deps.clock.now());
  // Held for another request (another tab's, another client's): it serves only its own.
  if (pending?.clientId !== clientId || pending.binding !== held.binding) return undefined;
  const user = await deps.store.users.getProfile(pending.userId);
  // A user disabled, locked or deleted since the password was checked signs in no further.
  if (user?.status !== 'enabled') return undefined;
  return { idHash, pending, user };
}

/**
 * The second step of a held sign-in, whatever proves it: `verify` checks the factor of the held
 * user (a code, or a passkey's assertion); the sign-in goes on only if the conditional `take`
 * that follows a right factor wins.
 */
export async function answerHeldSignIn(
  deps: OAuthDeps,
  held: { cookieValue: string | undefined; clientId: string; binding: string },
  verify: (user: UserProfile, found: FoundSignIn) => Promise<SecondFactorResult>,
): Promise<SecondFactorStep> {
  const found = await findHeldSignIn(deps, held);
  if (found === undefined) return { type: 'expired' };
  const { idHash, pending, user } = found;
  const verified = await verify(user, found);
  if (verified.type !== 'ok') return verified;
  if (!(await deps.store.pendingSignIns.take(idHash, deps.clock.now()))) return { type: 'expired' };
  // RFC 8176 §2: what the password proved, then what the factor adds (its method's values and `mfa`).
  const amr = [...pending.amr, ...verified.amr.filter((value) => !pending.amr.includes(value))];
  return { type: 'ok', user, amr };
}

/** What asking for an e-mail code on the second factor's page gives: sent (or refused, emailCodeMethod's rules), `none` (the user has no e-mail factor), or `expired` (nothing held). */
export type HeldSignInCode = EmailCodeSent | { type: 'none' } | { type: 'expired' };

/**
 * "Send a code by e-mail" on the second factor's page (login, device, account): a sign-in code to
 * the e-mail factor of the user whose sign-in this browser holds for this request. Only reads the
 * held sign-in (the code is checked later, as any code, by answerSecondFactor).
 */
export async function sendHeldSignInCode(deps: OAuthDeps, held: HeldFor, options: { locale: MailLocale; ip: string | undefined }): Promise<HeldSignInCode> {
  const found = await findHeldSignIn(deps, held);
  if (found === undefined) return { type: 'expired' };
  return sendSignInCode(deps, found.user, options);
}
