import type { FastifyReply, FastifyRequest } from 'fastify';
import { type AuthorizationRequest, carriedFields } from '../../oauth/authorize/request.ts';
import { ENDPOINT_PATHS } from '../../oauth/discovery.ts';
import type { HttpDeps } from '../deps.ts';
import { clientNameFor, logoUriOf } from '../../oauth/client-display.ts';
import { formActionSource, imageSource } from '../plugins/security-headers.ts';
import { csrfToken } from './csrf.ts';
import { forgotPasswordPath } from './password-reset-routes.ts';
import { registerPath } from './registration-routes.ts';
import { selfRegistrationOn } from '../../oauth/account/registration.ts';
import { PASSKEY_CSP, passkeyScripts, passkeySignInPaths } from './passkey-page.ts';
import { chooseLocale, formatWait, messages, type MessageKey } from './i18n.ts';
import { renderView, sendPage } from './views.ts';

/** Where the form posts, under the issuer's path; the login route validates the carried request again from scratch. */
export function loginPath(config: Pick<HttpDeps['config'], 'issuerPath'>): string {
  return `${config.issuerPath}${ENDPOINT_PATHS.authorization}/login`;
}

export interface LoginPageOptions {
  status?: number;
  /** A message to show above the form. */
  message?: MessageKey;
  /** The username to keep in the field; login_hint otherwise (OIDC Core §3.1.2.1). */
  username?: string;
  /** Seconds until the next attempt may succeed: the `{wait}` of the message. */
  retryAfter?: number;
}

/**
 * The login form, in the template the request's display value picks and the language its
 * ui_locales (or the browser) asks for. The original authorization parameters travel as hidden
 * fields, so the form works without JavaScript and without server-side interaction state.
 */
export function sendLoginPage(request: FastifyRequest, reply: FastifyReply, deps: HttpDeps, authorization: AuthorizationRequest, options: LoginPageOptions = {}): FastifyReply {
  const locale = chooseLocale(authorization.uiLocales, request.headers['accept-language']);
  const t = messages(locale, deps.config.theme);
  const logoUri = logoUriOf(authorization.client, locale);
  const logoSource = logoUri === undefined ? undefined : imageSource(logoUri);
  const hidden = carriedFields(authorization);
  const html = renderView(`login-${authorization.display}`, {
    lang: locale,
    t,
    title: t.signInTitle,
    display: authorization.display,
    clientName: clientNameFor(authorization.client, locale),
    // Shown only when the page's policy can allow it (imageSource); alt="" as the name is beside it.
    logoUri: logoSource === undefined ? undefined : logoUri,
    // A wrong username or password is an error of both fields (WCAG 3.3.1): aria-invalid, and the
    // message is their description (aria-describedby).
    invalidCredentials: options.message === 'loginFailed',
    base: deps.config.issuerPath,
    theme: deps.config.theme,
    action: loginPath(deps.config),
    hidden,
    csrfToken: csrfToken(request, reply, deps),
    username: options.username ?? authorization.loginHint ?? '',
    // "Sign in with a passkey" and the browser's passkey autofill (issue 24; passkey-routes.ts):
    // shown by passkey.js, so without JavaScript the page is the password form alone.
    passkey: { ...passkeySignInPaths(deps.config), ceremony: 'authenticate', label: t.passkeySignIn, errorText: t.passkeyCancelled, hidden, conditional: true, separator: t.passkeyOr, secondary: true },
    scripts: passkeyScripts(deps.config),
    // "Forgot your password?" (issue 25; docs/password-reset.md): only while mail is on, in the page's language.
    forgotPassword: deps.mail === undefined ? undefined : `${forgotPasswordPath(deps.config)}?ui_locales=${locale}`,
    // "Create an account" (issue 25; docs/registration.md): only while self-registration is open or
    // by domain, in the page's language, carrying this authorization request to come back to.
    createAccount: selfRegistrationOn(deps) ? `${registerPath(deps.config)}?${new URLSearchParams({ ui_locales: locale, return_to: `${deps.config.issuerPath}${ENDPOINT_PATHS.authorization}?${new URLSearchParams(hidden)}` })}` : undefined,
    message: options.message === undefined ? undefined : t[options.message].replace('{wait}', () => formatWait(locale, options.retryAfter ?? 0)),
  });
  // The login POST ends in a 303 to the redirect_uri, which Chromium checks against form-action.
  const formAction = formActionSource(authorization.target.redirectUri);
  return sendPage(reply, options.status ?? 200, html, { formActionSources: formAction === undefined ? [] : [formAction], imgSources: logoSource === undefined ? [] : [logoSource], ...PASSKEY_CSP });
}
