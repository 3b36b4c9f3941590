import type { FastifyInstance } from 'fastify';
import { validateAuthorization } from '../../oauth/authorize/authorize.ts';
import { loginWithPassword } from '../../oauth/authorize/login.ts';
import { clientAddress } from '../client-address.ts';
import type { HttpDeps } from '../deps.ts';
import { clientNameFor } from '../../oauth/client-display.ts';
import { sendAccessDeniedPage, sendAuthorizationError, sendCode } from '../render/authorization.ts';
import { readSessionCookie, setSessionCookie } from './cookies.ts';
import { sendConsentPage } from './consent-page.ts';
import { csrfValid } from './csrf.ts';
import { formField, requestParams, useHtmlScope } from './html-scope.ts';
import { loginPath, sendLoginPage } from './login-page.ts';
import { FORM_POST_JS, LOGIN_CSS } from './views.ts';

/**
 * The login form's submission, its stylesheet and the form_post page's script. The carried authorization request is validated
 * again exactly as at the authorization endpoint, then the CSRF token, then the credentials.
 */
export async function interactionRoutes(app: FastifyInstance, deps: HttpDeps): Promise<void> {
  useHtmlScope(app, deps);

  app.get(`${deps.config.issuerPath}/assets/login.css`, async (_request, reply) =>
    reply.header('cache-control', 'public, max-age=3600').header('x-content-type-options', 'nosniff').type('text/css; charset=utf-8').send(LOGIN_CSS),
  );
  // The form_post page's script (src/http/render/authorization.ts): the same for everyone, so cacheable like the stylesheet.
  app.get(`${deps.config.issuerPath}/assets/form-post.js`, async (_request, reply) =>
    reply.header('cache-control', 'public, max-age=3600').header('x-content-type-options', 'nosniff').type('text/javascript; charset=utf-8').send(FORM_POST_JS),
  );

  app.post(loginPath(deps.config), async (request, reply) => {
    const raw = requestParams(request);
    const validation = await validateAuthorization(deps, raw);
    if (!validation.ok) return sendAuthorizationError(request, reply, deps, validation.target, validation.error);
    const authorization = validation.request;
    const username = formField(raw, 'username');
    if (!csrfValid(request, deps, formField(raw, 'csrf_token'))) return sendLoginPage(request, reply, deps, authorization, { status: 403, message: 'formExpired', username });

    const credentials = { username, password: formField(raw, 'password') };
    const outcome = await loginWithPassword(deps, authorization, credentials, readSessionCookie(request, deps.config), clientAddress(request));
    if (outcome.type === 'failed') return sendLoginPage(request, reply, deps, authorization, { status: 401, message: 'loginFailed', username });
    if (outcome.type === 'throttled') {
      // RFC 6585 §4: 429 with how long to wait (RFC 9110 §10.2.3); the form stays, for later.
      reply.header('retry-after', String(outcome.retryAfter));
      return sendLoginPage(request, reply, deps, authorization, { status: 429, message: 'tooManyAttempts', username, retryAfter: outcome.retryAfter });
    }
    if (outcome.type === 'error') {
      if (outcome.cookieValue !== undefined) setSessionCookie(reply, deps.config, outcome.cookieValue);
      return sendAuthorizationError(request, reply, deps, outcome.target, outcome.error);
    }
    if (outcome.type === 'denied') {
      // Signed in (the session serves the user's other clients), but not to this one: say why first.
      setSessionCookie(reply, deps.config, outcome.cookieValue);
      return sendAccessDeniedPage(request, reply, deps, outcome.request.target, (locale) => clientNameFor(outcome.request.client, locale), outcome.request.uiLocales);
    }
    setSessionCookie(reply, deps.config, outcome.cookieValue);
    // A third-party client: the consent page, for the session just started (consent-route.ts takes the answer).
    if (outcome.type === 'consent') return sendConsentPage(request, reply, deps, authorization, outcome.session);
    // 303: the browser must not repeat the POST, with its password, to the client (RFC 9700 §4.12).
    // (form_post answers with its page instead: the browser then posts only the response's fields.)
    return sendCode(request, reply, deps, outcome.target, outcome.code, 303);
  });
}
