import type { SsoSession } from '../../domain/session.ts';
import type { UserProfile } from '../../domain/user.ts';
import type { OAuthDeps } from '../deps.ts';
import { LoginRequired } from '../errors.ts';
import { policyRefusal } from './authorize.ts';
import { needsConsent } from './consent.ts';
import { issueCode } from './issue-code.ts';
import type { AuthorizationRequest, RedirectTarget } from './request.ts';
import { checkPasswordLogin, startBrowserSession } from './verify-credentials.ts';

export type LoginOutcome =
  | { type: 'code'; target: RedirectTarget; code: string; cookieValue: string }
  /** Signed in, but a third-party client needs the user's consent before the code (consent.ts). */
  | { type: 'consent'; session: SsoSession; cookieValue: string }
  /** Signed in, but the client's authorization policy refuses the user: the explanation page (the session stays, for other clients). */
  | { type: 'denied'; request: AuthorizationRequest; cookieValue: string }
  | { type: 'failed' }
  /** Refused by the throttle, or failed and now made to wait: try again in `retryAfter` seconds. */
  | { type: 'throttled'; retryAfter: number }
  | { type: 'error'; target: RedirectTarget; error: unknown; cookieValue?: string };

/**
 * The login form's submission, for a request already validated again from scratch (so a tampered
 * hidden field gains nothing). The credentials go through checkPasswordLogin, the step the
 * password grant shares (the throttle reserves the attempt before the password is checked, or
 * refuses it). Good credentials start a new SSO session, replacing
 * the browser's previous one, and answer with a code (OIDC Core §3.1.2.5); bad ones answer
 * `failed` (or `throttled`, when this failure makes the address wait) and no code.
 */
export async function loginWithPassword(
  deps: OAuthDeps,
  request: AuthorizationRequest,
  credentials: { username: string; password: string },
  previousCookie: string | undefined,
  ip?: string,
): Promise<LoginOutcome> {
  try {
    const clientId = request.client.clientId;
    // The one credential check of every password sign-in (throttle, lockout, audit): verify-credentials.ts.
    const check = await checkPasswordLogin(deps, { username: credentials.username, password: credentials.password, clientId, ip, via: 'login_form' });
    if (check.type !== 'ok') return check;
    const user = check.user;
    // A new login replaces the browser's session (startBrowserSession), unless the hint named
    // someone else: then the login changes nothing (OIDC Core §3.1.2.1).
    if (request.hintedSubject !== undefined && request.hintedSubject !== user.id) return hintMismatch(deps, request, user, ip);
    const { cookieValue, session } = await startBrowserSession(deps, { user, clientId, acr: request.acr, ip }, previousCookie);
    const refused = await policyRefusal(deps, request, user.id);
    if (refused?.type === 'denied') return { type: 'denied', request, cookieValue };
    if (refused) return { ...refused, cookieValue };
    // A third-party client's consent page comes between the login and the code (consent.ts).
    if (await needsConsent(deps, request, user.id)) return { type: 'consent', session, cookieValue };
    const code = await issueCode(deps, request, session);
    return { type: 'code', target: request.target, code, cookieValue };
  } catch (error) {
    return { type: 'error', target: request.target, error };
  }
}

/**
 * The id_token_hint named another user than the one who just signed in. OIDC Core §3.1.2.1: when
 * the End-User the ID token identifies is not the one logged in or logging in, the server returns
 * an error, "such as login_required" — the hinted user did not log in. No session is started and
 * the browser's current one is left as it was: the login belonged to a request that is refused.
 */
function hintMismatch(deps: OAuthDeps, request: AuthorizationRequest, user: UserProfile, ip: string | undefined): LoginOutcome {
  deps.audit.emit({ event: 'login.hint_mismatch', userId: user.id, username: user.username, clientId: request.client.clientId, ip });
  return { type: 'error', target: request.target, error: new LoginRequired('The user who signed in is not the one the id_token_hint names.') };
}
