/**
 * The user-code page's use cases (RFC 8628 §3.3): look a typed user code up under the entry
 * limits, sign in for it, and approve or deny it. The HTTP layer (src/http/interaction/device-routes.ts)
 * only renders what these decide.
 *
 * Brute force (RFC 8628 §5.1): every submission that looks a user code up takes one hit from two
 * fixed-window budgets in one atomic statement (RateLimitStore.take): the client address's and a
 * global one, so many addresses together cannot guess faster than the global limit. A submission
 * is refused when either budget is full, before any lookup. docs/security.md has the arithmetic.
 */
import type { Client } from '../../domain/client.ts';
import type { DeviceAuthorization } from '../../domain/device-authorization.ts';
import type { FactorKind } from '../../domain/factor.ts';
import type { SsoSession } from '../../domain/session.ts';
import { fingerprint } from '../../observability/audit.ts';
import type { RateBudget } from '../../storage/ports.ts';
import type { OAuthDeps } from '../deps.ts';
import { factorsOf } from '../factors/verify.ts';
import { acrClaim, meets, raisingKinds } from '../levels.ts';
import { policyAllows, policyRequirement, readPolicy, unverifiedEmail } from '../policy/evaluate.ts';
import type { DeniedReason } from '../authorize/request.ts';
import { addressGroup, counterKey } from '../throttling/keys.ts';
import type { PublicKeyCredentialRequestOptionsJSON } from '@simplewebauthn/server';
import { answerPasskeySecondFactor, passkeySecondFactorOptions } from '../authorize/passkey-sign-in.ts';
import { answerSecondFactor, holdSignIn, sendHeldSignInCode, signInBinding, type HeldSignInCode, type SecondFactorStep } from '../authorize/second-factor.ts';
import type { MailLocale } from '../outbox/mail.ts';
import { checkPasswordLogin, PASSWORD_AMR, startBrowserSession } from '../authorize/verify-credentials.ts';
import { normaliseUserCode } from './user-code.ts';

/** A pending device authorization and the client that asked for it: what the confirmation page shows. */
export interface PendingDevice {
  authorization: DeviceAuthorization;
  client: Client;
}

export type LookUp = { type: 'found'; device: PendingDevice } | { type: 'not_found' } | { type: 'throttled'; retryAfter: number };

/** The global budget's key: one counter for every address. */
const GLOBAL_KEY = counterKey('device-all', 'all');

/** Takes one user-code entry from the address's and the global budget; false: refuse this entry. */
export async function takeUserCodeEntry(deps: OAuthDeps, ip: string | undefined): Promise<boolean> {
  const { deviceUserCodeAttemptsPerAddress: perAddress, deviceUserCodeAttemptsGlobal: global, deviceUserCodeAttemptsWindow: window } = deps.config;
  const addressKey = ip === undefined ? undefined : counterKey('device-ip', addressGroup(ip));
  const budgets: RateBudget[] = [{ key: GLOBAL_KEY, limit: global }];
  if (addressKey !== undefined) budgets.push({ key: addressKey, limit: perAddress });
  const now = deps.clock.now();
  const counted = await deps.store.rateLimits.take(budgets, now, now + window * 1000);
  // Exactly one entry fills each counter (the counts are atomic): it reports the limit once per window.
  for (const { key, limit } of budgets) {
    if (counted.find((c) => c.key === key)?.hits === limit) deps.audit.emit({ event: 'device.user_code_rate_limited', by: key === GLOBAL_KEY ? 'global' : 'ip', limit, window, ip });
  }
  return counted.length === budgets.length;
}

/**
 * A typed user code, under the entry limits: the pending, unexpired authorization it names and its
 * (active) client, or not_found; throttled when a budget is full (then nothing is looked up).
 */
export async function lookUpUserCode(deps: OAuthDeps, typed: string, ip: string | undefined): Promise<LookUp> {
  if (!(await takeUserCodeEntry(deps, ip))) return { type: 'throttled', retryAfter: deps.config.deviceUserCodeAttemptsWindow };
  const userCode = normaliseUserCode(typed);
  if (userCode === undefined) return { type: 'not_found' };
  const authorization = await deps.store.deviceAuthorizations.findPending(userCode, deps.clock.now());
  if (!authorization) return { type: 'not_found' };
  const client = await deps.store.clients.get(authorization.clientId);
  if (!client?.active) return { type: 'not_found' };
  return { type: 'found', device: { authorization, client } };
}

/**
 * `second_factor`: the password was right, the user has a second factor: its page, the sign-in
 * held for this device's code (`pendingCookie`). `second_factor_refused`: a wrong or used code,
 * the sign-in still held. `expired`: no sign-in is held for this code: the password again.
 */
export type DeviceSignIn =
  | { type: 'signed_in'; session: SsoSession; cookieValue: string }
  | { type: 'second_factor'; pendingCookie: string; kinds: FactorKind[] }
  | { type: 'second_factor_refused' }
  | { type: 'expired' }
  | { type: 'failed' }
  | { type: 'throttled'; retryAfter: number };

/**
 * The user-code page's sign-in: the login form's own steps (src/oauth/authorize/login.ts), not a
 * copy of them — checkPasswordLogin (throttle reserved before the password is checked, the user's
 * status, lockout, `login.failed`/`login.throttled`), then startBrowserSession (the new SSO
 * session replaces the browser's, `login.succeeded`), with the device's client in the events. A
 * rule added to the password sign-in therefore holds here too (issue 23).
 */
export async function signInForDevice(deps: OAuthDeps, device: PendingDevice, credentials: { username: string; password: string }, previousCookie: string | undefined, ip?: string): Promise<Exclude<DeviceSignIn, { type: 'second_factor_refused' | 'expired' }>> {
  const clientId = device.client.clientId;
  // The user-code page's form is a browser's login form: its events carry no `via`, as before.
  const check = await checkPasswordLogin(deps, { username: credentials.username, password: credentials.password, clientId, ip, via: 'login_form' });
  if (check.type === 'failed' || check.type === 'throttled') return check;
  if (check.type === 'second_factor') {
    // As on the login page: nothing is started until the factor is given, for this code only.
    const pendingCookie = await holdSignIn(deps, { user: check.user, clientId, binding: deviceBinding(device), amr: PASSWORD_AMR, ip });
    return { type: 'second_factor', pendingCookie, kinds: check.kinds };
  }
  const { session, cookieValue } = await startBrowserSession(deps, { user: check.user, amr: PASSWORD_AMR, clientId, ip }, previousCookie);
  return { type: 'signed_in', session, cookieValue };
}

/**
 * The second factor's page of the user-code page: the login page's step (answerSecondFactor), for
 * the sign-in held for this device's code; a right code starts the session as a password-only
 * sign-in does, with the amr the factor adds, and the confirmation follows.
 */
export async function secondFactorForDevice(deps: OAuthDeps, device: PendingDevice, code: string, pendingCookie: string | undefined, previousCookie: string | undefined, ip?: string): Promise<Exclude<DeviceSignIn, { type: 'failed' | 'second_factor' }>> {
  const step = await answerSecondFactor(deps, { cookieValue: pendingCookie, clientId: device.client.clientId, binding: deviceBinding(device), code, ip });
  return afterSecondStep(deps, device, step, previousCookie, ip);
}

/** The second factor's page's "Send a code by e-mail", for the sign-in held for this device's code. */
export async function emailCodeForDevice(deps: OAuthDeps, device: PendingDevice, pendingCookie: string | undefined, options: { locale: MailLocale; ip: string | undefined }): Promise<HeldSignInCode> {
  return sendHeldSignInCode(deps, { cookieValue: pendingCookie, clientId: device.client.clientId, binding: deviceBinding(device) }, options);
}

/** The options of the passkey step of the sign-in held for this device's code (passkey-sign-in.ts); undefined when none is held. */
export async function passkeyOptionsForDevice(deps: OAuthDeps, device: PendingDevice, pendingCookie: string | undefined): Promise<PublicKeyCredentialRequestOptionsJSON | undefined> {
  return passkeySecondFactorOptions(deps, { cookieValue: pendingCookie, clientId: device.client.clientId, binding: deviceBinding(device) });
}

/** The second step by a passkey instead of a code (issue 24): as secondFactorForDevice, with the assertion for the code. */
export async function passkeyForDevice(deps: OAuthDeps, device: PendingDevice, response: unknown, pendingCookie: string | undefined, previousCookie: string | undefined, ip?: string): Promise<Exclude<DeviceSignIn, { type: 'failed' | 'second_factor' }>> {
  const step = await answerPasskeySecondFactor(deps, { cookieValue: pendingCookie, clientId: device.client.clientId, binding: deviceBinding(device) }, response, ip);
  return afterSecondStep(deps, device, step, previousCookie, ip);
}

/** A right second factor starts the session as a password-only sign-in does, with the amr it adds. */
async function afterSecondStep(deps: OAuthDeps, device: PendingDevice, step: SecondFactorStep, previousCookie: string | undefined, ip: string | undefined): Promise<Exclude<DeviceSignIn, { type: 'failed' | 'second_factor' }>> {
  if (step.type === 'refused') return { type: 'second_factor_refused' };
  if (step.type !== 'ok') return step;
  const { session, cookieValue } = await startBrowserSession(deps, { user: step.user, amr: step.amr, clientId: device.client.clientId, ip }, previousCookie);
  return { type: 'signed_in', session, cookieValue };
}

/**
 * A browser whose session is below the client's policy's minimum_authentication (issue 24): as at
 * the authorization endpoint, the session's user is asked only for a factor that meets it (the
 * second factor's page of this page, the sign-in held for this code with the session's amr), and
 * the new session it starts holds both. undefined when the session meets it, or no factor of the
 * user's can (the approval is then refused, decideDevice).
 */
export async function stepUpForDevice(deps: OAuthDeps, device: PendingDevice, session: SsoSession, ip?: string): Promise<{ pendingCookie: string; kinds: FactorKind[] } | undefined> {
  const required = await policyRequirement(deps.store, device.client);
  if (required === undefined || meets(required, session.amr)) return undefined;
  const kinds = raisingKinds(required, session.amr, await factorsOf(deps, session.userId));
  const user = kinds.length === 0 ? undefined : await deps.store.users.getProfile(session.userId);
  if (user?.status !== 'enabled') return undefined;
  const pendingCookie = await holdSignIn(deps, { user, clientId: device.client.clientId, binding: deviceBinding(device), amr: session.amr, ip });
  return { pendingCookie, kinds };
}

/** What a pending sign-in of the user-code page answers: the device authorization, by its user code. */
function deviceBinding(device: PendingDevice): string {
  return signInBinding('device', device.authorization.userCode);
}

/** A recorded decision: the authorization as decided, and whether an approval became a denial because the client's authorization policy refuses the user. */
export interface DeviceDecision {
  authorization: DeviceAuthorization;
  refusedByPolicy: boolean;
  /** Why, when the user can mend it: the policy requires a verified e-mail address and theirs is not (AM106, as the authorization endpoint's AM58). */
  reason?: DeniedReason;
}

/**
 * The user's decision (RFC 8628 §3.3), one conditional write (DeviceAuthorizationStore.decide):
 * approving binds the authorization to the signed-in user and their SSO session (the tokens then
 * carry its session index, auth time and `amr`). undefined when the code is no longer pending
 * (already decided, expired, or unknown): approving or denying twice changes nothing.
 */
export async function decideDevice(deps: OAuthDeps, device: PendingDevice, session: SsoSession, approve: boolean, ip?: string): Promise<DeviceDecision | undefined> {
  const now = deps.clock.now();
  // RFC 8628 §3.1 has no acr_values: the device's tokens carry the strongest level the session meets.
  const approval = { userId: session.userId, sessionIndex: session.sessionIndex, authTime: session.authTime, amr: session.amr, acr: acrClaim(deps.config.levels, [], session.amr) };
  // A user the client's authorization policy refuses cannot approve: the approval is recorded as a
  // denial, so the device gets access_denied (RFC 8628 §3.5); the token endpoint checks again. So
  // is a session below the policy's minimum_authentication (issue 24; docs/authorization.md).
  const required = approve ? await policyRequirement(deps.store, device.client) : undefined;
  const levelMet = required === undefined || meets(required, session.amr);
  const policy = device.client.authorizationPolicy;
  const facts = approve && levelMet && policy !== undefined ? await readPolicy(deps.store, policy, session.userId, { forAccess: true }) : undefined;
  const allowed = approve && levelMet && (policy === undefined || policyAllows(facts));
  const decided = await deps.store.deviceAuthorizations.decide(device.authorization.userCode, allowed ? { approve: approval } : 'deny', now);
  if (decided) {
    const facts = { clientId: decided.clientId, userId: session.userId, session: fingerprint(session.sessionIndex), userCode: fingerprint(decided.userCode), ip };
    deps.audit.emit(allowed ? { event: 'device.approved', ...facts } : { event: 'device.denied', ...facts });
  }
  // require_verified_email: the page says how to mend it, as the authorization endpoint's does.
  const unverified = approve && !allowed && unverifiedEmail(facts);
  return decided && { authorization: decided, refusedByPolicy: approve && !allowed, ...(unverified ? { reason: 'email_unverified' as const } : {}) };
}
