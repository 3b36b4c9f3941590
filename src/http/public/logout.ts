import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ENDPOINT_PATHS } from '../../oauth/discovery.ts';
import { logout } from '../../oauth/logout.ts';
import { clientAddress } from '../client-address.ts';
import type { HttpDeps } from '../deps.ts';
import { clearSessionCookie, readSessionCookie } from '../interaction/cookies.ts';
import { requestParams, useHtmlScope } from '../interaction/html-scope.ts';
import { chooseLocale, messages } from '../interaction/i18n.ts';
import { renderView, sendPage } from '../interaction/views.ts';
import { sendRedirect, withParams } from '../render/authorization.ts';

/** RP-initiated logout (OpenID Connect RP-Initiated Logout 1.0 §2): GET and form POST. */
export async function logoutRoutes(app: FastifyInstance, deps: HttpDeps): Promise<void> {
  useHtmlScope(app);
  const handle = async (request: FastifyRequest, reply: FastifyReply) => {
    const raw = requestParams(request);
    const result = await logout(deps, raw, readSessionCookie(request, deps.config), clientAddress(request));
    if (result.clearCookie) clearSessionCookie(reply, deps.config);
    if (result.redirect) return sendRedirect(reply, withParams(result.redirect.uri, { state: result.redirect.state }));
    const locale = chooseLocale(typeof raw.ui_locales === 'string' ? raw.ui_locales : undefined, request.headers['accept-language']);
    const t = messages(locale);
    return sendPage(reply, 200, renderView('signed-out', { lang: locale, t, title: t.signedOutTitle, display: 'page' }));
  };
  app.get(`/uas${ENDPOINT_PATHS.endSession}`, handle);
  app.post(`/uas${ENDPOINT_PATHS.endSession}`, handle);
}
