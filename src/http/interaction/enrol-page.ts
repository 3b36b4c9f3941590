/**
 * The login path's enrolment page (issue 24, item 2; src/oauth/authorize/enrol-on-login.ts): a
 * user without a second factor whose sign-in a required level needs one adds an authenticator app
 * or creates a passkey after the password, before anything is issued. The app's form posts to
 * `<authorization>/enrol` (enrol-route.ts) with the request's fields, the started enrolment and
 * the code; the passkey's to `<authorization>/enrol/passkey` with the registration's answer.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { LoginEnrolment } from '../../oauth/authorize/enrol-on-login.ts';
import type { EnrolmentChoice } from '../../oauth/authorize/login.ts';
import { carriedFields, type AuthorizationRequest } from '../../oauth/authorize/request.ts';
import { clientNameFor } from '../../oauth/client-display.ts';
import { ENDPOINT_PATHS } from '../../oauth/discovery.ts';
import type { HttpDeps } from '../deps.ts';
import { formActionSource } from '../plugins/security-headers.ts';
import { csrfToken } from './csrf.ts';
import { chooseLocale, messages, type MessageKey } from './i18n.ts';
import { PASSKEY_CSP, passkeyScripts, type PasskeyForm } from './passkey-page.ts';
import { renderView, sendPage } from './views.ts';

export function enrolPath(config: Pick<HttpDeps['config'], 'issuerPath'>): string {
  return `${config.issuerPath}${ENDPOINT_PATHS.authorization}/enrol`;
}

/** The enrolment page's passkey creation (enrol-route.ts): its form's action, and where its options come from. */
export function enrolPasskeyPaths(config: Pick<HttpDeps['config'], 'issuerPath'>): { action: string; options: string } {
  const base = `${enrolPath(config)}/passkey`;
  return { action: base, options: `${base}/options` };
}

/**
 * The enrolment page for `authorization`: what `choice` offers (enrolmentChoices), the
 * authenticator app's QR code, key and code field, and the "Create a passkey" form (a
 * registration ceremony, shown and driven by passkey.js; hidden without script). `message`: why
 * the page is shown again (`invalid`: the app's code field is marked so).
 */
export function sendEnrolPage(request: FastifyRequest, reply: FastifyReply, deps: HttpDeps, authorization: AuthorizationRequest, choice: EnrolmentChoice, options: { status?: number; message?: MessageKey; invalid?: boolean } = {}): FastifyReply {
  const locale = chooseLocale(authorization.uiLocales, request.headers['accept-language']);
  const t = messages(locale, deps.config.theme);
  const enrolment: LoginEnrolment | undefined = choice.totp;
  const hidden = carriedFields(authorization);
  const passkey: PasskeyForm | undefined = choice.kinds.includes('passkey')
    ? { ...enrolPasskeyPaths(deps.config), ceremony: 'register', label: t.enrolPasskeyCreate, errorText: t.accountPasskeyRefused, hidden, separator: enrolment === undefined ? undefined : t.passkeyOr, secondary: enrolment !== undefined }
    : undefined;
  const intro = enrolment === undefined ? (authorization.level.essential === 'phrh' ? t.enrolPasskeyDeviceBoundIntro : t.enrolPasskeyIntro) : passkey === undefined ? t.enrolIntro : t.enrolChoiceIntro;
  const html = renderView('enrol-totp', {
    lang: locale,
    t,
    title: t.enrolTitle,
    display: authorization.display,
    clientName: clientNameFor(authorization.client, locale),
    base: deps.config.issuerPath,
    theme: deps.config.theme,
    action: enrolPath(deps.config),
    hidden,
    csrfToken: csrfToken(request, reply, deps),
    intro,
    totp: enrolment === undefined ? undefined : { qrSvg: enrolment.qrSvg, secret: enrolment.secret, secretGroups: enrolment.secret.replace(/(.{4})(?=.)/g, '$1 '), expiresAt: String(enrolment.expiresAt), proof: enrolment.proof },
    passkey,
    scripts: passkey === undefined ? [] : passkeyScripts(deps.config),
    invalid: options.invalid === true,
    message: options.message === undefined ? undefined : t[options.message],
  });
  // The page's POST ends in a 303 to the redirect_uri, which Chromium checks against form-action.
  const formAction = formActionSource(authorization.target.redirectUri);
  return sendPage(reply, options.status ?? 200, html, { formActionSources: formAction === undefined ? [] : [formAction], ...(passkey === undefined ? {} : PASSKEY_CSP) });
}
