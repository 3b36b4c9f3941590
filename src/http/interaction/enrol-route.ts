/**
 * The enrolment page's answer (issue 24, item 2; enrol-page.ts): the carried authorization request
 * is validated again from scratch, then the CSRF token, then the started enrolment and its code
 * (src/oauth/authorize/enrol-on-login.ts); a right code goes on as a second factor's does.
 */
import type { FastifyInstance } from 'fastify';
import { validateAuthorization } from '../../oauth/authorize/authorize.ts';
import { loginWithEnrolment } from '../../oauth/authorize/login.ts';
import { clientAddress } from '../client-address.ts';
import type { HttpDeps } from '../deps.ts';
import { sendAuthorizationError } from '../render/authorization.ts';
import { clearPendingSignInCookie, readPendingSignInCookie, readSessionCookie } from './cookies.ts';
import { csrfValid } from './csrf.ts';
import { enrolPath, sendEnrolPage } from './enrol-page.ts';
import { formField, requestParams, useHtmlScope } from './html-scope.ts';
import { sendLoginPage } from './login-page.ts';
import { sendSignedIn } from './login-route.ts';

export async function enrolRoutes(app: FastifyInstance, deps: HttpDeps): Promise<void> {
  useHtmlScope(app, deps);
  app.post(enrolPath(deps.config), async (request, reply) => {
    const raw = requestParams(request);
    const validation = await validateAuthorization(deps, raw);
    if (!validation.ok) return sendAuthorizationError(request, reply, deps, validation.target, validation.error);
    const authorization = validation.request;
    if (!csrfValid(request, deps, formField(raw, 'csrf_token'))) return sendLoginPage(request, reply, deps, authorization, { status: 403, message: 'formExpired' });
    const carried = { secret: formField(raw, 'secret'), expiresAt: formField(raw, 'expires_at'), proof: formField(raw, 'proof'), code: formField(raw, 'code') };
    const outcome = await loginWithEnrolment(deps, authorization, carried, readPendingSignInCookie(request, deps.config), readSessionCookie(request, deps.config), clientAddress(request));
    if (outcome.type === 'enrol_refused') return sendEnrolPage(request, reply, deps, authorization, outcome.enrolment, { status: 401, message: 'accountTotpWrongCode' });
    clearPendingSignInCookie(reply, deps.config);
    if (outcome.type === 'expired') return sendLoginPage(request, reply, deps, authorization, { status: 400, message: 'secondFactorExpired' });
    return sendSignedIn(request, reply, deps, authorization, outcome);
  });
}
