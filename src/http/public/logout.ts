import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ENDPOINT_PATHS } from '../../oauth/discovery.ts';
import { logout, validateLogout } from '../../oauth/logout.ts';
import { clientAddress } from '../client-address.ts';
import type { HttpDeps } from '../deps.ts';
import { clearSessionCookie, readSessionCookie } from '../interaction/cookies.ts';
import { csrfToken, csrfValid } from '../interaction/csrf.ts';
import { formField, requestParams, useHtmlScope } from '../interaction/html-scope.ts';
import { chooseLocale, messages, type MessageKey } from '../interaction/i18n.ts';
import { renderView, sendPage } from '../interaction/views.ts';
import { sendRedirect, withParams } from '../render/authorization.ts';

/**
 * RP-initiated logout (OpenID Connect RP-Initiated Logout 1.0 §2): GET and form POST. Without a
 * valid id_token_hint the user is asked first: a page whose form posts back here with a CSRF token
 * (the login form's double submit, csrf.ts); only that POST ends the session. HEAD never changes
 * anything, whatever it carries: it is a safe method (RFC 9110 §9.3.2) that link checkers and
 * prefetchers send freely.
 */
export async function logoutRoutes(app: FastifyInstance, deps: HttpDeps): Promise<void> {
  // Its error page speaks of signing out, and says the user may still be signed in.
  useHtmlScope(app, deps, 'signOut');
  const LOGOUT_PATH = logoutPath(deps);
  const handle = async (request: FastifyRequest, reply: FastifyReply) => {
    const raw = requestParams(request);
    // Carried through the confirmation form; a value no language list is that long is dropped.
    const uiLocales = typeof raw.ui_locales === 'string' && raw.ui_locales.length <= 256 ? raw.ui_locales : undefined;
    // Our confirmation form carries csrf_token; any other POST (a relying party's form) has none.
    const submitted = request.method === 'POST' && raw.csrf_token !== undefined;
    const confirmed = submitted && csrfValid(request, deps, formField(raw, 'csrf_token'));
    const result = await logout(deps, raw, readSessionCookie(request, deps.config), { confirmed, ip: clientAddress(request) });
    if (result.type === 'confirm') return sendConfirmation(request, reply, deps, uiLocales, submitted ? { status: 403, message: 'signOutExpired' } : {});
    if (result.clearCookie) clearSessionCookie(reply, deps.config);
    const redirect = result.redirect && withParams(result.redirect.uri, { state: result.redirect.state });
    // Front-Channel Logout 1.0 §3: the relying parties' logout pages load in iframes of the
    // signed-out page first; a post-logout redirect then follows by a refresh, and a link (LO9).
    if (redirect && result.frontChannel.length === 0) return sendRedirect(reply, redirect);
    const locale = chooseLocale(uiLocales, request.headers['accept-language']);
    const t = messages(locale, deps.config.theme);
    const view = { base: deps.config.issuerPath, theme: deps.config.theme, lang: locale, t, title: t.signedOutTitle, display: 'page', frontChannel: result.frontChannel, continueTo: redirect, refresh: redirect && { seconds: FRONT_CHANNEL_WAIT_SECONDS, url: redirect } };
    return sendPage(reply, 200, renderView('signed-out', view), { frameSources: [...new Set(result.frontChannel.map((uri) => new URL(uri).origin))].sort() });
  };
  // Before the GET route, so Fastify does not derive a HEAD route from it. A malformed request
  // still gets the error page's status; a valid one 200, as the page a GET would show.
  app.head(LOGOUT_PATH, async (request, reply) => {
    await validateLogout(deps, requestParams(request));
    return sendPage(reply, 200, '');
  });
  app.get(LOGOUT_PATH, handle);
  app.post(LOGOUT_PATH, handle);
}

/** How long the signed-out page gives the front-channel iframes before the post-logout redirect. */
const FRONT_CHANNEL_WAIT_SECONDS = 2;

/** The question "sign out?" with a form that posts back here with the CSRF token. */
function sendConfirmation(request: FastifyRequest, reply: FastifyReply, deps: HttpDeps, uiLocales: string | undefined, options: { status?: number; message?: MessageKey }): FastifyReply {
  const locale = chooseLocale(uiLocales, request.headers['accept-language']);
  const t = messages(locale, deps.config.theme);
  const html = renderView('logout-confirm', {
    lang: locale,
    t,
    title: t.signOutTitle,
    display: 'page',
    base: deps.config.issuerPath,
    theme: deps.config.theme,
    action: logoutPath(deps),
    csrfToken: csrfToken(request, reply, deps),
    uiLocales,
    message: options.message === undefined ? undefined : t[options.message],
  });
  return sendPage(reply, options.status ?? 200, html);
}

/** RP-initiated logout's path: the end_session_endpoint of discovery, under the issuer's path. */
function logoutPath(deps: HttpDeps): string {
  return `${deps.config.issuerPath}${ENDPOINT_PATHS.endSession}`;
}
