import { consentRequired } from '../../domain/client.ts';
import type { SsoSession } from '../../domain/session.ts';
import { LoginRequired } from '../errors.ts';
import type { AuthorizationRequest } from './request.ts';

/**
 * Whether the existing session answers the request silently or the user must log in (OIDC Core
 * §3.1.2.1, §3.1.2.3). A session is not enough when prompt asks for a login, consent or account
 * choice (the login page for all three; but a third-party client's prompt=consent is answered by
 * the consent page after the session, consent.ts), when max_age is exceeded (`max_age=0`
 * is prompt=login), or when an id_token_hint names another user. prompt=none forbids any page:
 * then the answer is login_required (§3.1.2.6).
 */
export type Interaction = { type: 'silent'; session: SsoSession } | { type: 'login' };

export function decideInteraction(request: AuthorizationRequest, session: SsoSession | undefined, now: number): Interaction {
  if (session && sessionSatisfies(request, session, now)) return { type: 'silent', session };
  if (request.prompt.has('none')) throw new LoginRequired(session ? 'The session does not satisfy the request; the user must log in.' : 'The user is not logged in.');
  return { type: 'login' };
}

function sessionSatisfies(request: AuthorizationRequest, session: SsoSession, now: number): boolean {
  if (request.prompt.has('login') || request.prompt.has('select_account')) return false;
  // First-party clients have no consent page: prompt=consent shows the login page, as before (docs/decisions.md F2).
  if (request.prompt.has('consent') && !consentRequired(request.client)) return false;
  if (request.maxAge !== undefined && (request.maxAge === 0 || now - session.authTime > request.maxAge * 1000)) return false;
  if (request.hintedSubject !== undefined && request.hintedSubject !== session.userId) return false;
  return true;
}
