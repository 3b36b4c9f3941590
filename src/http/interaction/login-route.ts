import type { FastifyInstance } from 'fastify';
import { validateAuthorization } from '../../oauth/authorize/authorize.ts';
import { loginWithPassword } from '../../oauth/authorize/login.ts';
import type { HttpDeps } from '../deps.ts';
import { sendAuthorizationError, sendCode } from '../render/authorization.ts';
import { readSessionCookie, setSessionCookie } from './cookies.ts';
import { csrfValid } from './csrf.ts';
import { formField, requestParams, useHtmlScope } from './html-scope.ts';
import { LOGIN_PATH, sendLoginPage } from './login-page.ts';
import { LOGIN_CSS } from './views.ts';

/**
 * The login form's submission and its stylesheet. The carried authorization request is validated
 * again exactly as at the authorization endpoint, then the CSRF token, then the credentials.
 */
export async function interactionRoutes(app: FastifyInstance, deps: HttpDeps): Promise<void> {
  useHtmlScope(app);

  app.get('/uas/assets/login.css', async (_request, reply) =>
    reply.header('cache-control', 'public, max-age=3600').header('x-content-type-options', 'nosniff').type('text/css; charset=utf-8').send(LOGIN_CSS),
  );

  app.post(LOGIN_PATH, async (request, reply) => {
    const raw = requestParams(request);
    const validation = await validateAuthorization(deps, raw);
    if (!validation.ok) return sendAuthorizationError(request, reply, deps, validation.target, validation.error);
    const authorization = validation.request;
    const username = formField(raw, 'username');
    if (!csrfValid(request, deps, formField(raw, 'csrf_token'))) return sendLoginPage(request, reply, deps, authorization, { status: 403, message: 'formExpired', username });

    const outcome = await loginWithPassword(deps, authorization, { username, password: formField(raw, 'password') }, readSessionCookie(request, deps.config));
    if (outcome.type === 'failed') return sendLoginPage(request, reply, deps, authorization, { status: 401, message: 'loginFailed', username });
    if (outcome.type === 'error') return sendAuthorizationError(request, reply, deps, outcome.target, outcome.error);
    setSessionCookie(reply, deps.config, outcome.cookieValue);
    // 303: the browser must not repeat the POST, with its password, to the client (RFC 9700 §4.12).
    return sendCode(reply, deps, outcome.target, outcome.code, 303);
  });
}
