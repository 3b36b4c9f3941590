import { consentRequired } from '../../domain/client.ts';
import type { SsoSession } from '../../domain/session.ts';
import { fingerprint } from '../../observability/audit.ts';
import { consentCovers, findConsent, grantConsent } from '../consents.ts';
import type { OAuthDeps } from '../deps.ts';
import { AccessDenied, ConsentRequired, InvalidRequest, LoginRequired, TemporarilyUnavailable } from '../errors.ts';
import { checkPolicyAccess, POLICY_REFUSAL } from '../policy/evaluate.ts';
import { formatScope } from '../scope.ts';
import { touchSession } from '../sessions.ts';
import { takeSilentAuthorization } from '../throttling/silent-authorizations.ts';
import { meetsRequired } from './decide-interaction.ts';
import { issueCode } from './issue-code.ts';
import type { AuthorizationRequest, RedirectTarget } from './request.ts';

/**
 * The consent step (issue 13, item 4), between the policy's access check and the code, on both
 * paths to a code (authorize.ts's single sign-on and the login form). A first-party client (the
 * default) never asks. A third-party one (`consent_required`) asks unless the user's remembered
 * consent covers every granted scope value (audiences included: they are scope values) and the
 * request does not say prompt=consent (OIDC Core §3.1.2.1: "prompt the End-User for consent
 * before returning information to the Client"). prompt=none forbids the page: `consent_required`
 * (OIDC Core §3.1.2.6). True when the consent page must be shown.
 */
export async function needsConsent(deps: Pick<OAuthDeps, 'store'>, request: AuthorizationRequest, userId: string): Promise<boolean> {
  if (!consentRequired(request.client)) return false;
  const remembered = !request.prompt.has('consent') && consentCovers(await findConsent(deps.store, userId, request.clientId), request.scope);
  if (remembered) return false;
  if (request.prompt.has('none')) throw new ConsentRequired('The user has not consented to this client receiving the requested scope.');
  return true;
}

export type ConsentAnswer = { type: 'code'; target: RedirectTarget; code: string } | { type: 'error'; target: RedirectTarget; error: unknown };

/**
 * The user's answer on the consent page, for a request validated again from scratch and the
 * browser's usable session. Allow: the consent is remembered (widening any earlier one, in one
 * unit of work) and the code issued; deny: `access_denied` (RFC 6749 §4.1.2.1), and nothing is
 * remembered, so the next request asks again. Allow is subject to the client's authorization
 * policy once more (access_denied when it now refuses the user). A client that asks no consent (the form was
 * tampered with to name a first-party client) is refused: the form exists for third-party
 * clients only, and a first-party client's code comes by the ordinary paths.
 */
export async function answerConsent(deps: OAuthDeps, request: AuthorizationRequest, session: SsoSession, allow: boolean, ip?: string): Promise<ConsentAnswer> {
  try {
    if (!consentRequired(request.client)) throw new InvalidRequest('This client does not ask for consent.');
    const event = { userId: session.userId, clientId: request.clientId, scope: formatScope([...request.scope]), session: fingerprint(session.sessionIndex), ip };
    if (!allow) {
      deps.audit.emit({ event: 'consent.denied', ...event });
      throw new AccessDenied('The user denied the client access.');
    }
    // The page was shown after the policy's access check, but the policy or the user may have
    // changed since: the answer is a third path to a code, so it checks again.
    if (!(await checkPolicyAccess(deps.store, request.client, session.userId))) throw new AccessDenied(POLICY_REFUSAL);
    // So is the level the request requires (issue 24): the page is shown only after a step-up, but its form can be posted without one.
    if (!meetsRequired(request.level, session.amr)) throw new LoginRequired('The session\'s authentication does not meet the level the request requires.');
    // A code from a session without a password, like single sign-on: the same budget (authorize.ts).
    if (!(await takeSilentAuthorization(deps, session, ip, request.clientId))) throw new TemporarilyUnavailable('Too many authorization requests from this session or address; try again later.');
    await grantConsent(deps.store, { userId: session.userId, clientId: request.clientId, scope: request.scope }, deps.clock.now());
    deps.audit.emit({ event: 'consent.granted', ...event });
    const code = await issueCode(deps, request, await touchSession(deps, session));
    return { type: 'code', target: request.target, code };
  } catch (error) {
    return { type: 'error', target: request.target, error };
  }
}
