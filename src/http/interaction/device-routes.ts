import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { clientNameFor } from '../../oauth/client-display.ts';
import { confirmationFacts } from '../../oauth/confirmation-facts.ts';
import { ENDPOINT_PATHS } from '../../oauth/discovery.ts';
import { formatUserCode } from '../../oauth/device/user-code.ts';
import { decideDevice, emailCodeForDevice, lookUpUserCode, passkeyForDevice, passkeyOptionsForDevice, secondFactorForDevice, signInForDevice, stepUpForDevice, type PendingDevice } from '../../oauth/device/verification.ts';
import { parseResponseField } from '../../oauth/factors/passkey.ts';
import { findUsableSession } from '../../oauth/sessions.ts';
import type { RawParams } from '../../oauth/params.ts';
import { clientAddress } from '../client-address.ts';
import type { HttpDeps } from '../deps.ts';
import { clearPendingSignInCookie, readPendingSignInCookie, readSessionCookie, setPendingSignInCookie, setSessionCookie } from './cookies.ts';
import { describeScope } from './consent-page.ts';
import { csrfToken, csrfValid } from './csrf.ts';
import { formField, requestParams, useHtmlScope } from './html-scope.ts';
import { chooseLocale, formatWait, messages, type Locale, type MessageKey } from './i18n.ts';
import { answerEmailCodeAsk, asksForEmailCode, codeMethodOf, firstCodeMethod, kindsOf, sendSecondFactorPage, type SecondFactorPage } from './second-factor-page.ts';
import { renderView, sendPage } from './views.ts';

/**
 * The user-code page of the device flow (RFC 8628 §3.3), under the issuer at
 * `<issuer>/oauth2/device`: GET shows the form (`?user_code=` prefilled, from
 * verification_uri_complete, §3.3.1 — looked up only once the user submits it, so a link or a
 * prefetch does nothing). The form posts the code; a code that names a pending authorization
 * leads to the sign-in form (unless the browser's SSO session is usable), then to the
 * confirmation with the client's name and the requested scopes, where the user allows or denies.
 * Every form carries the double-submit CSRF token (csrf.ts); every step that looks a code up
 * takes a hit from the entry limits first (src/oauth/device/verification.ts). No script: the
 * pages live under the default strict CSP — except the second factor's page of a user with a
 * passkey, which loads the passkey scripts from our origin (passkey-page.ts).
 */
export async function deviceRoutes(app: FastifyInstance, deps: HttpDeps): Promise<void> {
  useHtmlScope(app, deps);
  const page = `${deps.config.issuerPath}${ENDPOINT_PATHS.deviceVerification}`;
  const paths = { code: page, login: `${page}/login`, secondFactor: `${page}/second-factor`, confirm: `${page}/confirm`, passkey: `${page}/second-factor/passkey`, passkeyOptions: `${page}/second-factor/passkey/options` };
  const passkey = { action: paths.passkey, options: paths.passkeyOptions };

  app.get(paths.code, async (request, reply) => sendCodePage(request, reply, deps, paths.code, { userCode: formField(requestParams(request), 'user_code').slice(0, 64) }));

  app.post(paths.code, async (request, reply) => {
    const raw = requestParams(request);
    const typed = formField(raw, 'user_code');
    if (!csrfValid(request, deps, formField(raw, 'csrf_token'))) return sendCodePage(request, reply, deps, paths.code, { status: 403, message: 'deviceFormExpired', userCode: typed });
    const device = await lookUp(request, reply, deps, paths.code, typed);
    if (!device) return reply;
    const session = await findUsableSession(deps, readSessionCookie(request, deps.config));
    if (!session) return sendLoginPage(request, reply, deps, paths.login, device);
    // Issue 24: a session below the client's policy's minimum: only the missing factor, then the confirmation.
    const stepUp = await stepUpForDevice(deps, device, session, clientAddress(request));
    if (stepUp) {
      setPendingSignInCookie(reply, deps.config, stepUp.pendingCookie);
      return sendCodeEntryPage(request, reply, deps, paths.secondFactor, device, { method: firstCodeMethod(stepUp.kinds), kinds: stepUp.kinds });
    }
    return sendConfirmPage(request, reply, deps, paths.confirm, device, session.userId);
  });

  app.post(paths.login, async (request, reply) => {
    const raw = requestParams(request);
    const typed = formField(raw, 'user_code');
    const username = formField(raw, 'username');
    if (!csrfValid(request, deps, formField(raw, 'csrf_token'))) return sendCodePage(request, reply, deps, paths.code, { status: 403, message: 'deviceFormExpired', userCode: typed });
    const device = await lookUp(request, reply, deps, paths.code, typed);
    if (!device) return reply;
    const credentials = { username, password: formField(raw, 'password') };
    const outcome = await signInForDevice(deps, device, credentials, readSessionCookie(request, deps.config), clientAddress(request));
    if (outcome.type === 'failed') return sendLoginPage(request, reply, deps, paths.login, device, { status: 401, message: 'loginFailed', username });
    if (outcome.type === 'throttled') {
      reply.header('retry-after', String(outcome.retryAfter));
      return sendLoginPage(request, reply, deps, paths.login, device, { status: 429, message: 'tooManyAttempts', username, retryAfter: outcome.retryAfter });
    }
    if (outcome.type === 'second_factor') {
      // As on the login page (issue 24): no session yet; the sign-in held for this device's code.
      setPendingSignInCookie(reply, deps.config, outcome.pendingCookie);
      return sendCodeEntryPage(request, reply, deps, paths.secondFactor, device, { method: firstCodeMethod(outcome.kinds), kinds: outcome.kinds, passkey });
    }
    setSessionCookie(reply, deps.config, outcome.cookieValue);
    return sendConfirmPage(request, reply, deps, paths.confirm, device, outcome.session.userId);
  });

  // The second factor's page: the login page's step (secondFactorForDevice), then the confirmation.
  app.post(paths.secondFactor, async (request, reply) => {
    const raw = requestParams(request);
    const typed = formField(raw, 'user_code');
    if (!csrfValid(request, deps, formField(raw, 'csrf_token'))) return sendCodePage(request, reply, deps, paths.code, { status: 403, message: 'deviceFormExpired', userCode: typed });
    const device = await lookUp(request, reply, deps, paths.code, typed);
    if (!device) return reply;
    const { method, switched } = codeMethodOf({ method: formField(raw, 'method'), switch: formField(raw, 'switch') });
    const kinds = kindsOf(formField(raw, 'kinds'));
    if (switched) return sendCodeEntryPage(request, reply, deps, paths.secondFactor, device, { method, kinds, passkey });
    if (asksForEmailCode(formField(raw, 'send'))) {
      const sent = await emailCodeForDevice(deps, device, readPendingSignInCookie(request, deps.config), { locale: texts(request, deps).locale, ip: clientAddress(request) });
      return answerEmailCodeAsk(reply, sent, kinds, (shown) => sendCodeEntryPage(request, reply, deps, paths.secondFactor, device, { ...shown, passkey }), () => {
        clearPendingSignInCookie(reply, deps.config);
        return sendLoginPage(request, reply, deps, paths.login, device, { status: 400, message: 'secondFactorExpired' });
      });
    }
    const outcome = await secondFactorForDevice(deps, device, formField(raw, 'code'), readPendingSignInCookie(request, deps.config), readSessionCookie(request, deps.config), clientAddress(request));
    return secondStepAnswered(request, reply, device, outcome, { method, kinds, message: 'secondFactorFailed' });
  });

  // The same step by a passkey (issue 24): its options for the held user (JSON, for the page's script), then the assertion.
  app.post(paths.passkeyOptions, async (request, reply) => {
    const raw = requestParams(request);
    if (!csrfValid(request, deps, formField(raw, 'csrf_token'))) return reply.code(403).header('cache-control', 'no-store').send({ error: 'form_expired' });
    const device = await lookUp(request, reply, deps, paths.code, formField(raw, 'user_code'));
    if (!device) return reply;
    const made = await passkeyOptionsForDevice(deps, device, readPendingSignInCookie(request, deps.config));
    return reply.code(made === undefined ? 400 : 200).header('cache-control', 'no-store').send(made ?? { error: 'sign_in_expired' });
  });
  app.post(paths.passkey, async (request, reply) => {
    const raw = requestParams(request);
    const typed = formField(raw, 'user_code');
    if (!csrfValid(request, deps, formField(raw, 'csrf_token'))) return sendCodePage(request, reply, deps, paths.code, { status: 403, message: 'deviceFormExpired', userCode: typed });
    const device = await lookUp(request, reply, deps, paths.code, typed);
    if (!device) return reply;
    const kinds = kindsOf(formField(raw, 'kinds'));
    const method = firstCodeMethod(kinds);
    const response = parseResponseField(formField(raw, 'response'));
    if (response === undefined) return sendCodeEntryPage(request, reply, deps, paths.secondFactor, device, { method, kinds, passkey, status: 400, message: 'passkeyFailed' });
    const outcome = await passkeyForDevice(deps, device, response, readPendingSignInCookie(request, deps.config), readSessionCookie(request, deps.config), clientAddress(request));
    return secondStepAnswered(request, reply, device, outcome, { method, kinds, message: 'passkeyFailed' });
  });

  /** What the second step answers, by a code or a passkey: its page again when refused or throttled, the login form when nothing is held, else the confirmation. */
  const secondStepAnswered = (request: FastifyRequest, reply: FastifyReply, device: PendingDevice, outcome: Awaited<ReturnType<typeof secondFactorForDevice>>, shown: Pick<SecondFactorPage, 'method' | 'kinds'> & { message: MessageKey }) => {
    const { method, kinds } = shown;
    if (outcome.type === 'second_factor_refused') return sendCodeEntryPage(request, reply, deps, paths.secondFactor, device, { method, kinds, passkey, status: 401, message: shown.message, invalid: shown.message === 'secondFactorFailed' });
    if (outcome.type === 'throttled') {
      reply.header('retry-after', String(outcome.retryAfter));
      return sendCodeEntryPage(request, reply, deps, paths.secondFactor, device, { method, kinds, passkey, status: 429, message: 'tooManyAttempts', retryAfter: outcome.retryAfter });
    }
    clearPendingSignInCookie(reply, deps.config);
    if (outcome.type === 'expired') return sendLoginPage(request, reply, deps, paths.login, device, { status: 400, message: 'secondFactorExpired' });
    setSessionCookie(reply, deps.config, outcome.cookieValue);
    return sendConfirmPage(request, reply, deps, paths.confirm, device, outcome.session.userId);
  };

  app.post(paths.confirm, async (request, reply) => {
    const raw = requestParams(request);
    const typed = formField(raw, 'user_code');
    const decision = formField(raw, 'decision');
    if (!csrfValid(request, deps, formField(raw, 'csrf_token'))) return sendCodePage(request, reply, deps, paths.code, { status: 403, message: 'deviceFormExpired', userCode: typed });
    if (decision !== 'approve' && decision !== 'deny') return sendCodePage(request, reply, deps, paths.code, { status: 400, message: 'deviceFormExpired', userCode: typed });
    const device = await lookUp(request, reply, deps, paths.code, typed, 'deviceNoLongerValid');
    if (!device) return reply;
    const session = await findUsableSession(deps, readSessionCookie(request, deps.config));
    if (!session) return sendLoginPage(request, reply, deps, paths.login, device);
    const decided = await decideDevice(deps, device, session, decision === 'approve', clientAddress(request));
    if (!decided) return sendCodePage(request, reply, deps, paths.code, { status: 400, message: 'deviceNoLongerValid', userCode: '' });
    const { t, locale } = texts(request, deps);
    const approved = decided.authorization.status === 'approved';
    // Refused by the client's authorization policy: the same explanation as the authorization
    // endpoint's refusal page (sendAccessDeniedPage), and its 403; the device polls access_denied.
    // An unverified address (require_verified_email): its words and the profile link, as that page's (AM106).
    const unverified = decided.reason === 'email_unverified';
    const { title, message } = decided.refusedByPolicy
      ? { title: t.accessDeniedTitle, message: (unverified ? t.accessDeniedUnverified : t.accessDenied).replace('{client}', () => clientNameFor(device.client, locale)) }
      : approved
        ? { title: t.deviceApprovedTitle, message: t.deviceApproved }
        : { title: t.deviceDeniedTitle, message: t.deviceDenied };
    const profilePath = unverified ? `${deps.config.issuerPath}/account/profile?ui_locales=${locale}` : undefined;
    const html = renderView('device-done', { base: deps.config.issuerPath, theme: deps.config.theme, lang: locale, t, display: 'page', title, message, profilePath });
    return sendPage(reply, decided.refusedByPolicy ? 403 : 200, html);
  });
}

/** The page's language: `ui_locales` when sent (OIDC Core §3.1.2.1), else the browser's. */
function texts(request: FastifyRequest, deps: Pick<HttpDeps, 'config'>): { locale: Locale; t: ReturnType<typeof messages> } {
  const raw: RawParams = requestParams(request);
  const uiLocales = typeof raw.ui_locales === 'string' && raw.ui_locales.length <= 256 ? raw.ui_locales : undefined;
  const locale = chooseLocale(uiLocales, request.headers['accept-language']);
  return { locale, t: messages(locale, deps.config.theme) };
}

/**
 * Looks the typed code up under the entry limits; when it names nothing pending, answers the code
 * page (400, or 429 with Retry-After once a budget is full) and returns undefined.
 */
async function lookUp(request: FastifyRequest, reply: FastifyReply, deps: HttpDeps, action: string, typed: string, notFound: MessageKey = 'deviceCodeNotFound'): Promise<PendingDevice | undefined> {
  const found = await lookUpUserCode(deps, typed, clientAddress(request));
  if (found.type === 'found') return found.device;
  if (found.type === 'throttled') {
    reply.header('retry-after', String(found.retryAfter));
    sendCodePage(request, reply, deps, action, { status: 429, message: 'deviceTooManyCodes', userCode: typed, retryAfter: found.retryAfter });
  } else {
    sendCodePage(request, reply, deps, action, { status: 400, message: notFound, userCode: typed, invalid: true });
  }
  return undefined;
}

interface PageOptions {
  status?: number;
  message?: MessageKey;
  retryAfter?: number;
}

function messageText(locale: Locale, t: ReturnType<typeof messages>, options: PageOptions): string | undefined {
  return options.message === undefined ? undefined : t[options.message].replace('{wait}', () => formatWait(locale, options.retryAfter ?? 0));
}

function sendCodePage(request: FastifyRequest, reply: FastifyReply, deps: HttpDeps, action: string, options: PageOptions & { userCode: string; invalid?: boolean }): FastifyReply {
  const { locale, t } = texts(request, deps);
  const html = renderView('device-code', {
    base: deps.config.issuerPath,
    theme: deps.config.theme,
    lang: locale,
    t,
    title: t.deviceTitle,
    display: 'page',
    action,
    csrfToken: csrfToken(request, reply, deps),
    userCode: options.userCode.slice(0, 64),
    invalid: options.invalid === true,
    message: messageText(locale, t, options),
  });
  return sendPage(reply, options.status ?? 200, html);
}

function sendLoginPage(request: FastifyRequest, reply: FastifyReply, deps: HttpDeps, action: string, device: PendingDevice, options: PageOptions & { username?: string } = {}): FastifyReply {
  const { locale, t } = texts(request, deps);
  const html = renderView('device-login', {
    base: deps.config.issuerPath,
    theme: deps.config.theme,
    lang: locale,
    t,
    title: t.signInTitle,
    display: 'page',
    clientName: clientNameFor(device.client, locale),
    invalidCredentials: options.message === 'loginFailed',
    action,
    hidden: [['user_code', formatUserCode(device.authorization.userCode)]],
    csrfToken: csrfToken(request, reply, deps),
    username: options.username ?? '',
    message: messageText(locale, t, options),
  });
  return sendPage(reply, options.status ?? 200, html);
}

/** The second factor's page of the user-code page: the login page's, carrying the device's user code. */
function sendCodeEntryPage(request: FastifyRequest, reply: FastifyReply, deps: HttpDeps, action: string, device: PendingDevice, options: Pick<SecondFactorPage, 'method' | 'kinds' | 'passkey' | 'status' | 'message' | 'retryAfter' | 'invalid' | 'sentTo'>): FastifyReply {
  const { locale } = texts(request, deps);
  return sendSecondFactorPage(request, reply, deps, {
    ...options,
    locale,
    display: 'page',
    clientName: clientNameFor(device.client, locale),
    clientIntro: 'deviceSignInFor',
    action,
    hidden: [['user_code', formatUserCode(device.authorization.userCode)]],
  });
}

async function sendConfirmPage(request: FastifyRequest, reply: FastifyReply, deps: HttpDeps, action: string, device: PendingDevice, userId: string): Promise<FastifyReply> {
  const { locale, t } = texts(request, deps);
  const scope = device.authorization.scope === '' ? [] : device.authorization.scope.split(' ');
  // The consent page's words: a resource server's declared value with the server's name, the servers by name.
  const facts = await confirmationFacts(deps, userId, scope);
  const described = describeScope(facts.servers, scope, locale, t, t.scopeNames);
  const html = renderView('device-confirm', {
    base: deps.config.issuerPath,
    theme: deps.config.theme,
    lang: locale,
    t,
    title: t.deviceConfirmTitle,
    display: 'page',
    clientName: clientNameFor(device.client, locale),
    scopes: [...described.scopes, ...described.audiences],
    userCode: formatUserCode(device.authorization.userCode),
    username: facts.username ?? '',
    action,
    csrfToken: csrfToken(request, reply, deps),
  });
  return sendPage(reply, 200, html);
}
