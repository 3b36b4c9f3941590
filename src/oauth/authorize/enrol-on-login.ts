/**
 * Enrolment required by a level (issue 24, item 2): a user without a second factor, whose sign-in
 * a required level (the client's policy, an essential acr) needs to be `multi`, is led through
 * adding an authenticator app (or a passkey, enrol-passkey-on-login.ts) after the password, before anything is issued. The sign-in is held
 * as for a second factor (second-factor.ts, the pending cookie); the started enrolment's secret
 * waits in the page with a proof, an HMAC-SHA256 keyed by the pending cookie's value over the
 * user, the secret and the deadline (as the account page's, SA52, keyed by its own cookie): only
 * this browser's held sign-in can confirm it, and nothing is stored until a code from the app
 * verifies (confirmTotpEnrolment). Decision SA87.
 *
 * `enrolmentChoices` says which factors a user may enrol to reach the level: an authenticator app
 * (here) or a passkey (enrol-passkey-on-login.ts), each its own answer on the page.
 */
import { createHmac } from 'node:crypto';
import type { Factor, FactorKind } from '../../domain/factor.ts';
import type { UserProfile } from '../../domain/user.ts';
import { constantTimeEqual, hashSecret } from '../../lib/hash.ts';
import type { OAuthDeps } from '../deps.ts';
import { confirmTotpEnrolment, FactorInputError, startTotpEnrolment, type TotpEnrolment } from '../factors/enrolment.ts';
import { amrOfFactor } from '../factors/registry.ts';
import { otpauthUri, qrSvg, totpIssuer } from '../factors/totp.ts';
import { meets, type Requirement } from '../levels.ts';
import { PENDING_SIGN_IN_SECONDS, signInBinding } from './second-factor.ts';

/** A started enrolment as the page carries it (`expiresAt` ms, as text in the form). */
export interface LoginEnrolment extends TotpEnrolment {
  expiresAt: number;
  proof: string;
}

/**
 * The kinds of factor a user without one may enrol on the login path to meet `requirement`, in
 * the order the page offers them: an authenticator app's use adds `otp` and `mfa`, which meets
 * `multi` only; a passkey's adds `hwk` or `swk` and `mfa` (RFC 8176 §2), which meets every level
 * when device-bound: which one it is shows only once it is registered, so for `phrh` a synced one
 * still leaves the level unmet (enrol-passkey-on-login.ts; decision SA121). None: the level
 * stays out of reach (unmet_authentication_requirements).
 */
export function enrolmentChoices(requirement: Requirement, amr: readonly string[]): FactorKind[] {
  const choices: FactorKind[] = [];
  if (meets(requirement, [...amr, 'otp', 'mfa'])) choices.push('totp');
  if (meets(requirement, [...amr, 'hwk', 'mfa'])) choices.push('passkey');
  return choices;
}

/**
 * What a sign-in held for enrolment answers: the request, as requestBinding (login.ts) has it,
 * marked as an enrolment's, so a sign-in held for a second factor (the user has one, and proved
 * only the password) can never be used to enrol another factor, nor an enrolment's to skip one.
 */
export function enrolmentBinding(requestBinding: string): string {
  return signInBinding('authorize', `enrolment\n${requestBinding}`);
}

/** A fresh secret for the held sign-in of `pendingCookie`; it lives as long as the held sign-in may. */
export async function startLoginEnrolment(deps: Pick<OAuthDeps, 'config' | 'clock'>, pendingCookie: string, user: UserProfile): Promise<LoginEnrolment> {
  const started = await startTotpEnrolment(deps, user.username);
  const expiresAt = deps.clock.now() + PENDING_SIGN_IN_SECONDS * 1000;
  return { ...started, expiresAt, proof: proofOf(pendingCookie, user.id, started.secret, expiresAt) };
}

export interface CarriedEnrolment {
  secret: string;
  expiresAt: string;
  proof: string;
  code: string;
}

export type EnrolmentAnswer = { type: 'enrolled'; user: UserProfile; amr: string[] } | { type: 'wrong_code'; enrolment: LoginEnrolment } | { type: 'expired' };

/**
 * Confirms the enrolment of the sign-in held by `pendingCookie` for this request (`binding`): the
 * proof must hold for this held sign-in's user and not be past its deadline; a right code stores
 * the factor, then the held sign-in is taken (one conditional delete), and the user goes on with
 * amr `["pwd", "otp", "mfa"]`: they proved the password and now hold the app's secret.
 */
export async function confirmLoginEnrolment(deps: OAuthDeps, held: { cookieValue: string | undefined; clientId: string; binding: string }, carried: CarriedEnrolment): Promise<EnrolmentAnswer> {
  const { cookieValue } = held;
  if (cookieValue === undefined || !/^[A-Za-z0-9_-]{43}$/.test(cookieValue)) return { type: 'expired' };
  const idHash = hashSecret(cookieValue);
  const pending = await deps.store.pendingSignIns.find(idHash, deps.clock.now());
  if (pending?.clientId !== held.clientId || pending.binding !== held.binding) return { type: 'expired' };
  const user = await deps.store.users.getProfile(pending.userId);
  if (user?.status !== 'enabled') return { type: 'expired' };
  if (!/^\d{1,16}$/.test(carried.expiresAt) || carried.secret.length > 128) return { type: 'expired' };
  const expiresAt = Number(carried.expiresAt);
  if (!constantTimeEqual(proofOf(cookieValue, user.id, carried.secret, expiresAt), carried.proof) || expiresAt <= deps.clock.now()) return { type: 'expired' };
  const again = async (): Promise<EnrolmentAnswer> => {
    const uri = otpauthUri(totpIssuer(deps.config), user.username, carried.secret);
    return { type: 'wrong_code', enrolment: { secret: carried.secret, uri, qrSvg: await qrSvg(uri), expiresAt, proof: carried.proof } };
  };
  if (carried.code.length > 64) return again();
  // One unit of work: the held sign-in is taken (one conditional DELETE) and the factor stored
  // together, so two confirmations posted at once store one factor and go on once; a wrong code
  // rolls the take back and the sign-in stays held for another try.
  let outcome: { type: 'enrolled'; factor: Factor } | { type: 'wrong_code' } | { type: 'expired' };
  try {
    outcome = await deps.store.transaction(async (tx) => {
      if (!(await tx.pendingSignIns.take(idHash, deps.clock.now()))) return { type: 'expired' as const };
      const confirmed = await confirmTotpEnrolment({ ...deps, store: tx }, user.id, { secret: carried.secret, code: carried.code });
      if (confirmed.type === 'wrong_code') throw new WrongCode();
      return confirmed;
    });
  } catch (error) {
    if (error instanceof WrongCode) outcome = { type: 'wrong_code' };
    else if (error instanceof FactorInputError) return { type: 'expired' };
    else throw error;
  }
  if (outcome.type === 'wrong_code') return again();
  if (outcome.type === 'expired') return outcome;
  // RFC 8176 §2: what the password proved, then what a use of the new factor adds, and `mfa`.
  return { type: 'enrolled', user, amr: [...new Set([...pending.amr, ...amrOfFactor(outcome.factor), 'mfa'])] };
}

/** Thrown inside the confirmation's unit of work to roll back the held sign-in's take. */
class WrongCode extends Error {}

const PROOF_LABEL = 'gatehouse login totp enrolment v1';

function proofOf(pendingCookie: string, userId: string, secret: string, expiresAt: number): string {
  return createHmac('sha256', pendingCookie).update([PROOF_LABEL, userId, secret, String(expiresAt)].join('\u0000')).digest('base64url');
}
