import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { validateAuthorization } from '../../oauth/authorize/authorize.ts';
import { emailCodeForLogin, loginWithPassword, loginWithSecondFactor, type SecondFactorOutcome, type SignedIn } from '../../oauth/authorize/login.ts';
import { carriedFields, type AuthorizationRequest } from '../../oauth/authorize/request.ts';
import type { RawParams } from '../../oauth/params.ts';
import { clientAddress } from '../client-address.ts';
import type { HttpDeps } from '../deps.ts';
import { clientNameFor } from '../../oauth/client-display.ts';
import { formActionSource } from '../plugins/security-headers.ts';
import { sendAccessDeniedPage, sendAuthorizationError, sendCode } from '../render/authorization.ts';
import { clearPendingSignInCookie, readPendingSignInCookie, readSessionCookie, setPendingSignInCookie, setSessionCookie } from './cookies.ts';
import { sendConsentPage } from './consent-page.ts';
import { csrfValid } from './csrf.ts';
import { formField, requestParams, useHtmlScope } from './html-scope.ts';
import { chooseLocale, type MessageKey } from './i18n.ts';
import { loginPath, sendLoginPage } from './login-page.ts';
import { passkeySecondFactorPaths } from './passkey-page.ts';
import { answerEmailCodeAsk, asksForEmailCode, codeMethodOf, firstCodeMethod, kindsOf, secondFactorPath, sendSecondFactorPage, type SecondFactorPage } from './second-factor-page.ts';
import { sendEnrolPage } from './enrol-page.ts';
import { FORM_POST_JS, LOGIN_CSS, PASSKEY_JS, WEBAUTHN_JS } from './views.ts';

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

  // The passkey ceremonies' scripts (passkey-page.ts): the same for everyone, cacheable like the stylesheet.
  app.get(`${deps.config.issuerPath}/assets/webauthn.js`, async (_request, reply) =>
    reply.header('cache-control', 'public, max-age=3600').header('x-content-type-options', 'nosniff').type('text/javascript; charset=utf-8').send(WEBAUTHN_JS),
  );
  app.get(`${deps.config.issuerPath}/assets/passkey.js`, async (_request, reply) =>
    reply.header('cache-control', 'public, max-age=3600').header('x-content-type-options', 'nosniff').type('text/javascript; charset=utf-8').send(PASSKEY_JS),
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
    if (outcome.type === 'second_factor') {
      // A right password, a user with a second factor: nothing issued yet, the sign-in held for this request.
      setPendingSignInCookie(reply, deps.config, outcome.pendingCookie);
      return sendCodePage(request, reply, deps, authorization, { method: firstCodeMethod(outcome.kinds), kinds: outcome.kinds });
    }
    if (outcome.type === 'enrol') {
      // A required level needs a second factor the user has none of: enrol one first (enrol-page.ts).
      setPendingSignInCookie(reply, deps.config, outcome.pendingCookie);
      return sendEnrolPage(request, reply, deps, authorization, outcome.choice);
    }
    return sendSignedIn(request, reply, deps, authorization, outcome);
  });

  // The second factor's page (issue 24): the code for the sign-in held by the pending cookie. The
  // carried request is validated again from scratch and must be the one the sign-in was held for.
  app.post(secondFactorPath(deps.config), async (request, reply) => {
    const raw = requestParams(request);
    const validation = await validateAuthorization(deps, raw);
    if (!validation.ok) return sendAuthorizationError(request, reply, deps, validation.target, validation.error);
    const authorization = validation.request;
    if (!csrfValid(request, deps, formField(raw, 'csrf_token'))) return sendLoginPage(request, reply, deps, authorization, { status: 403, message: 'formExpired' });
    const { method, switched } = codeMethodOf({ method: formField(raw, 'method'), switch: formField(raw, 'switch') });
    const kinds = kindsOf(formField(raw, 'kinds'));
    if (switched) return sendCodePage(request, reply, deps, authorization, { method, kinds });
    if (asksForEmailCode(formField(raw, 'send'))) {
      const locale = chooseLocale(authorization.uiLocales, request.headers['accept-language']);
      const sent = await emailCodeForLogin(deps, authorization, readPendingSignInCookie(request, deps.config), { locale, ip: clientAddress(request) });
      return answerEmailCodeAsk(reply, sent, kinds, (shown) => sendCodePage(request, reply, deps, authorization, shown), () => {
        clearPendingSignInCookie(reply, deps.config);
        return sendLoginPage(request, reply, deps, authorization, { status: 400, message: 'secondFactorExpired' });
      });
    }

    const outcome = await loginWithSecondFactor(deps, authorization, formField(raw, 'code'), readPendingSignInCookie(request, deps.config), readSessionCookie(request, deps.config), clientAddress(request));
    return sendSecondFactorAnswer(request, reply, deps, authorization, outcome, { method, kinds, message: 'secondFactorFailed' });
  });
}

/**
 * A form that carries an authorization request (the second step's passkey, the enrolment page):
 * the request validated again from scratch (its error page when invalid), then the CSRF token
 * (the login form again, 403), then `act`.
 */
export function authorizationForm(
  app: FastifyInstance,
  deps: HttpDeps,
  path: string,
  act: (request: FastifyRequest, reply: FastifyReply, authorization: AuthorizationRequest, raw: RawParams) => Promise<FastifyReply>,
): void {
  app.post(path, async (request, reply) => {
    const raw = requestParams(request);
    const validation = await validateAuthorization(deps, raw);
    if (!validation.ok) return sendAuthorizationError(request, reply, deps, validation.target, validation.error);
    if (!csrfValid(request, deps, formField(raw, 'csrf_token'))) return sendLoginPage(request, reply, deps, validation.request, { status: 403, message: 'formExpired' });
    return act(request, reply, validation.request, raw);
  });
}

/**
 * What the second step answers, by a code or a passkey (passkey-routes.ts): its page again when
 * refused (`shown.message`) or throttled, the login form when nothing is held any more, else what
 * a sign-in answers.
 */
export async function sendSecondFactorAnswer(
  request: FastifyRequest,
  reply: FastifyReply,
  deps: HttpDeps,
  authorization: AuthorizationRequest,
  outcome: SecondFactorOutcome,
  shown: Pick<SecondFactorPage, 'method' | 'kinds'> & { message: MessageKey },
): Promise<FastifyReply> {
  const { method, kinds } = shown;
  if (outcome.type === 'second_factor_refused') return sendCodePage(request, reply, deps, authorization, { method, kinds, status: 401, message: shown.message, invalid: shown.message === 'secondFactorFailed' });
  if (outcome.type === 'throttled') {
    // As the password's: RFC 6585 §4, 429 with how long to wait; the sign-in stays held.
    reply.header('retry-after', String(outcome.retryAfter));
    return sendCodePage(request, reply, deps, authorization, { method, kinds, status: 429, message: 'tooManyAttempts', retryAfter: outcome.retryAfter });
  }
  if (outcome.type === 'enrol') {
    // The factor was right, but the level needs a passkey the user has none of: create one (enrol-page.ts).
    setPendingSignInCookie(reply, deps.config, outcome.pendingCookie);
    return sendEnrolPage(request, reply, deps, authorization, outcome.choice);
  }
  clearPendingSignInCookie(reply, deps.config);
  if (outcome.type === 'expired') return sendLoginPage(request, reply, deps, authorization, { status: 400, message: 'secondFactorExpired' });
  return sendSignedIn(request, reply, deps, authorization, outcome);
}

/** What a sign-in answers once the user proved who they are, by a password alone or with a second factor (or a passkey, passkey-routes.ts) alike (or an enrolment, enrol-page.ts). */
export async function sendSignedIn(request: FastifyRequest, reply: FastifyReply, deps: HttpDeps, authorization: AuthorizationRequest, outcome: SignedIn): Promise<FastifyReply> {
  if (outcome.type === 'error') {
    if (outcome.cookieValue !== undefined) setSessionCookie(reply, deps.config, outcome.cookieValue);
    return sendAuthorizationError(request, reply, deps, outcome.target, outcome.error);
  }
  if (outcome.type === 'denied') {
    // Signed in (the session serves the user's other clients), but not to this one: say why first.
    setSessionCookie(reply, deps.config, outcome.cookieValue);
    return sendAccessDeniedPage(request, reply, deps, outcome.request.target, (locale) => clientNameFor(outcome.request.client, locale), outcome.request.uiLocales, outcome.reason);
  }
  setSessionCookie(reply, deps.config, outcome.cookieValue);
  // A third-party client: the consent page, for the session just started (consent-route.ts takes the answer).
  if (outcome.type === 'consent') return sendConsentPage(request, reply, deps, authorization, outcome.session);
  // 303: the browser must not repeat the POST, with its password or code, to the client (RFC 9700 §4.12).
  // (form_post answers with its page instead: the browser then posts only the response's fields.)
  return sendCode(request, reply, deps, outcome.target, outcome.code, 303);
}

/** The second factor's page of the login page (and of a step-up, authorization.ts): the request's fields carried, its display and language. */
export function sendCodePage(request: FastifyRequest, reply: FastifyReply, deps: HttpDeps, authorization: AuthorizationRequest, options: Pick<SecondFactorPage, 'method' | 'kinds' | 'status' | 'message' | 'retryAfter' | 'invalid' | 'sentTo'>): FastifyReply {
  const locale = chooseLocale(authorization.uiLocales, request.headers['accept-language']);
  // The page's POST ends in a 303 to the redirect_uri, which Chromium checks against form-action.
  const formAction = formActionSource(authorization.target.redirectUri);
  return sendSecondFactorPage(request, reply, deps, {
    ...options,
    locale,
    display: authorization.display,
    clientName: clientNameFor(authorization.client, locale),
    clientIntro: 'signInTo',
    action: secondFactorPath(deps.config),
    hidden: carriedFields(authorization),
    passkey: passkeySecondFactorPaths(deps.config),
    formActionSources: formAction === undefined ? [] : [formAction],
  });
}
