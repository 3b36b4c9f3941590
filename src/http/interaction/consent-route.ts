import type { FastifyInstance } from 'fastify';
import { validateAuthorization } from '../../oauth/authorize/authorize.ts';
import { answerConsent } from '../../oauth/authorize/consent.ts';
import { InvalidRequest, LoginRequired } from '../../oauth/errors.ts';
import { findUsableSession } from '../../oauth/sessions.ts';
import { clientAddress } from '../client-address.ts';
import type { HttpDeps } from '../deps.ts';
import { sendAuthorizationError, sendCode } from '../render/authorization.ts';
import { consentPath, consentSessionBinding, sendConsentPage } from './consent-page.ts';
import { readSessionCookie } from './cookies.ts';
import { csrfValid } from './csrf.ts';
import { formField, requestParams, useHtmlScope } from './html-scope.ts';
import { sendLoginPage } from './login-page.ts';

/**
 * The consent page's answer (issue 13, item 4). The carried authorization request is validated
 * again exactly as at the authorization endpoint (a tampered field gains nothing the endpoint
 * would not give), then the browser's session, then the CSRF token and the form's session
 * binding, then the decision: allow → the consent is remembered and the code sent (303, RFC 9700
 * §4.12); deny → `access_denied` by the request's response mode.
 */
export async function consentRoutes(app: FastifyInstance, deps: HttpDeps): Promise<void> {
  useHtmlScope(app, deps);

  app.post(consentPath(deps.config), async (request, reply) => {
    const raw = requestParams(request);
    const validation = await validateAuthorization(deps, raw);
    if (!validation.ok) return sendAuthorizationError(request, reply, deps, validation.target, validation.error);
    const authorization = validation.request;
    // Signed out (or the session expired) while the page was open: sign in again; the consent page follows.
    const session = await findUsableSession(deps, readSessionCookie(request, deps.config));
    if (!session) return sendLoginPage(request, reply, deps, authorization);
    if (authorization.hintedSubject !== undefined && authorization.hintedSubject !== session.userId) {
      return sendAuthorizationError(request, reply, deps, authorization.target, new LoginRequired('The signed-in user is not the one the id_token_hint names.'));
    }
    // A cross-site post (no CSRF cookie), or a page shown to another session of this browser: ask again.
    if (!csrfValid(request, deps, formField(raw, 'csrf_token')) || formField(raw, 'consent_session') !== consentSessionBinding(session)) {
      return sendConsentPage(request, reply, deps, authorization, session, { status: 403, expired: true });
    }
    const decision = formField(raw, 'decision');
    if (decision !== 'allow' && decision !== 'deny') {
      return sendAuthorizationError(request, reply, deps, authorization.target, new InvalidRequest('The consent decision must be allow or deny.'));
    }
    const answer = await answerConsent(deps, authorization, session, decision === 'allow', clientAddress(request));
    if (answer.type === 'error') return sendAuthorizationError(request, reply, deps, answer.target, answer.error);
    return sendCode(request, reply, deps, answer.target, answer.code, 303);
  });
}
