/**
 * The enrolment page's answers (issue 24, item 2; enrol-page.ts): the carried authorization
 * request is validated again from scratch, then the CSRF token, then the started enrolment and
 * its code (src/oauth/authorize/enrol-on-login.ts), or the passkey's registration
 * (enrol-passkey-on-login.ts: its options as JSON for passkey.js, then the browser's answer); a
 * right one goes on as a second factor's does.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { validateAuthorization } from '../../oauth/authorize/authorize.ts';
import { loginPasskeyEnrolmentOptionsFor, loginWithEnrolment, loginWithPasskeyEnrolment, type EnrolmentOutcome } from '../../oauth/authorize/login.ts';
import type { AuthorizationRequest } from '../../oauth/authorize/request.ts';
import { parseResponseField } from '../../oauth/factors/passkey.ts';
import { clientAddress } from '../client-address.ts';
import type { HttpDeps } from '../deps.ts';
import { clearPendingSignInCookie, readPendingSignInCookie, readSessionCookie } from './cookies.ts';
import { csrfValid } from './csrf.ts';
import { enrolPasskeyPaths, enrolPath, sendEnrolPage } from './enrol-page.ts';
import { formField, requestParams, useHtmlScope } from './html-scope.ts';
import type { MessageKey } from './i18n.ts';
import { sendLoginPage } from './login-page.ts';
import { authorizationForm, sendSignedIn } from './login-route.ts';

/** Why the enrolment page is shown again, as its message says it. */
const REFUSED: Record<Extract<EnrolmentOutcome, { type: 'enrol_refused' }>['reason'], MessageKey> = {
  code: 'accountTotpWrongCode',
  passkey: 'accountPasskeyRefused',
  not_device_bound: 'enrolPasskeyNotDeviceBound',
};

export async function enrolRoutes(app: FastifyInstance, deps: HttpDeps): Promise<void> {
  useHtmlScope(app, deps);
  const passkey = enrolPasskeyPaths(deps.config);

  const form = (path: string, act: Parameters<typeof authorizationForm>[3]) => authorizationForm(app, deps, path, act);

  const answered = (request: FastifyRequest, reply: FastifyReply, authorization: AuthorizationRequest, outcome: EnrolmentOutcome): Promise<FastifyReply> | FastifyReply => {
    if (outcome.type === 'enrol_refused') return sendEnrolPage(request, reply, deps, authorization, outcome.choice, { status: 401, message: REFUSED[outcome.reason], invalid: outcome.reason === 'code' });
    clearPendingSignInCookie(reply, deps.config);
    if (outcome.type === 'expired') return sendLoginPage(request, reply, deps, authorization, { status: 400, message: 'secondFactorExpired' });
    return sendSignedIn(request, reply, deps, authorization, outcome);
  };

  form(enrolPath(deps.config), async (request, reply, authorization, raw) => {
    const carried = { secret: formField(raw, 'secret'), expiresAt: formField(raw, 'expires_at'), proof: formField(raw, 'proof'), code: formField(raw, 'code') };
    const outcome = await loginWithEnrolment(deps, authorization, carried, readPendingSignInCookie(request, deps.config), readSessionCookie(request, deps.config), clientAddress(request));
    return answered(request, reply, authorization, outcome);
  });

  // The passkey's options: JSON for the page's script, never cached; an error is JSON too (the script reads it).
  app.post(passkey.options, async (request, reply) => {
    const raw = requestParams(request);
    const validation = await validateAuthorization(deps, raw);
    const json = (status: number, body: unknown) => reply.code(status).header('cache-control', 'no-store').type('application/json; charset=utf-8').send(JSON.stringify(body));
    if (!validation.ok) return json(400, { error: 'invalid_request' });
    if (!csrfValid(request, deps, formField(raw, 'csrf_token'))) return json(403, { error: 'form_expired' });
    const options = await loginPasskeyEnrolmentOptionsFor(deps, validation.request, readPendingSignInCookie(request, deps.config));
    return options === undefined ? json(400, { error: 'sign_in_expired' }) : json(200, options);
  });

  form(passkey.action, async (request, reply, authorization, raw) => {
    // A response that is not JSON is refused as a wrong one is: the page again, the sign-in still held.
    const response = parseResponseField(formField(raw, 'response')) ?? null;
    const outcome = await loginWithPasskeyEnrolment(deps, authorization, response, readPendingSignInCookie(request, deps.config), readSessionCookie(request, deps.config), clientAddress(request));
    return answered(request, reply, authorization, outcome);
  });
}
