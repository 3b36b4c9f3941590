/**
 * The login page's passkey ceremonies (issue 24; docs/authorization.md, "Signing in with a
 * passkey"): the username-less sign-in and the passkey as the second step after a password. Each
 * has an options route, which the page's script (assets/passkey.js) fetches, and a form route,
 * which takes the browser's answer in the `response` field and answers with a page as the login
 * form does. Both carry the authorization request, validated again from scratch, and the CSRF
 * token (csrf.ts); the options are JSON, never cached.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { validateAuthorization } from '../../oauth/authorize/authorize.ts';
import { loginPasskeySecondFactorOptions, loginWithPasskey, loginWithPasskeySecondFactor, passkeySignInOptions } from '../../oauth/authorize/passkey-sign-in.ts';
import type { AuthorizationRequest } from '../../oauth/authorize/request.ts';
import { parseResponseField } from '../../oauth/factors/passkey.ts';
import type { RawParams } from '../../oauth/params.ts';
import { clientAddress } from '../client-address.ts';
import type { HttpDeps } from '../deps.ts';
import { readPendingSignInCookie, readSessionCookie } from './cookies.ts';
import { csrfValid } from './csrf.ts';
import { formField, requestParams, useHtmlScope } from './html-scope.ts';
import { sendLoginPage } from './login-page.ts';
import { authorizationForm, sendSecondFactorAnswer, sendSignedIn } from './login-route.ts';
import { passkeySecondFactorPaths, passkeySignInPaths } from './passkey-page.ts';
import { firstCodeMethod, kindsOf } from './second-factor-page.ts';

export async function passkeyRoutes(app: FastifyInstance, deps: HttpDeps): Promise<void> {
  useHtmlScope(app, deps);
  const signIn = passkeySignInPaths(deps.config);
  const second = passkeySecondFactorPaths(deps.config);

  /** An options request: the carried request valid and the CSRF token right, else a JSON error (never a page: the script reads it). */
  const options = (path: string, make: (request: FastifyRequest, authorization: AuthorizationRequest, reply: FastifyReply) => Promise<Answer>) =>
    app.post(path, async (request, reply) => {
      const raw = requestParams(request);
      const validation = await validateAuthorization(deps, raw);
      if (!validation.ok) return json(reply, 400, { error: 'invalid_request' });
      if (!csrfValid(request, deps, formField(raw, 'csrf_token'))) return json(reply, 403, { error: 'form_expired' });
      const { status, body } = await make(request, validation.request, reply);
      return json(reply, status, body);
    });

  /** A form request: the carried request (its error page when invalid), the CSRF token, and the response, parsed. */
  const form = (path: string, act: (request: FastifyRequest, reply: FastifyReply, authorization: AuthorizationRequest, response: unknown, raw: RawParams) => Promise<FastifyReply>) =>
    authorizationForm(app, deps, path, async (request, reply, authorization, raw) => {
      const response = parseResponseField(formField(raw, 'response'));
      // Not JSON at all: a malformed request (400), not a refused passkey.
      if (response === undefined) return sendLoginPage(request, reply, deps, authorization, { status: 400, message: 'passkeyFailed' });
      return act(request, reply, authorization, response, raw);
    });

  options(signIn.options, async (request, authorization, reply) => {
    const made = await passkeySignInOptions(deps, authorization, clientAddress(request));
    if ('type' in made) {
      // RFC 6585 §4: too many ceremonies from this address; the script shows its error, the password form stays.
      reply.header('retry-after', String(made.retryAfter));
      return { status: 429, body: { error: 'too_many_requests' } };
    }
    return { status: 200, body: made };
  });

  form(signIn.action, async (request, reply, authorization, response) => {
    const outcome = await loginWithPasskey(deps, authorization, response, readSessionCookie(request, deps.config), clientAddress(request));
    if (outcome.type === 'refused') return sendLoginPage(request, reply, deps, authorization, { status: 401, message: 'passkeyFailed' });
    return sendSignedIn(request, reply, deps, authorization, outcome);
  });

  options(second.options, async (request, authorization) => {
    const made = await loginPasskeySecondFactorOptions(deps, authorization, readPendingSignInCookie(request, deps.config));
    return made === undefined ? { status: 400, body: { error: 'sign_in_expired' } } : { status: 200, body: made };
  });

  form(second.action, async (request, reply, authorization, response, raw) => {
    const kinds = kindsOf(formField(raw, 'kinds'));
    const method = firstCodeMethod(kinds);
    const outcome = await loginWithPasskeySecondFactor(deps, authorization, response, readPendingSignInCookie(request, deps.config), readSessionCookie(request, deps.config), clientAddress(request));
    return sendSecondFactorAnswer(request, reply, deps, authorization, outcome, { method, kinds, message: 'passkeyFailed' });
  });
}

/** An options route's answer: JSON, never cached. */
interface Answer {
  status: number;
  body: unknown;
}

function json(reply: FastifyReply, status: number, body: unknown): FastifyReply {
  return reply.code(status).header('cache-control', 'no-store').type('application/json; charset=utf-8').send(JSON.stringify(body));
}
