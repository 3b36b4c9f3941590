/**
 * The login path's enrolment page (issue 24, item 2; src/oauth/authorize/enrol-on-login.ts): a
 * user without a second factor whose sign-in a required level needs one adds an authenticator app
 * after the password, before anything is issued. The form posts to `<authorization>/enrol`
 * (enrol-route.ts) with the request's fields, the started enrolment and the code.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { LoginEnrolment } from '../../oauth/authorize/enrol-on-login.ts';
import { carriedFields, type AuthorizationRequest } from '../../oauth/authorize/request.ts';
import { clientNameFor } from '../../oauth/client-display.ts';
import { ENDPOINT_PATHS } from '../../oauth/discovery.ts';
import type { HttpDeps } from '../deps.ts';
import { formActionSource } from '../plugins/security-headers.ts';
import { csrfToken } from './csrf.ts';
import { chooseLocale, messages, type MessageKey } from './i18n.ts';
import { renderView, sendPage } from './views.ts';

export function enrolPath(config: Pick<HttpDeps['config'], 'issuerPath'>): string {
  return `${config.issuerPath}${ENDPOINT_PATHS.authorization}/enrol`;
}

/** The enrolment page for `authorization`: the QR code and key of `enrolment`, and the code field. */
export function sendEnrolPage(request: FastifyRequest, reply: FastifyReply, deps: HttpDeps, authorization: AuthorizationRequest, enrolment: LoginEnrolment, options: { status?: number; message?: MessageKey } = {}): FastifyReply {
  const locale = chooseLocale(authorization.uiLocales, request.headers['accept-language']);
  const t = messages(locale, deps.config.theme);
  const html = renderView('enrol-totp', {
    lang: locale,
    t,
    title: t.enrolTitle,
    display: authorization.display,
    clientName: clientNameFor(authorization.client, locale),
    base: deps.config.issuerPath,
    theme: deps.config.theme,
    action: enrolPath(deps.config),
    hidden: carriedFields(authorization),
    csrfToken: csrfToken(request, reply, deps),
    totp: { qrSvg: enrolment.qrSvg, secret: enrolment.secret, secretGroups: enrolment.secret.replace(/(.{4})(?=.)/g, '$1 '), expiresAt: String(enrolment.expiresAt), proof: enrolment.proof },
    message: options.message === undefined ? undefined : t[options.message],
  });
  // The page's POST ends in a 303 to the redirect_uri, which Chromium checks against form-action.
  const formAction = formActionSource(authorization.target.redirectUri);
  return sendPage(reply, options.status ?? 200, html, { formActionSources: formAction === undefined ? [] : [formAction] });
}
