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
import { answerPasskeySecondFactor, passkeySecondFactorOptions } from '../authorize/passkey-sign-in.ts';
import { startBrowserSession } from '../authorize/verify-credentials.ts';
import type { OAuthDeps } from '../deps.ts';
import { FactorInputError } from '../factors/enrolment.ts';
import { finishPasskeyRegistration, startPasskeyRegistration } from '../factors/passkey.ts';
import { ACCOUNT_BINDING, ACCOUNT_CLIENT_ID, type Account, type AccountSignIn } from './security.ts';

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
