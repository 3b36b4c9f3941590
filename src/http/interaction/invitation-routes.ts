import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { IdentityError } from '../../identity/errors.ts';
import { PasswordRefused, refusalMessageKey } from '../../identity/password-policy.ts';
import { ACCOUNT_CLIENT_ID } from '../../oauth/account/security.ts';
import { acceptInvitation, INVITATION_PAGE, invitationLinkStatus } from '../../oauth/account/invitation.ts';
import { PASSWORD_AMR, startBrowserSession } from '../../oauth/authorize/verify-credentials.ts';
import { clientAddress } from '../client-address.ts';
import type { HttpDeps } from '../deps.ts';
import { accountSecurityPath } from './account-routes.ts';
import { readSessionCookie, setSessionCookie } from './cookies.ts';
import { csrfToken, csrfValid } from './csrf.ts';
import { formField, pageLocale, requestParams, useHtmlScope } from './html-scope.ts';
import { messages, type Locale, type MessageKey } from './i18n.ts';
import { renderView, sendPage } from './views.ts';

/**
 * The page of an invitation's link (docs/invitations.md): a GET shows the form and spends
 * nothing (mail scanners and link previews fetch links first); the POST chooses the password,
 * makes the account and signs the invitee in (AM77), then sends them to the account page. The
 * decisions are the core's (src/oauth/account/invitation.ts). As the reset page: no-store,
 * `Referrer-Policy: no-referrer` (the token is in the URL), the strict CSP, the CSRF token.
 */
export async function invitationRoutes(app: FastifyInstance, deps: HttpDeps): Promise<void> {
  useHtmlScope(app, deps);
  const path = `${deps.config.issuerPath}${INVITATION_PAGE}`;
  const page = (request: FastifyRequest, reply: FastifyReply) => new InvitationView(request, reply, deps, path);

  app.get(path, async (request, reply) => {
    const token = (request.query as Record<string, unknown> | undefined)?.token;
    const invitation = await invitationLinkStatus(deps, token);
    return invitation === undefined ? page(request, reply).send('gone', { status: 410 }) : page(request, reply).send('form', { token: token as string, email: invitation.email });
  });

  app.post(path, async (request, reply) => {
    const view = page(request, reply);
    const raw = requestParams(request);
    const token = formField(raw, 'token');
    const shown = await invitationLinkStatus(deps, token);
    if (shown === undefined) return view.send('gone', { status: 410 });
    const again = { token, email: shown.email };
    if (!csrfValid(request, deps, formField(raw, 'csrf_token'))) return view.send('form', { ...again, status: 403, message: 'resetForged' });
    try {
      const ip = clientAddress(request);
      const outcome = await acceptInvitation(deps, { token, password: raw.password, confirmation: raw.confirmation, ip });
      if (outcome.type === 'mismatch') return view.send('form', { ...again, status: 400, message: 'resetMismatch' });
      if (outcome.type === 'gone') return view.send('gone', { status: 410 });
      if (outcome.type === 'taken') return view.send('form', { ...again, status: 409, message: 'invitationTaken' });
      // Signed in with the password just chosen (amr pwd), as the account page's own sign-in does.
      const started = await startBrowserSession(deps, { user: outcome.user, amr: PASSWORD_AMR, clientId: ACCOUNT_CLIENT_ID, ip }, readSessionCookie(request, deps.config));
      setSessionCookie(reply, deps.config, started.cookieValue);
      // 303: the browser must not repeat the POST; the account page is read afresh, signed in.
      return reply.code(303).header('cache-control', 'no-store').redirect(`${accountSecurityPath(deps.config)}?ui_locales=${view.locale}`, 303);
    } catch (error) {
      // The rule that refused it, in the page's language; the link stays usable.
      if (error instanceof PasswordRefused) return view.send('form', { ...again, status: 400, message: refusalMessageKey(error.reason), minLength: error.minLength });
      if (error instanceof IdentityError && error.code === 'invalid_argument') return view.send('form', { ...again, status: 400, message: 'resetInvalidPassword' });
      throw error;
    }
  });
}

interface Options {
  status?: number;
  message?: MessageKey;
  minLength?: number;
  token?: string;
  email?: string;
}

/** The page, in the language of `ui_locales` or the browser. */
class InvitationView {
  readonly locale: Locale;
  private readonly t: ReturnType<typeof messages>;
  private readonly request: FastifyRequest;
  private readonly reply: FastifyReply;
  private readonly deps: HttpDeps;
  private readonly action: string;
  constructor(request: FastifyRequest, reply: FastifyReply, deps: HttpDeps, action: string) {
    this.request = request;
    this.reply = reply;
    this.deps = deps;
    this.action = action;
    this.locale = pageLocale(request);
    this.t = messages(this.locale, deps.config.theme);
  }

  send(mode: 'form' | 'gone', options: Options = {}): FastifyReply {
    const { t, locale } = this;
    const fill = (text: string) => text.replace('{min}', String(options.minLength ?? this.deps.config.passwordMinLength)).replace('{email}', options.email ?? '');
    const html = renderView('invitation', {
      base: this.deps.config.issuerPath,
      theme: this.deps.config.theme,
      lang: locale,
      t,
      title: t.invitationTitle,
      display: 'page',
      mode,
      action: this.action,
      csrfToken: csrfToken(this.request, this.reply, this.deps),
      token: options.token ?? '',
      intro: fill(t.invitationIntro),
      minLength: this.deps.config.passwordMinLength,
      message: options.message === undefined ? undefined : fill(t[options.message]),
    });
    return sendPage(this.reply, options.status ?? 200, html);
  }
}
