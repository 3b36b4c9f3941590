/**
 * A passkey enrolled on the login path (issue 24, item 2; decision SA120): a user without a
 * second factor, whose sign-in a required level needs a passkey for (`phr`, `phrh`) or a second
 * factor of any kind (`multi`), creates a passkey after the password, before anything is issued.
 * The sign-in is held as for the authenticator app (enrol-on-login.ts, the pending cookie, its
 * enrolment binding); the registration ceremony is passkey.ts's, its challenge bound to this very
 * held sign-in (its cookie's hash, SA64), so only this browser's held sign-in can finish it.
 *
 * The registration is made with user verification (SA62), so its user proved the new passkey as a
 * sign-in with it would: the sign-in goes on with what the password proved, the passkey's `hwk` or
 * `swk`, and `mfa` (RFC 8176 §2), as the app's enrolment goes on with `otp` (SA87). A synced
 * passkey for a level that needs a device-bound one (`phrh`) is kept (it is the user's, and meets
 * `phr`), but the level is still unmet: the sign-in stays held, nothing is issued, and the page
 * says so (SA121).
 */
import type { PublicKeyCredentialCreationOptionsJSON } from '@simplewebauthn/server';
import type { UserProfile } from '../../domain/user.ts';
import { hashSecret } from '../../lib/hash.ts';
import type { OAuthDeps } from '../deps.ts';
import { finishPasskeyRegistration, startPasskeyRegistration } from '../factors/passkey.ts';
import { amrOfFactor } from '../factors/registry.ts';
import { meets, type Requirement } from '../levels.ts';
import { findHeldSignIn, type HeldFor } from './second-factor.ts';

/** The held sign-in an enrolment answers: its cookie, the client, and the enrolment binding (enrol-on-login.ts enrolmentBinding). */
export type HeldEnrolment = HeldFor;

/** What the registration's challenge answers: this held sign-in (its cookie's hash), never another. */
function registrationBinding(idHash: string): string {
  return hashSecret(`passkey login enrolment\n${idHash}`);
}

/** The options of a new passkey's registration for the held sign-in's user; undefined when nothing is held for this request. */
export async function loginPasskeyEnrolmentOptions(deps: OAuthDeps, held: HeldEnrolment): Promise<PublicKeyCredentialCreationOptionsJSON | undefined> {
  const found = await findHeldSignIn(deps, held);
  if (found === undefined) return undefined;
  return startPasskeyRegistration(deps, found.user, registrationBinding(found.idHash));
}

/**
 * `enrolled`: the passkey is stored and the held sign-in taken; sign `user` in with `amr`.
 * `refused`: the registration was not accepted (nothing stored; the sign-in still held).
 * `not_device_bound`: stored, but synced, and `requirement` needs a device-bound one (the sign-in
 * still held). `expired`: nothing held for this request.
 */
export type PasskeyEnrolmentAnswer = { type: 'enrolled'; user: UserProfile; amr: string[] } | { type: 'refused' | 'not_device_bound'; user: UserProfile } | { type: 'expired' };

/** Finishes the registration of the sign-in held for this request, for the level `requirement` it was asked for. */
export async function confirmLoginPasskey(deps: OAuthDeps, held: HeldEnrolment, requirement: Requirement | undefined, response: unknown): Promise<PasskeyEnrolmentAnswer> {
  const found = await findHeldSignIn(deps, held);
  if (found === undefined) return { type: 'expired' };
  const registered = await finishPasskeyRegistration(deps, found.user.id, registrationBinding(found.idHash), { response });
  if (registered.type === 'refused') return { type: 'refused', user: found.user };
  // RFC 8176 §2: what the password proved, then what a use of the new passkey adds, and `mfa`.
  const amr = [...new Set([...found.pending.amr, ...amrOfFactor(registered.factor), 'mfa'])];
  if (requirement !== undefined && !meets(requirement, amr)) return { type: 'not_device_bound', user: found.user };
  if (!(await deps.store.pendingSignIns.take(found.idHash, deps.clock.now()))) return { type: 'expired' };
  return { type: 'enrolled', user: found.user, amr };
}
