import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { UserProfile } from '../../domain/user.ts';
import { IdentityError } from '../../identity/errors.ts';
import { accountOf } from '../../oauth/account/security.ts';
import { askForVerification, pendingChange, VERIFY_PAGE, verificationLinkStatus, verifyEmail, type VerificationRefusal } from '../../oauth/account/email-verification.ts';
import { changeOwnNames } from '../../oauth/account/profile.ts';
import type { RawParams } from '../../oauth/params.ts';
import { clientAddress } from '../client-address.ts';
import { sameOrigin } from '../console/csrf.ts';
import type { HttpDeps } from '../deps.ts';
import { backLinkOf } from '../../oauth/account/self-service.ts';
import { accountNav, carriedClientId, withClient } from './account-nav.ts';
import { sendAccountSignIn } from './account-pages.ts';
import { readSessionCookie } from './cookies.ts';
import { csrfToken, csrfValid } from './csrf.ts';
import { formField, pageLocale, requestParams, useHtmlScope } from './html-scope.ts';
import { formatWait, messages, type Locale, type MessageKey } from './i18n.ts';
import { renderView, sendPage } from './views.ts';

/** The profile page's path under the issuer (`/uas/account/profile`). */
export function accountProfilePath(config: Pick<HttpDeps['config'], 'issuerPath'>): string {
  return `${config.issuerPath}/account/profile`;
}

/** What each refusal of an ask says on the page, and which field it marks. */
const REFUSALS: Record<VerificationRefusal, { message: MessageKey; field?: 'email' }> = {
  off: { message: 'profileMailOff' },
  no_email: { message: 'profileInvalidEmail', field: 'email' },
  not_enabled: { message: 'formExpired' },
  already_verified: { message: 'profileAlreadyVerified' },
  invalid: { message: 'profileInvalidEmail', field: 'email' },
};

/**
 * The profile page (issue 25 item 3; docs/email-verification.md, "Users") and the page of the
 * mailed verification link. The decisions are the core's (src/oauth/account/email-verification.ts,
 * profile.ts); these only render.
 *
 * Profile page: the signed-in user's names (a form), their e-mail address with its verified
 * state, "send a verification link" and "change the address" (the new address shown as pending
 * until its link is followed). Without a usable session it sends the browser to the account
 * security page, whose sign-in form is the account pages' one (AM57). Every POST needs the
 * double-submit CSRF token (csrf.ts) and an Origin (or Referer) of the issuer's origin, as the
 * account security page's (SA53), so its pages send `Referrer-Policy: same-origin`. Each POST
 * answers 303 to the page (the browser does not repeat it), the outcome in the query.
 *
 * Link page: the GET shows a button and never consumes the link (mail scanners prefetch links,
 * AM53); the POST does. `Referrer-Policy: no-referrer` is kept (the token is in the URL).
 * Both: no-store (sendPage) and the strict CSP (no script).
 */
export async function profileRoutes(app: FastifyInstance, deps: HttpDeps): Promise<void> {
  useHtmlScope(app, deps);
  const page = accountProfilePath(deps.config);
  const paths = { page, names: `${page}/names`, sendLink: `${page}/send-link`, changeEmail: `${page}/change-email` };
  const verify = `${deps.config.issuerPath}${VERIFY_PAGE}`;
  const origin = new URL(deps.config.issuer).origin;

  const signedIn = async (request: FastifyRequest) => (await accountOf(deps, readSessionCookie(request, deps.config)))?.user;
  // The account page's sign-in form, which comes back here (account-pages.ts); a POST without a session is answered 401 with it.
  const toSignIn = (reply: FastifyReply) => sendAccountSignIn(reply.request, reply, deps, 'profile', reply.request.method === 'POST' ? { status: 401 } : {});
  const back = (reply: FastifyReply, outcome: string) => {
    const clientId = carriedClientId(reply.request, requestParams(reply.request));
    const to = `${page}?done=${outcome}${clientId === undefined ? '' : `&client_id=${encodeURIComponent(clientId)}`}`;
    return reply.code(303).header('cache-control', 'no-store').header('referrer-policy', 'same-origin').redirect(to, 303);
  };
  const forged = (request: FastifyRequest, raw: RawParams) => !sameOrigin(request, origin) || !csrfValid(request, deps, formField(raw, 'csrf_token'));

  app.get(page, async (request, reply) => {
    const user = await signedIn(request);
    if (user === undefined) return toSignIn(reply);
    const done = (request.query as Record<string, unknown> | undefined)?.done;
    const notice = done === 'names' ? 'profileNamesSaved' : done === 'sent' ? 'profileLinkSent' : undefined;
    return new ProfileView(request, reply, deps, paths).show(user, { notice });
  });

  app.post(paths.names, async (request, reply) => {
    const raw = requestParams(request);
    const user = await signedIn(request);
    if (user === undefined) return toSignIn(reply);
    const view = new ProfileView(request, reply, deps, paths);
    if (forged(request, raw)) return view.show(user, { status: 403, message: 'formExpired' });
    try {
      const changed = await changeOwnNames(deps, user, { givenName: formField(raw, 'given_name'), familyName: formField(raw, 'family_name'), ip: clientAddress(request) });
      if (changed === undefined) return toSignIn(reply);
      return back(reply, 'names');
    } catch (error) {
      if (error instanceof IdentityError && error.code === 'invalid_argument') return view.show(user, { status: 400, message: 'profileNamesInvalid', field: 'names' });
      throw error;
    }
  });

  // "Send a verification link" (the current address) and "Change the address" (a link to the new one).
  for (const [path, field] of [
    [paths.sendLink, undefined],
    [paths.changeEmail, 'new_email'],
  ] as const) {
    app.post(path, async (request, reply) => {
      const raw = requestParams(request);
      const account = await accountOf(deps, readSessionCookie(request, deps.config));
      if (account === undefined) return toSignIn(reply);
      const { user } = account;
      const view = new ProfileView(request, reply, deps, paths);
      if (forged(request, raw)) return view.show(user, { status: 403, message: 'formExpired' });
      const newEmail = field === undefined ? undefined : formField(raw, field);
      if (field !== undefined && newEmail === '') return view.show(user, { status: 400, message: 'profileInvalidEmail', field: 'email' });
      const asked = await askForVerification(deps, account, { newEmail, locale: view.locale, ip: clientAddress(request) });
      if (asked.type === 'reauthenticate') return sendAccountSignIn(request, reply, deps, 'profile', { status: 401, message: 'profileChangeReauth' });
      if (asked.type === 'throttled') {
        reply.header('retry-after', String(asked.retryAfter));
        return view.show(user, { status: 429, message: 'profileThrottled', retryAfter: asked.retryAfter });
      }
      if (asked.type === 'refused') {
        const refusal = REFUSALS[asked.reason];
        return view.show(user, { status: asked.reason === 'off' ? 404 : 400, message: refusal.message, ...(refusal.field ? { field: refusal.field } : {}) });
      }
      return back(reply, 'sent');
    });
  }

  app.get(verify, async (request, reply) => {
    const token = (request.query as Record<string, unknown> | undefined)?.token;
    const view = new ProfileView(request, reply, deps, paths);
    // Never consumed here: mail scanners and link previews fetch the link before the user does (AM53).
    const status = await verificationLinkStatus(deps, token);
    if (status.type === 'gone') return view.link({ mode: 'gone', status: 410 });
    return view.link({ mode: 'form', token: token as string, intro: view.t.verifyIntro.replace('{email}', () => status.email).replace('{username}', () => status.username) });
  });

  app.post(verify, async (request, reply) => {
    const raw = requestParams(request);
    const view = new ProfileView(request, reply, deps, paths);
    const token = formField(raw, 'token');
    if (!csrfValid(request, deps, formField(raw, 'csrf_token'))) {
      const status = await verificationLinkStatus(deps, token);
      if (status.type === 'gone') return view.link({ mode: 'gone', status: 410 });
      return view.link({ mode: 'form', status: 403, message: view.t.formExpired, token, intro: view.t.verifyIntro.replace('{email}', () => status.email).replace('{username}', () => status.username) });
    }
    const outcome = await verifyEmail(deps, { token, locale: view.locale, ip: clientAddress(request) });
    if (outcome.type === 'gone') return view.link({ mode: 'gone', status: 410 });
    return view.link({ mode: 'done', done: view.t.verifyDone.replace('{email}', () => outcome.email) });
  });
}

interface ProfilePaths {
  page: string;
  names: string;
  sendLink: string;
  changeEmail: string;
}

interface ShowOptions {
  status?: number;
  notice?: MessageKey | undefined;
  message?: MessageKey;
  retryAfter?: number;
  field?: 'names' | 'email';
}

/** The two pages, in the language of `ui_locales` or the browser. */
class ProfileView {
  readonly locale: Locale;
  readonly t: ReturnType<typeof messages>;
  readonly #at: { request: FastifyRequest; reply: FastifyReply; deps: HttpDeps; paths: ProfilePaths };
  constructor(request: FastifyRequest, reply: FastifyReply, deps: HttpDeps, paths: ProfilePaths) {
    this.#at = { request, reply, deps, paths };
    this.locale = pageLocale(request);
    this.t = messages(this.locale, deps.config.theme);
  }

  async show(user: UserProfile, options: ShowOptions = {}): Promise<FastifyReply> {
    const { t, locale } = this;
    const { deps, paths, request, reply } = this.#at;
    const pending = await pendingChange(deps, user);
    const text = (key: MessageKey | undefined) => (key === undefined ? undefined : t[key].replace('{wait}', () => formatWait(locale, options.retryAfter ?? 0)).replace('{email}', () => pending ?? user.email ?? ''));
    reply.header('referrer-policy', 'same-origin');
    // The account pages' navigation and back link (account-nav.ts); the forms carry the client_id so they stay.
    const clientId = carriedClientId(request, requestParams(request));
    const backLink = await backLinkOf(deps, clientId, locale);
    const html = renderView('account-profile', {
      nav: accountNav(deps.config, t, 'profile', backLink),
      base: deps.config.issuerPath,
      theme: deps.config.theme,
      lang: locale,
      t,
      title: t.profileTitle,
      display: 'page',
      // The layout's meta must agree with the header: a no-referrer page's form posts `Origin: null`, and the same-origin check would refuse it.
      referrer: 'same-origin',
      username: user.username,
      givenName: user.givenName ?? '',
      familyName: user.familyName ?? '',
      email: user.email,
      verified: user.emailVerified,
      pending: pending === undefined ? undefined : t.profilePending.replace('{email}', () => pending),
      mailOff: deps.mail === undefined,
      actions: Object.fromEntries(Object.entries(paths).map(([key, path]) => [key, withClient(path, backLink?.clientId)])),
      csrfToken: csrfToken(request, reply, deps),
      notice: text(options.notice),
      message: text(options.message),
      field: options.field,
    });
    return sendPage(reply, options.status ?? 200, html);
  }

  link(options: { mode: 'form' | 'gone' | 'done'; status?: number; token?: string; intro?: string; done?: string; message?: string }): FastifyReply {
    const { deps, request, reply, paths } = this.#at;
    const html = renderView('verify-email', {
      base: deps.config.issuerPath,
      theme: deps.config.theme,
      lang: this.locale,
      t: this.t,
      title: this.t.verifyTitle,
      display: 'page',
      mode: options.mode,
      action: `${deps.config.issuerPath}${VERIFY_PAGE}`,
      profilePath: paths.page,
      csrfToken: csrfToken(request, reply, deps),
      token: options.token ?? '',
      intro: options.intro,
      done: options.done,
      message: options.message,
    });
    return sendPage(reply, options.status ?? 200, html);
  }
}
