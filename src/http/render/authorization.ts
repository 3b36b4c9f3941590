/**
 * How the authorization endpoint's answers reach the browser: by the request's response mode
 * (src/oauth/authorize/response-modes/) — a redirect to the verified redirect_uri carrying the
 * code or the error in its query or fragment, or the form_post page that posts them there (RFC
 * 6749 §4.1.2, §4.1.2.1; OAuth 2.0 Form Post Response Mode §2) — always with `iss` (RFC 9207 §2);
 * or an HTML error page when the client or redirect_uri could not be verified.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { DeniedReason, RedirectTarget } from '../../oauth/authorize/request.ts';
import type { Delivery, ResponseParams } from '../../oauth/authorize/response-modes/mode.ts';
import { AccessDenied, InvalidRedirectUri, type OAuthError } from '../../oauth/errors.ts';
import { POLICY_REFUSAL, UNVERIFIED_EMAIL_REFUSAL } from '../../oauth/policy/evaluate.ts';
import type { HttpDeps } from '../deps.ts';
import { chooseLocale, messages } from '../interaction/i18n.ts';
import { type PageConfig, renderView, sendPage } from '../interaction/views.ts';
import { formActionSource } from '../plugins/security-headers.ts';
import { toOAuthError } from './errors.ts';

export { withParams } from '../../oauth/authorize/response-modes/query.ts';

/** A redirect that is never cached and leaks no Referer. 303 after a POST that carried a password (RFC 9700 §4.12). */
export function sendRedirect(reply: FastifyReply, location: string, status: 302 | 303 = 302): FastifyReply {
  return reply.code(status).header('location', location).header('cache-control', 'no-store').header('pragma', 'no-cache').header('referrer-policy', 'no-referrer').send();
}

/**
 * The success response: code, state when sent, iss (RFC 6749 §4.1.2, RFC 9207 §2), by the
 * request's response mode. `status` is the redirect's: 303 after the login POST (RFC 9700 §4.12).
 */
export function sendCode(request: FastifyRequest, reply: FastifyReply, deps: Pick<HttpDeps, 'config'>, target: RedirectTarget, code: string, status: 302 | 303 = 302): FastifyReply {
  return deliver(request, reply, deps, target, { code, state: target.state, iss: deps.config.issuer }, status);
}

/**
 * An error after the redirect_uri was verified: error, error_description, state and iss, and
 * nothing else, never a code (OIDC Core §3.1.2.6), by the request's response mode (query when the
 * mode itself was the error). An unexpected failure becomes server_error or
 * temporarily_unavailable, logged in full, rather than a bare 5xx page (AZ-26).
 */
export function sendAuthorizationError(request: FastifyRequest, reply: FastifyReply, deps: Pick<HttpDeps, 'config'>, target: RedirectTarget, error: unknown): FastifyReply {
  const oauthError = toOAuthError(error, request);
  if (!oauthError.redirectable) return sendErrorPage(request, reply, deps.config, oauthError);
  return deliver(request, reply, deps, target, { error: oauthError.error, error_description: oauthError.description, state: target.state, iss: deps.config.issuer });
}

function deliver(request: FastifyRequest, reply: FastifyReply, deps: Pick<HttpDeps, 'config'>, target: RedirectTarget, params: ResponseParams, status: 302 | 303 = 302): FastifyReply {
  const delivery: Delivery = target.responseMode.deliver(target.redirectUri, params);
  if (delivery.type === 'redirect') return sendRedirect(reply, delivery.location, status);
  return sendFormPostPage(request, reply, deps.config, delivery);
}

/**
 * The form_post page (OAuth 2.0 Form Post Response Mode §2): a form of hidden fields whose action
 * is the verified redirect_uri, submitted at once by our script file (`/assets/form-post.js`), or
 * by the user with the <noscript> button. Eta escapes every value and the action for HTML. Its
 * policy adds only `script-src 'self'` and the redirect_uri's origin as a `form-action`: no inline
 * script, no framing. Never cached (it carries a code) and, like every answer, Referrer-Policy:
 * no-referrer, so the POST carries no Referer with the request's parameters. 200: a redirect's
 * body is never shown.
 */
function sendFormPostPage(request: FastifyRequest, reply: FastifyReply, config: PageConfig, delivery: Extract<Delivery, { type: 'form_post' }>): FastifyReply {
  const locale = chooseLocale(uiLocalesOf(request), request.headers['accept-language']);
  const t = messages(locale, config.theme);
  const html = renderView('form-post', { base: config.issuerPath, theme: config.theme, lang: locale, t, title: t.formPostTitle, display: 'page', action: delivery.action, fields: delivery.fields });
  const formAction = formActionSource(delivery.action);
  return sendPage(reply, 200, html, { formActionSources: formAction === undefined ? [] : [formAction], scriptSources: ["'self'"] });
}

/**
 * The authorization policy refused the signed-in user (docs/authorization.md): a page in the
 * user's language that says so, with one control that delivers `access_denied` to the client by
 * the request's response mode — a link for a redirect, a form (submitted by the user, no script)
 * for form_post. The user reads why before the application gets the error.
 */
export function sendAccessDeniedPage(request: FastifyRequest, reply: FastifyReply, deps: Pick<HttpDeps, 'config'>, target: RedirectTarget, clientName: (locale: string) => string, uiLocales: string | undefined, reason?: DeniedReason): FastifyReply {
  const locale = chooseLocale(uiLocales, request.headers['accept-language']);
  const t = messages(locale, deps.config.theme);
  // An unverified address (require_verified_email): the user can mend it, so the page says how (AM58).
  const unverified = reason === 'email_unverified';
  const error = new AccessDenied(unverified ? UNVERIFIED_EMAIL_REFUSAL : POLICY_REFUSAL);
  const delivery = target.responseMode.deliver(target.redirectUri, { error: error.error, error_description: error.description, state: target.state, iss: deps.config.issuer });
  const html = renderView('access-denied', {
    base: deps.config.issuerPath,
    theme: deps.config.theme,
    lang: locale,
    t,
    title: t.accessDeniedTitle,
    display: 'page',
    message: (unverified ? t.accessDeniedUnverified : t.accessDenied).replace('{client}', () => clientName(locale)),
    profilePath: unverified ? `${deps.config.issuerPath}/account/profile?ui_locales=${locale}` : undefined,
    location: delivery.type === 'redirect' ? delivery.location : undefined,
    action: delivery.type === 'form_post' ? delivery.action : undefined,
    fields: delivery.type === 'form_post' ? delivery.fields : [],
  });
  const formAction = delivery.type === 'form_post' ? formActionSource(delivery.action) : undefined;
  return sendPage(reply, 403, html, { formActionSources: formAction === undefined ? [] : [formAction] });
}

/** What the user was doing when the error page is shown: its title and plain words depend on it. */
export type PageContext = 'signIn' | 'signOut';

/**
 * The HTML error page (`base` is the issuer's path), in the language the request or the browser asks for: a plain-language
 * message for the end user (by error code, in their language), and in small print the error code
 * and the protocol's error_description, which is for the application's developer (RFC 6749
 * §4.1.2.1: "used to assist the client developer") and so stays English. A "back to the
 * application" link only when the error names one (InvalidRedirectUri of a known client).
 */
export function sendErrorPage(request: FastifyRequest, reply: FastifyReply, config: PageConfig, error: OAuthError, context: PageContext = 'signIn'): FastifyReply {
  const locale = chooseLocale(uiLocalesOf(request), request.headers['accept-language']);
  const t = messages(locale, config.theme);
  const texts: Readonly<Record<string, string>> = context === 'signOut' ? t.signOutErrors : t.signInErrors;
  const html = renderView('error', {
    base: config.issuerPath,
    theme: config.theme,
    lang: locale,
    t,
    title: context === 'signOut' ? t.signOutErrorTitle : t.errorTitle,
    display: 'page',
    message: Object.hasOwn(texts, error.error) ? texts[error.error] : texts.other,
    error: error.error,
    description: error.description,
    applicationUri: error instanceof InvalidRedirectUri ? error.applicationUri : undefined,
  });
  return sendPage(reply, error.status, html);
}

/** The error handler of the HTML route groups: everything thrown becomes the error page. */
export function htmlErrorHandler(config: PageConfig, context: PageContext = 'signIn') {
  return (error: unknown, request: FastifyRequest, reply: FastifyReply): FastifyReply => sendErrorPage(request, reply, config, toOAuthError(error, request), context);
}

function uiLocalesOf(request: FastifyRequest): string | undefined {
  for (const source of [request.query, request.body]) {
    const value = (source as Record<string, unknown> | undefined)?.ui_locales;
    if (typeof value === 'string') return value;
  }
  return undefined;
}
