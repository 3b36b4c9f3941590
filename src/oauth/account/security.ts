/**
 * The account security page's use cases (issue 24; docs/second-factors.md, "Self-service"): the
 * user of a browser's SSO session sees their second factors and changes them. The HTTP layer
 * (src/http/interaction/account-routes.ts) only renders what these decide.
 *
 * Signing in here is the login page's sign-in, not a copy of it (decisions SA50):
 * checkPasswordLogin, the held sign-in and its second factor (second-factor.ts), then
 * startBrowserSession, which replaces the browser's session (a new cookie: no fixation). Every
 * change needs a recent sign-in (`GATEHOUSE_ACCOUNT_REAUTH_WINDOW`, SA51): an older session is
 * answered `reauthenticate` and the page asks for the password (and the factor) again.
 */
import { createHmac } from 'node:crypto';
import type { Factor, FactorKind } from '../../domain/factor.ts';
import type { SsoSession } from '../../domain/session.ts';
import type { UserProfile } from '../../domain/user.ts';
import { constantTimeEqual } from '../../lib/hash.ts';
import { answerSecondFactor, holdSignIn, sendHeldSignInCode, signInBinding, type HeldSignInCode } from '../authorize/second-factor.ts';
import type { MailLocale } from '../outbox/mail.ts';
import { confirmEmailEnrolment, startEmailEnrolment, type EmailEnrolmentConfirm, type EmailEnrolmentStart } from '../factors/email-code.ts';
import { checkPasswordLogin, PASSWORD_AMR, startBrowserSession } from '../authorize/verify-credentials.ts';
import type { OAuthDeps } from '../deps.ts';
import { confirmTotpEnrolment, FactorInputError, regenerateRecoveryCodes, startTotpEnrolment, type TotpEnrolment } from '../factors/enrolment.ts';
import { otpauthUri, qrSvg, totpIssuer } from '../factors/totp.ts';
import { removeUserFactor, renameUserFactor } from '../factors/changes.ts';
import { factorSummaries, type FactorSummary } from '../factors/verify.ts';
import { findUsableSession } from '../sessions.ts';

/**
 * What the page's sign-ins name as their client in audit events and pending sign-ins: no client
 * asked for them (SA50). Not a registered client; its pending sign-ins are bound to this page.
 */
export const ACCOUNT_CLIENT_ID = 'gatehouse:account';

/** What a sign-in held by this page answers: this page only, never an authorization request or a device. */
export const ACCOUNT_BINDING = signInBinding('account', 'security');

/** How long a started TOTP enrolment may be confirmed (seconds): time to install an app and scan. */
export const TOTP_ENROLMENT_SECONDS = 600;

/** A factor as the page lists it; `codesLeft`: for recovery codes, how many are unused. */
export type AccountFactor = FactorSummary;

/** The signed-in user of a browser, their factors, and whether their sign-in is recent enough to change them. */
export interface Account {
  session: SsoSession;
  /** The session cookie's value: what a started enrolment is bound to (SA52). */
  cookieValue: string;
  user: UserProfile;
  factors: AccountFactor[];
  fresh: boolean;
}

/** The browser's account, or undefined without a usable session (or for a user who may no longer sign in). */
export async function accountOf(deps: Pick<OAuthDeps, 'config' | 'store' | 'clock'>, cookieValue: string | undefined): Promise<Account | undefined> {
  const session = await findUsableSession(deps, cookieValue);
  if (session === undefined || cookieValue === undefined) return undefined;
  const user = await deps.store.users.getProfile(session.userId);
  if (user?.status !== 'enabled') return undefined;
  const factors = await factorSummaries(deps.store, user.id);
  const fresh = deps.clock.now() - session.authTime <= deps.config.accountReauthWindow * 1000;
  return { session, cookieValue, user, factors, fresh };
}

/**
 * `signed_in`: the new session's cookie. `second_factor`: the page asks for a code, the sign-in
 * held for this page (`pendingCookie`). `second_factor_refused`: a wrong or used code, still held.
 * `expired`: nothing held for this page: the password again.
 */
export type AccountSignIn =
  | { type: 'signed_in'; cookieValue: string }
  | { type: 'second_factor'; pendingCookie: string; kinds: FactorKind[] }
  | { type: 'second_factor_refused' }
  | { type: 'expired' }
  | { type: 'failed' }
  | { type: 'throttled'; retryAfter: number };

/**
 * The password step. With a session (signing in again before a change), the username is the
 * session's user's, never the form's: signing in again cannot switch to another account here.
 */
export async function signInToAccount(deps: OAuthDeps, input: { username: string; password: string; previousCookie: string | undefined; ip: string | undefined }): Promise<Exclude<AccountSignIn, { type: 'second_factor_refused' | 'expired' }>> {
  const { ip } = input;
  const current = await accountOf(deps, input.previousCookie);
  const username = current?.user.username ?? input.username;
  const check = await checkPasswordLogin(deps, { username, password: input.password, clientId: ACCOUNT_CLIENT_ID, ip, via: 'login_form' });
  if (check.type === 'failed' || check.type === 'throttled') return check;
  if (check.type === 'second_factor') {
    const pendingCookie = await holdSignIn(deps, { user: check.user, clientId: ACCOUNT_CLIENT_ID, binding: ACCOUNT_BINDING, amr: PASSWORD_AMR, ip });
    return { type: 'second_factor', pendingCookie, kinds: check.kinds };
  }
  const started = await startBrowserSession(deps, { user: check.user, amr: PASSWORD_AMR, clientId: ACCOUNT_CLIENT_ID, ip }, input.previousCookie);
  return { type: 'signed_in', cookieValue: started.cookieValue };
}

/** The second factor's page's "Send a code by e-mail", for this page's held sign-in. */
export async function emailCodeForAccount(deps: OAuthDeps, input: { pendingCookie: string | undefined; locale: MailLocale; ip: string | undefined }): Promise<HeldSignInCode> {
  return sendHeldSignInCode(deps, { cookieValue: input.pendingCookie, clientId: ACCOUNT_CLIENT_ID, binding: ACCOUNT_BINDING }, { locale: input.locale, ip: input.ip });
}

/** The second factor's step of this page's sign-in: the login page's (answerSecondFactor), then a new session. */
export async function secondFactorForAccount(deps: OAuthDeps, input: { code: string; pendingCookie: string | undefined; previousCookie: string | undefined; ip: string | undefined }): Promise<Exclude<AccountSignIn, { type: 'failed' | 'second_factor' }>> {
  const { ip } = input;
  const step = await answerSecondFactor(deps, { cookieValue: input.pendingCookie, clientId: ACCOUNT_CLIENT_ID, binding: ACCOUNT_BINDING, code: input.code, ip });
  if (step.type === 'refused') return { type: 'second_factor_refused' };
  if (step.type !== 'ok') return step;
  const started = await startBrowserSession(deps, { user: step.user, amr: step.amr, clientId: ACCOUNT_CLIENT_ID, ip }, input.previousCookie);
  return { type: 'signed_in', cookieValue: started.cookieValue };
}

/** A started TOTP enrolment as the page carries it: the secret, when it expires, and the proof that this server made both for this session (SA52). */
export interface StartedTotp extends TotpEnrolment {
  expiresAt: number;
  proof: string;
}

/**
 * Starts an authenticator app's enrolment (needs a recent sign-in). Nothing is stored: the page
 * carries the secret, and `proof`, an HMAC-SHA256 keyed by the session cookie's value over the
 * user, the secret and the deadline, binds it to this session and this server (SA52).
 */
export async function startAccountTotp(deps: Pick<OAuthDeps, 'config' | 'clock'>, account: Account): Promise<StartedTotp | { type: 'reauthenticate' }> {
  if (!account.fresh) return { type: 'reauthenticate' };
  const started = await startTotpEnrolment(deps, account.user.username);
  const expiresAt = deps.clock.now() + TOTP_ENROLMENT_SECONDS * 1000;
  return { ...started, expiresAt, proof: enrolmentProof(account, started.secret, expiresAt) };
}

/** The TOTP enrolment shown again (after a wrong code): the same secret, its QR code and proof, if the proof holds. */
export async function resumeAccountTotp(deps: Pick<OAuthDeps, 'config' | 'clock'>, account: Account, carried: { secret: string; expiresAt: string; proof: string }): Promise<StartedTotp | undefined> {
  const expiresAt = provenDeadline(deps, account, carried);
  if (expiresAt === undefined) return undefined;
  const uri = otpauthUri(totpIssuer(deps.config), account.user.username, carried.secret);
  return { secret: carried.secret, uri, qrSvg: await qrSvg(uri), expiresAt, proof: carried.proof };
}

export type ConfirmedTotp = { type: 'enrolled'; factor: Factor } | { type: 'wrong_code' } | { type: 'expired' };

/**
 * Stores the started factor if `code` is the app's code now. `expired`: the proof does not hold
 * (another session's, another user's, altered, or past its deadline): the enrolment starts again.
 * No recent sign-in is asked for here: the proof was made under one, for this session only.
 */
export async function confirmAccountTotp(deps: OAuthDeps, account: Account, carried: { secret: string; expiresAt: string; proof: string; code: string }): Promise<ConfirmedTotp> {
  if (provenDeadline(deps, account, carried) === undefined) return { type: 'expired' };
  // An oversized code is no code of 6–8 digits: answered as wrong, without work.
  if (carried.code.length > 64) return { type: 'wrong_code' };
  try {
    return await confirmTotpEnrolment(deps, account.user.id, { secret: carried.secret, code: carried.code });
  } catch (error) {
    if (error instanceof FactorInputError) return { type: 'expired' };
    throw error;
  }
}

/** A new set of recovery codes, replacing the earlier (needs a recent sign-in); the codes, shown once. */
export async function newAccountRecoveryCodes(deps: OAuthDeps, account: Account): Promise<{ type: 'made'; codes: string[] } | { type: 'reauthenticate' }> {
  if (!account.fresh) return { type: 'reauthenticate' };
  const { codes } = await regenerateRecoveryCodes(deps, account.user.id);
  return { type: 'made', codes };
}

/**
 * Starts adding e-mail codes (needs a recent sign-in): a code of purpose `enrol` to the profile's
 * address (email-code.ts, AM91); the factor is stored when it comes back (`confirmAccountEmail`).
 */
export async function startAccountEmail(deps: OAuthDeps, account: Account, options: { locale: MailLocale; ip: string | undefined }): Promise<EmailEnrolmentStart | { type: 'reauthenticate' }> {
  if (!account.fresh) return { type: 'reauthenticate' };
  return startEmailEnrolment(deps, account.user, options);
}

/** Confirms adding e-mail codes with the code that was mailed (one unit of work: the code taken, the factor stored). */
export async function confirmAccountEmail(deps: OAuthDeps, account: Account, input: { code: string; ip: string | undefined }): Promise<EmailEnrolmentConfirm | { type: 'reauthenticate' }> {
  if (!account.fresh) return { type: 'reauthenticate' };
  return confirmEmailEnrolment(deps, account.user, input);
}

/**
 * Removes one of the user's own factors (needs a recent sign-in). The store deletes by the user
 * and the id together, so an id of another user's factor removes nothing: `not_found`.
 */
export async function removeAccountFactor(deps: OAuthDeps, account: Account, factorId: string, ip: string | undefined): Promise<{ type: 'removed'; factor: Factor } | { type: 'not_found' } | { type: 'reauthenticate' }> {
  if (!account.fresh) return { type: 'reauthenticate' };
  const factor = await removeUserFactor(deps.store, account.user.id, factorId);
  if (factor === undefined) return { type: 'not_found' };
  deps.audit.emit({ event: 'factor.removed', userId: account.user.id, kind: factor.kind, factorId: factor.id, ip });
  return { type: 'removed', factor };
}

/**
 * Renames one of the user's own factors (needs a recent sign-in, as every change: SA51), by the
 * use case every front end calls (src/oauth/factors/changes.ts: the one name rule). `invalid_name`:
 * the name is refused (nothing changed); `not_found`: no such factor of this user's.
 */
export async function renameAccountFactor(deps: OAuthDeps, account: Account, factorId: string, name: string, ip: string | undefined): Promise<{ type: 'renamed'; factor: Factor } | { type: 'invalid_name' } | { type: 'not_found' } | { type: 'reauthenticate' }> {
  if (!account.fresh) return { type: 'reauthenticate' };
  let factor: Factor | undefined;
  try {
    factor = await renameUserFactor(deps.store, account.user.id, factorId, name);
  } catch (error) {
    if (error instanceof FactorInputError) return { type: 'invalid_name' };
    throw error;
  }
  if (factor === undefined) return { type: 'not_found' };
  deps.audit.emit({ event: 'factor.renamed', userId: account.user.id, kind: factor.kind, factorId: factor.id, name: factor.name, ip });
  return { type: 'renamed', factor };
}

const PROOF_LABEL = 'gatehouse account totp enrolment v1';

function enrolmentProof(account: Account, secret: string, expiresAt: number): string {
  return createHmac('sha256', account.cookieValue).update([PROOF_LABEL, account.user.id, secret, String(expiresAt)].join('\u0000')).digest('base64url');
}

/** The carried enrolment's deadline if its proof holds for this session and it has not passed. */
function provenDeadline(deps: Pick<OAuthDeps, 'clock'>, account: Account, carried: { secret: string; expiresAt: string; proof: string }): number | undefined {
  if (!/^\d{1,16}$/.test(carried.expiresAt) || carried.secret.length > 128) return undefined;
  const expiresAt = Number(carried.expiresAt);
  if (!constantTimeEqual(enrolmentProof(account, carried.secret, expiresAt), carried.proof)) return undefined;
  return expiresAt > deps.clock.now() ? expiresAt : undefined;
}
