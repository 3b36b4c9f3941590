import type { FactorKind } from '../../domain/factor.ts';
import type { SsoSession } from '../../domain/session.ts';
import type { UserProfile } from '../../domain/user.ts';
import type { OAuthDeps } from '../deps.ts';
import { LoginRequired, UnmetAuthenticationRequirements } from '../errors.ts';
import { factorsOf } from '../factors/verify.ts';
import { acrClaim, meets } from '../levels.ts';
import { enrolmentCouldMeet, levelStep, meetsRequired, selectsLevel, UNMET } from './decide-interaction.ts';
import type { PublicKeyCredentialCreationOptionsJSON } from '@simplewebauthn/server';
import { confirmLoginEnrolment, enrolmentBinding, enrolmentChoices, startLoginEnrolment, type CarriedEnrolment, type LoginEnrolment } from './enrol-on-login.ts';
import { confirmLoginPasskey, loginPasskeyEnrolmentOptions, type HeldEnrolment } from './enrol-passkey-on-login.ts';
import { policyRefusal } from './authorize.ts';
import { needsConsent } from './consent.ts';
import { issueCode } from './issue-code.ts';
import { carriedFields, type AuthorizationRequest, type DeniedReason, type RedirectTarget } from './request.ts';
import { answerSecondFactor, holdSignIn, sendHeldSignInCode, signInBinding, type FoundSignIn, type HeldSignInCode } from './second-factor.ts';
import type { MailLocale } from '../outbox/mail.ts';
import { checkPasswordLogin, PASSWORD_AMR, startBrowserSession } from './verify-credentials.ts';

export type LoginOutcome =
  | { type: 'code'; target: RedirectTarget; code: string; cookieValue: string }
  /** Signed in, but a third-party client needs the user's consent before the code (consent.ts). */
  | { type: 'consent'; session: SsoSession; cookieValue: string }
  /** Signed in, but the client's authorization policy refuses the user: the explanation page (the session stays, for other clients). */
  | { type: 'denied'; request: AuthorizationRequest; cookieValue: string; reason?: DeniedReason }
  | { type: 'failed' }
  /** The password was right; the user has a second factor: its page, with `pendingCookie` held for this request (second-factor.ts). */
  | { type: 'second_factor'; pendingCookie: string; kinds: FactorKind[] }
  /** The password was right; a required level needs a second factor the user does not have: enrol one first (enrol-on-login.ts). */
  | { type: 'enrol'; pendingCookie: string; choice: EnrolmentChoice }
  /**
   * The enrolment page again, the sign-in still held: the app's code was wrong (`code`, the same
   * secret), the passkey's registration was refused (`passkey`), or the passkey is synced where the
   * level needs a device-bound one (`not_device_bound`: it was stored, nothing is issued).
   */
  | { type: 'enrol_refused'; choice: EnrolmentChoice; reason: 'code' | 'passkey' | 'not_device_bound' }
  /** The second factor's code was wrong or used: its page again, the sign-in still held. */
  | { type: 'second_factor_refused' }
  /** No sign-in is held for this request (expired, used, or never): the login form again. */
  | { type: 'expired' }
  /** Refused by the throttle, or failed and now made to wait: try again in `retryAfter` seconds. */
  | { type: 'throttled'; retryAfter: number }
  | { type: 'error'; target: RedirectTarget; error: unknown; cookieValue?: string };

/** What a sign-in answers once the user proved who they are: the same after a password alone or with a second factor. */
export type SignedIn = Extract<LoginOutcome, { type: 'code' | 'consent' | 'denied' | 'error' }>;
export type PasswordStepOutcome = Exclude<LoginOutcome, { type: 'second_factor_refused' | 'expired' | 'enrol_refused' }>;
export type SecondFactorOutcome = Exclude<LoginOutcome, { type: 'failed' | 'second_factor' | 'enrol_refused' }>;
export type EnrolmentOutcome = Extract<LoginOutcome, { type: 'enrol_refused' | 'expired' }> | SignedIn;

/** What the enrolment page offers (enrolmentChoices): the started app's enrolment when `kinds` has 'totp', a passkey's creation when it has 'passkey'. */
export interface EnrolmentChoice {
  kinds: FactorKind[];
  totp: LoginEnrolment | undefined;
}

/**
 * The login form's submission, for a request already validated again from scratch (so a tampered
 * hidden field gains nothing). The credentials go through checkPasswordLogin, the step the
 * password grant shares (the throttle reserves the attempt before the password is checked, or
 * refuses it). Good credentials start a new SSO session, replacing
 * the browser's previous one, and answer with a code (OIDC Core §3.1.2.5); bad ones answer
 * `failed` (or `throttled`, when this failure makes the address wait) and no code. A user with a
 * second factor is answered `second_factor`: nothing is started or issued until it is given
 * (loginWithSecondFactor).
 */
export async function loginWithPassword(
  deps: OAuthDeps,
  request: AuthorizationRequest,
  credentials: { username: string; password: string },
  previousCookie: string | undefined,
  ip?: string,
): Promise<PasswordStepOutcome> {
  try {
    const clientId = request.client.clientId;
    // The one credential check of every password sign-in (throttle, lockout, audit): verify-credentials.ts.
    const check = await checkPasswordLogin(deps, { username: credentials.username, password: credentials.password, clientId, ip, via: 'login_form' });
    if (check.type === 'failed' || check.type === 'throttled') return check;
    const user = check.user;
    // A new login replaces the browser's session (startBrowserSession), unless the hint named
    // someone else: then the login changes nothing (OIDC Core §3.1.2.1).
    if (request.hintedSubject !== undefined && request.hintedSubject !== user.id) return hintMismatch(deps, request, user, ip);
    if (check.type === 'second_factor') {
      // The level the request selects narrows the factors asked for (levels.ts); one out of reach ends here.
      const step = selectsLevel(request.level) ? levelStep(request.level, PASSWORD_AMR, await factorsOf(deps, user.id)) : { type: 'met' as const };
      // Out of reach of the user's factors: their factor first, then a passkey's enrolment (SA124), unless no sign-in could meet it.
      if (step.type === 'unreachable' && !enrolmentCouldMeet(request.level)) return { type: 'error', target: request.target, error: new UnmetAuthenticationRequirements(UNMET) };
      // Nothing is issued yet: the sign-in waits for the factor, for this request only (issue 24).
      const pendingCookie = await holdSignIn(deps, { user, clientId, binding: requestBinding(request), amr: PASSWORD_AMR, ip });
      return { type: 'second_factor', pendingCookie, kinds: step.type === 'step_up' ? step.kinds : check.kinds };
    }
    // A required level a second factor would meet, and the user has none: enrol one first (item 2).
    const essential = request.level.unmeetable ? undefined : request.level.essential;
    const kinds = essential === undefined || meets(essential, PASSWORD_AMR) ? [] : enrolmentChoices(essential, PASSWORD_AMR);
    if (kinds.length > 0) {
      const pendingCookie = await holdSignIn(deps, { user, clientId, binding: enrolmentBinding(requestBinding(request)), amr: PASSWORD_AMR, ip });
      return { type: 'enrol', pendingCookie, choice: await enrolmentChoice(deps, kinds, pendingCookie, user) };
    }
    return await signedIn(deps, request, user, PASSWORD_AMR, previousCookie, ip);
  } catch (error) {
    return { type: 'error', target: request.target, error };
  }
}

/** The enrolment page's submission (enrol-on-login.ts): a right code from the new app goes on as a second factor's does. */
export async function loginWithEnrolment(deps: OAuthDeps, request: AuthorizationRequest, carried: CarriedEnrolment, pendingCookie: string | undefined, previousCookie: string | undefined, ip?: string): Promise<EnrolmentOutcome> {
  try {
    const answer = await confirmLoginEnrolment(deps, { cookieValue: pendingCookie, clientId: request.client.clientId, binding: enrolmentBinding(requestBinding(request)) }, carried);
    if (answer.type === 'wrong_code') return { type: 'enrol_refused', choice: { kinds: requestEnrolmentKinds(request), totp: answer.enrolment }, reason: 'code' };
    if (answer.type === 'expired') return answer;
    return await signedIn(deps, request, answer.user, answer.amr, previousCookie, ip);
  } catch (error) {
    return { type: 'error', target: request.target, error };
  }
}

/** The enrolment page's passkey answer (enrol-passkey-on-login.ts): a registered passkey that meets the level goes on as a second factor's use does. */
export async function loginWithPasskeyEnrolment(deps: OAuthDeps, request: AuthorizationRequest, response: unknown, pendingCookie: string | undefined, previousCookie: string | undefined, ip?: string): Promise<EnrolmentOutcome> {
  try {
    const essential = request.level.unmeetable ? undefined : request.level.essential;
    const answer = await confirmLoginPasskey(deps, loginEnrolmentHeld(request, pendingCookie), essential, response);
    if (answer.type === 'expired') return answer;
    if (answer.type === 'enrolled') return await signedIn(deps, request, answer.user, answer.amr, previousCookie, ip);
    // The page again: a new app's enrolment when the app is offered too (the refused form carried none).
    const choice = await enrolmentChoice(deps, requestEnrolmentKinds(request), pendingCookie ?? '', answer.user);
    return { type: 'enrol_refused', choice, reason: answer.type === 'refused' ? 'passkey' : 'not_device_bound' };
  } catch (error) {
    return { type: 'error', target: request.target, error };
  }
}

/** The options of the enrolment page's passkey creation, for the sign-in held for this request; undefined when none is. */
export async function loginPasskeyEnrolmentOptionsFor(deps: OAuthDeps, request: AuthorizationRequest, pendingCookie: string | undefined): Promise<PublicKeyCredentialCreationOptionsJSON | undefined> {
  return loginPasskeyEnrolmentOptions(deps, loginEnrolmentHeld(request, pendingCookie));
}

function loginEnrolmentHeld(request: AuthorizationRequest, pendingCookie: string | undefined): HeldEnrolment {
  return { cookieValue: pendingCookie, clientId: request.client.clientId, binding: enrolmentBinding(requestBinding(request)) };
}

/**
 * The second step was right (`step`): the sign-in goes on, unless the required level is still
 * unmet and a passkey could meet it — a user with a TOTP factor facing `phr` — then the enrolment
 * page, the sign-in held again (enrolment binding) with what it proved so far (SA124). Only after
 * the user's own factor, so a password alone never adds a factor to an account that has one (SA122).
 */
export async function afterSecondFactor(deps: OAuthDeps, request: AuthorizationRequest, step: { user: UserProfile; amr: string[] }, previousCookie: string | undefined, ip: string | undefined): Promise<SecondFactorOutcome> {
  const essential = request.level.unmeetable ? undefined : request.level.essential;
  const kinds = essential === undefined || meets(essential, step.amr) ? [] : enrolmentChoices(essential, step.amr);
  if (kinds.length === 0) return signedIn(deps, request, step.user, step.amr, previousCookie, ip);
  const pendingCookie = await holdSignIn(deps, { user: step.user, clientId: request.client.clientId, binding: enrolmentBinding(requestBinding(request)), amr: step.amr, ip });
  return { type: 'enrol', pendingCookie, choice: await enrolmentChoice(deps, kinds, pendingCookie, step.user) };
}

/** The kinds the enrolment page offers for this request's required level (after the password). */
function requestEnrolmentKinds(request: AuthorizationRequest): FactorKind[] {
  const essential = request.level.unmeetable ? undefined : request.level.essential;
  return essential === undefined ? [] : enrolmentChoices(essential, PASSWORD_AMR);
}

/** The page's offer: an app's enrolment started for the held sign-in when the app is one of `kinds`. */
async function enrolmentChoice(deps: OAuthDeps, kinds: FactorKind[], pendingCookie: string, user: UserProfile): Promise<EnrolmentChoice> {
  return { kinds, totp: kinds.includes('totp') ? await startLoginEnrolment(deps, pendingCookie, user) : undefined };
}

/** The second factor's page's "Send a code by e-mail", for the sign-in held for this very request (sendHeldSignInCode). */
export async function emailCodeForLogin(deps: OAuthDeps, request: AuthorizationRequest, pendingCookie: string | undefined, options: { locale: MailLocale; ip: string | undefined }): Promise<HeldSignInCode> {
  return sendHeldSignInCode(deps, { cookieValue: pendingCookie, clientId: request.client.clientId, binding: requestBinding(request) }, options);
}

/**
 * The second factor's page's submission, for a request validated again from scratch (as the login
 * form's): the code of the sign-in held for this very request (second-factor.ts). A right code
 * goes on exactly as a password-only login does (signedIn); the session's amr says what was proved.
 */
export async function loginWithSecondFactor(deps: OAuthDeps, request: AuthorizationRequest, code: string, pendingCookie: string | undefined, previousCookie: string | undefined, ip?: string): Promise<SecondFactorOutcome> {
  try {
    const kinds = (found: FoundSignIn) => levelKinds(deps, request, found);
    const step = await answerSecondFactor(deps, { cookieValue: pendingCookie, clientId: request.client.clientId, binding: requestBinding(request), code, ip, kinds });
    if (step.type === 'refused') return { type: 'second_factor_refused' };
    if (step.type !== 'ok') return step;
    return await afterSecondFactor(deps, request, step, previousCookie, ip);
  } catch (error) {
    return { type: 'error', target: request.target, error };
  }
}

/**
 * The kinds of factor a held sign-in may still use for this request: those that raise what it
 * proved so far to the level the request selects (levels.ts raisingKinds), so a step-up to `phr`
 * takes a passkey only, whatever the page's form claims (the page hides the code field; this
 * enforces it). Undefined: no level to reach, any of the user's factors.
 */
async function levelKinds(deps: OAuthDeps, request: AuthorizationRequest, found: FoundSignIn): Promise<readonly FactorKind[] | undefined> {
  if (!selectsLevel(request.level)) return undefined;
  const step = levelStep(request.level, found.pending.amr, await factorsOf(deps, found.user.id));
  return step.type === 'step_up' ? step.kinds : undefined;
}

/**
 * A step-up (issue 24, item 3): the browser's session belongs to the user but its amr is below the
 * level the request selects (decideInteraction answered `step_up`). The sign-in is held as after a
 * password, with the session's amr as what is proved so far, so the second factor's page asks only
 * for the missing factor; its answer goes on as loginWithSecondFactor does, and the new session
 * (which replaces this one) holds the union of both amr (RFC 8176) and a new auth_time.
 */
export async function holdStepUp(deps: OAuthDeps, request: AuthorizationRequest, session: SsoSession, ip?: string): Promise<string | undefined> {
  const user = await deps.store.users.getProfile(session.userId);
  if (user?.status !== 'enabled') return undefined;
  return holdSignIn(deps, { user, clientId: request.client.clientId, binding: requestBinding(request), amr: session.amr, ip });
}

/** What a pending sign-in of the login page answers: the authorization request, as its form carries it (order aside). */
export function requestBinding(request: AuthorizationRequest): string {
  const fields = carriedFields(request).sort(([a, x], [b, y]) => (a === b ? (x < y ? -1 : x > y ? 1 : 0) : a < b ? -1 : 1));
  return signInBinding('authorize', JSON.stringify(fields));
}

/**
 * The user proved who they are (`amr`): the new SSO session, then what every path to a code runs
 * in this order (docs/architecture.md, "After authentication"): the policy check, consent, the code.
 */
export async function signedIn(deps: OAuthDeps, request: AuthorizationRequest, user: UserProfile, amr: readonly string[], previousCookie: string | undefined, ip: string | undefined): Promise<SignedIn> {
  // An essential level the sign-in does not meet (a user without a factor that could; a factor
  // other than the one asked for): nothing is started or issued. (A user without a second factor
  // was led through enrolment before this, loginWithPassword.)
  if (!meetsRequired(request.level, amr)) return { type: 'error', target: request.target, error: new UnmetAuthenticationRequirements(UNMET) };
  const acr = acrClaim(deps.config.levels, request.level.requested, amr);
  const { cookieValue, session } = await startBrowserSession(deps, { user, amr, clientId: request.client.clientId, acr, ip }, previousCookie);
  const refused = await policyRefusal(deps, request, user.id);
  if (refused?.type === 'denied') return { ...refused, cookieValue };
  if (refused) return { ...refused, cookieValue };
  // A third-party client's consent page comes between the login and the code (consent.ts).
  if (await needsConsent(deps, request, user.id)) return { type: 'consent', session, cookieValue };
  const code = await issueCode(deps, request, session);
  return { type: 'code', target: request.target, code, cookieValue };
}

/**
 * The id_token_hint named another user than the one who just signed in. OIDC Core §3.1.2.1: when
 * the End-User the ID token identifies is not the one logged in or logging in, the server returns
 * an error, "such as login_required" — the hinted user did not log in. No session is started and
 * the browser's current one is left as it was: the login belonged to a request that is refused.
 */
export function hintMismatch(deps: OAuthDeps, request: AuthorizationRequest, user: UserProfile, ip: string | undefined): SignedIn {
  deps.audit.emit({ event: 'login.hint_mismatch', userId: user.id, username: user.username, clientId: request.client.clientId, ip });
  return { type: 'error', target: request.target, error: new LoginRequired('The user who signed in is not the one the id_token_hint names.') };
}
