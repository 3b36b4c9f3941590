/**
 * Passkeys on the account security page (issue 24; docs/second-factors.md, "Passkeys"): adding
 * one needs a recent sign-in, as every change there does (security.ts, SA51); its ceremony's
 * challenge is bound to the browser's session (SA64), so a registration answers the session that
 * asked for it. Signing in to the page with a password and then a passkey is the login page's
 * second step (passkey-sign-in.ts) for the sign-in this page holds.
 */
import type { PublicKeyCredentialCreationOptionsJSON, PublicKeyCredentialRequestOptionsJSON } from '@simplewebauthn/server';
import type { Factor } from '../../domain/factor.ts';
import { hashSecret } from '../../lib/hash.ts';
import { answerPasskeySecondFactor, passkeySecondFactorOptions, passkeySignInChallenge, passkeyUser } from '../authorize/passkey-sign-in.ts';
import { signInBinding } from '../authorize/second-factor.ts';
import { startBrowserSession } from '../authorize/verify-credentials.ts';
import type { OAuthDeps } from '../deps.ts';
import { FactorInputError } from '../factors/enrolment.ts';
import { finishPasskeyRegistration, startPasskeyRegistration } from '../factors/passkey.ts';
import { accountOf, ACCOUNT_BINDING, ACCOUNT_CLIENT_ID, type Account, type AccountSignIn } from './security.ts';

/** What a registration's challenge answers: this session (its cookie's hash), never another browser's. */
function registrationBinding(account: Account): string {
  return hashSecret(`passkey registration\n${account.cookieValue}`);
}

/** The options of a new passkey's registration for the account's user (needs a recent sign-in). */
export async function startAccountPasskey(deps: OAuthDeps, account: Account): Promise<PublicKeyCredentialCreationOptionsJSON | { type: 'reauthenticate' }> {
  if (!account.fresh) return { type: 'reauthenticate' };
  return startPasskeyRegistration(deps, account.user, registrationBinding(account));
}

export type AddedPasskey = { type: 'enrolled'; factor: Factor } | { type: 'refused' } | { type: 'bad_name' } | { type: 'reauthenticate' };

/** Stores the passkey the browser registered, named `name` (needs a recent sign-in). */
export async function finishAccountPasskey(deps: OAuthDeps, account: Account, input: { response: unknown; name: string }): Promise<AddedPasskey> {
  if (!account.fresh) return { type: 'reauthenticate' };
  try {
    return await finishPasskeyRegistration(deps, account.user.id, registrationBinding(account), input);
  } catch (error) {
    if (error instanceof FactorInputError) return { type: 'bad_name' };
    throw error;
  }
}

const held = (pendingCookie: string | undefined) => ({ cookieValue: pendingCookie, clientId: ACCOUNT_CLIENT_ID, binding: ACCOUNT_BINDING });

/** The options of the passkey step of this page's held sign-in; undefined when nothing is held. */
export async function accountPasskeyOptions(deps: OAuthDeps, pendingCookie: string | undefined): Promise<PublicKeyCredentialRequestOptionsJSON | undefined> {
  return passkeySecondFactorOptions(deps, held(pendingCookie));
}

/** The passkey step of this page's sign-in, then a new session (as secondFactorForAccount). */
export async function passkeyForAccount(deps: OAuthDeps, input: { response: unknown; pendingCookie: string | undefined; previousCookie: string | undefined; ip: string | undefined }): Promise<Exclude<AccountSignIn, { type: 'failed' | 'second_factor' }>> {
  const step = await answerPasskeySecondFactor(deps, held(input.pendingCookie), input.response, input.ip);
  if (step.type === 'refused') return { type: 'second_factor_refused' };
  if (step.type !== 'ok') return step;
  const started = await startBrowserSession(deps, { user: step.user, amr: step.amr, clientId: ACCOUNT_CLIENT_ID, ip: input.ip }, input.previousCookie);
  return { type: 'signed_in', cookieValue: started.cookieValue };
}

/**
 * What a username-less sign-in of the account page answers: that page's sign-in only, never an
 * authorization request's (whose challenges are bound to the request, login.ts requestBinding).
 */
export const ACCOUNT_PASSKEY_BINDING = signInBinding('account', 'passkey sign-in');

/** The options of the account page's "Sign in with a passkey": the login page's (one budget per address, AM109). */
export async function accountPasskeySignInOptions(deps: OAuthDeps, ip: string | undefined): Promise<PublicKeyCredentialRequestOptionsJSON | { type: 'throttled'; retryAfter: number }> {
  return passkeySignInChallenge(deps, ACCOUNT_PASSKEY_BINDING, ip);
}

/**
 * The account page's username-less sign-in (AM108): the passkey names the user, checked and
 * audited as at the login page (passkeyUser), then the session as the page's password sign-in
 * makes it (startBrowserSession, a new cookie; amr the passkey's and `mfa`), so it is recent for
 * the page's changes. With a session (confirming it is you before a change), the passkey must be
 * the session's user's: as the password form takes the session's username, confirming cannot
 * switch to another account (AM110).
 */
export async function passkeySignInToAccount(deps: OAuthDeps, input: { response: unknown; previousCookie: string | undefined; ip: string | undefined }): Promise<{ type: 'signed_in'; cookieValue: string } | { type: 'refused' }> {
  const { ip } = input;
  const proved = await passkeyUser(deps, ACCOUNT_PASSKEY_BINDING, input.response, ACCOUNT_CLIENT_ID, ip);
  if (proved.type === 'refused') return proved;
  const current = await accountOf(deps, input.previousCookie);
  if (current !== undefined && current.user.id !== proved.profile.id) {
    // The session is the hint here: the login page's event for a correct sign-in of another user than the one named.
    deps.audit.emit({ event: 'login.hint_mismatch', userId: proved.profile.id, username: proved.profile.username, clientId: ACCOUNT_CLIENT_ID, ip });
    return { type: 'refused' };
  }
  const started = await startBrowserSession(deps, { user: proved.profile, amr: proved.amr, clientId: ACCOUNT_CLIENT_ID, ip }, input.previousCookie);
  return { type: 'signed_in', cookieValue: started.cookieValue };
}
