import type { OAuthDeps } from '../deps.ts';
import { createSession, findSession } from '../sessions.ts';
import { issueCode } from './issue-code.ts';
import type { AuthorizationRequest, RedirectTarget } from './request.ts';
import { verifyCredentials } from './verify-credentials.ts';

export type LoginOutcome =
  | { type: 'code'; target: RedirectTarget; code: string; cookieValue: string }
  | { type: 'failed' }
  | { type: 'error'; target: RedirectTarget; error: unknown };

/**
 * The login form's submission, for a request already validated again from scratch (so a tampered
 * hidden field gains nothing). Good credentials start a new SSO session, replacing the browser's
 * previous one, and answer with a code (OIDC Core §3.1.2.5); bad ones answer `failed` and no code.
 */
export async function loginWithPassword(
  deps: OAuthDeps,
  request: AuthorizationRequest,
  credentials: { username: string; password: string },
  previousCookie: string | undefined,
): Promise<LoginOutcome> {
  try {
    const user = await verifyCredentials(deps, credentials.username, credentials.password);
    if (!user) return { type: 'failed' };
    // One browser, one session: a new login ends the session it replaces (its tokens stay valid;
    // only logout revokes them).
    const previous = await findSession(deps, previousCookie);
    if (previous) await deps.store.sessions.end(previous.idHash);
    const { cookieValue, session } = await createSession(deps, { userId: user.id, amr: ['pwd'], acr: request.acr });
    const code = await issueCode(deps, request, session);
    return { type: 'code', target: request.target, code, cookieValue };
  } catch (error) {
    return { type: 'error', target: request.target, error };
  }
}
