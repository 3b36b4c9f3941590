/**
 * Passkeys at the login page (issue 24; docs/authorization.md, "Signing in with a passkey"):
 *
 * - Username-less: "Sign in with a passkey" (or the browser's autofill, conditional mediation).
 *   The authenticator offers its discoverable credentials; the credential and its user handle
 *   name the user (WebAuthn L3 §7.2 steps 6–7). A user who may not sign in (disabled, locked) is
 *   refused as a password sign-in is. The session's amr is the passkey's (`hwk` or `swk`) and
 *   `mfa` (SA63): a passkey with user verification is two factors. Not throttled as passwords
 *   are: a signature cannot be guessed, and each try costs the attacker a challenge (SA67).
 * - As the second factor after a password: the assertion must be of the held sign-in's user
 *   (allowCredentials lists theirs, and the credential must be one), counted by the throttle as
 *   codes are (kind `second_factor`), and the session's amr is ['pwd', hwk|swk, 'mfa'].
 *
 * Either way the sign-in then goes through exactly what a password sign-in does (login.ts,
 * signedIn): the session, the policy, consent, the code. Each ceremony's challenge is bound to
 * what it answers: the authorization request (username-less) or the held sign-in (SA64).
 */
import type { PublicKeyCredentialRequestOptionsJSON } from '@simplewebauthn/server';
import type { UserProfile } from '../../domain/user.ts';
import { hashSecret } from '../../lib/hash.ts';
import type { OAuthDeps } from '../deps.ts';
import { startPasskeyAssertion, verifyPasskeyAssertion } from '../factors/passkey.ts';
import { MFA_AMR, throttledFactorUse } from '../factors/verify.ts';
import { addressGroup, counterKey } from '../throttling/keys.ts';
import { afterSecondFactor, hintMismatch, requestBinding, signedIn, type SecondFactorOutcome, type SignedIn } from './login.ts';
import type { AuthorizationRequest } from './request.ts';
import { answerHeldSignIn, findHeldSignIn, type HeldFor, type SecondFactorStep } from './second-factor.ts';

/** What a second-factor ceremony's challenge answers: this very held sign-in (its cookie's hash), never another. */
function heldBinding(idHash: string): string {
  return hashSecret(`passkey second factor\n${idHash}`);
}

/** The fixed window of GATEHOUSE_PASSKEY_SIGN_INS_PER_ADDRESS (seconds). */
const PASSKEY_SIGN_IN_WINDOW = 60;

/** The options of a username-less sign-in for this authorization request; `throttled` when the address used its budget. */
export async function passkeySignInOptions(deps: OAuthDeps, request: AuthorizationRequest, ip?: string): Promise<PublicKeyCredentialRequestOptionsJSON | { type: 'throttled'; retryAfter: number }> {
  return passkeySignInChallenge(deps, requestBinding(request), ip);
}

/**
 * The options of a username-less sign-in whose challenge answers `binding` (an authorization
 * request, or the account page's sign-in): one budget per client address for every page that
 * offers it, so a second page adds no rows to what one address can make (AM109).
 */
export async function passkeySignInChallenge(deps: OAuthDeps, binding: string, ip?: string): Promise<PublicKeyCredentialRequestOptionsJSON | { type: 'throttled'; retryAfter: number }> {
  // Each ceremony stores a challenge and needs no credential: a fixed-window budget per client
  // address (RateLimitStore.take, one atomic statement; IPv6 by /64) bounds the rows one address
  // can make, as device authorizations are bounded (SA67).
  const limit = deps.config.passkeySignInsPerAddress;
  if (ip !== undefined && limit > 0) {
    const now = deps.clock.now();
    const counted = await deps.store.rateLimits.take([{ key: counterKey('passkey-sign-in-ip', addressGroup(ip)), limit }], now, now + PASSKEY_SIGN_IN_WINDOW * 1000);
    if (counted.length === 0) return { type: 'throttled', retryAfter: PASSKEY_SIGN_IN_WINDOW };
  }
  return startPasskeyAssertion(deps, 'sign_in', binding);
}

/** `refused`: the assertion was not right, or names a user who may not sign in: the login page again. */
export type PasskeySignInOutcome = SignedIn | { type: 'refused' };

/** A username-less sign-in's assertion, for a request validated again from scratch. */
export async function loginWithPasskey(deps: OAuthDeps, request: AuthorizationRequest, response: unknown, previousCookie: string | undefined, ip?: string): Promise<PasskeySignInOutcome> {
  try {
    const clientId = request.client.clientId;
    const user = await passkeyUser(deps, requestBinding(request), response, clientId, ip);
    if (user.type === 'refused') return user;
    if (request.hintedSubject !== undefined && request.hintedSubject !== user.profile.id) return hintMismatch(deps, request, user.profile, ip);
    return await signedIn(deps, request, user.profile, user.amr, previousCookie, ip);
  } catch (error) {
    return { type: 'error', target: request.target, error };
  }
}

/**
 * The user a username-less assertion proves, with the amr it gives, or `refused`. Audited: a use
 * as `factor.verified`, a wrong one of a known credential as `factor.failed`, an unknown
 * credential as `login.failed` (unknown_user), a user who may not sign in as `login.failed` (not_enabled).
 */
export async function passkeyUser(deps: OAuthDeps, binding: string, response: unknown, clientId: string, ip: string | undefined): Promise<{ type: 'ok'; profile: UserProfile; amr: string[] } | { type: 'refused' }> {
  const checked = await verifyPasskeyAssertion(deps, 'sign_in', binding, { response });
  const userId = checked.type === 'ok' ? checked.passkey.factor.userId : checked.userId;
  const profile = userId === undefined ? undefined : await deps.store.users.getProfile(userId);
  if (profile === undefined) {
    deps.audit.emit({ event: 'login.failed', reason: 'unknown_user', clientId, ip });
    return { type: 'refused' };
  }
  const context = { userId: profile.id, username: profile.username, clientId, ip };
  if (checked.type !== 'ok') {
    deps.audit.emit({ event: 'factor.failed', ...context });
    return { type: 'refused' };
  }
  // As a password sign-in (verify-credentials.ts): a disabled or locked user signs in no further.
  if (profile.status !== 'enabled') {
    deps.audit.emit({ event: 'login.failed', reason: 'not_enabled', ...context });
    return { type: 'refused' };
  }
  deps.audit.emit({ event: 'factor.verified', ...context, kind: 'passkey', factorId: checked.passkey.factor.id });
  return { type: 'ok', profile, amr: [...checked.amr, MFA_AMR] };
}

/** The options of the second step of a held sign-in: its user's passkeys only; undefined when nothing is held for this request. */
export async function passkeySecondFactorOptions(deps: OAuthDeps, held: HeldFor): Promise<PublicKeyCredentialRequestOptionsJSON | undefined> {
  const found = await findHeldSignIn(deps, held);
  if (found === undefined) return undefined;
  return startPasskeyAssertion(deps, 'second_factor', heldBinding(found.idHash), found.user.id);
}

/** The second step of a held sign-in by a passkey: throttled as codes are; the assertion must be of the held user's passkey. */
export async function answerPasskeySecondFactor(deps: OAuthDeps, held: HeldFor, response: unknown, ip: string | undefined): Promise<SecondFactorStep> {
  return answerHeldSignIn(deps, held, (user, found) =>
    throttledFactorUse(deps, { userId: user.id, username: user.username, ip: ip ?? 'unknown', clientId: held.clientId }, async () => {
      const checked = await verifyPasskeyAssertion(deps, 'second_factor', heldBinding(found.idHash), { response, userId: user.id });
      return checked.type === 'ok' ? { kind: 'passkey', factorId: checked.passkey.factor.id, amr: checked.amr } : undefined;
    }),
  );
}

/** The login page's second step by a passkey, for a request validated again from scratch: as loginWithSecondFactor, with an assertion for the code. */
export async function loginWithPasskeySecondFactor(deps: OAuthDeps, request: AuthorizationRequest, response: unknown, pendingCookie: string | undefined, previousCookie: string | undefined, ip?: string): Promise<SecondFactorOutcome> {
  try {
    const step = await answerPasskeySecondFactor(deps, { cookieValue: pendingCookie, clientId: request.client.clientId, binding: requestBinding(request) }, response, ip);
    if (step.type === 'refused') return { type: 'second_factor_refused' };
    if (step.type !== 'ok') return step;
    return await afterSecondFactor(deps, request, step, previousCookie, ip);
  } catch (error) {
    return { type: 'error', target: request.target, error };
  }
}

/** The options of the login page's passkey step, for the sign-in held for this very request; undefined when none is. */
export async function loginPasskeySecondFactorOptions(deps: OAuthDeps, request: AuthorizationRequest, pendingCookie: string | undefined): Promise<PublicKeyCredentialRequestOptionsJSON | undefined> {
  return passkeySecondFactorOptions(deps, { cookieValue: pendingCookie, clientId: request.client.clientId, binding: requestBinding(request) });
}
