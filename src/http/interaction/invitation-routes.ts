import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { IdentityError } from '../../identity/errors.ts';
import { PasswordRefused, refusalMessageKey } from '../../identity/password-policy.ts';
import { ACCOUNT_CLIENT_ID } from '../../oauth/account/security.ts';
import { acceptInvitation, INVITATION_PAGE, invitationLinkStatus } from '../../oauth/account/invitation.ts';
import { acceptInvitationWithPasskey, invitationPasskeyOptions } from '../../oauth/account/invitation-passkey.ts';
import { parseResponseField } from '../../oauth/factors/passkey.ts';
import { PASSWORD_AMR, startBrowserSession } from '../../oauth/authorize/verify-credentials.ts';
import type { RawParams } from '../../oauth/params.ts';
import { clientAddress } from '../client-address.ts';
import type { HttpDeps } from '../deps.ts';
import { accountSecurityPath } from './account-routes.ts';
import { readSessionCookie, setSessionCookie } from './cookies.ts';
import { csrfToken, csrfValid, notCrossOrigin } from './csrf.ts';
import { formField, pageLocale, requestParams, useHtmlScope } from './html-scope.ts';
import { messages, type Locale, type MessageKey } from './i18n.ts';
import { PASSKEY_CSP, passkeyScripts, type PasskeyForm } from './passkey-page.ts';
import { renderView, sendPage } from './views.ts';

/**
 * The page of an invitation's link (docs/invitations.md): a GET shows the form and spends
 * nothing (mail scanners and link previews fetch links first); the POST chooses the password,
 * makes the account and signs the invitee in (AM77), then sends them to the account page. The
 * decisions are the core's (src/oauth/account/invitation.ts). As the reset page: no-store,
 * `Referrer-Policy: no-referrer` (the token is in the URL), the strict CSP, the CSRF token.
 *
 * Instead of a password the invitee may make a passkey (AM100): the page's passkey form (shown by
 * passkey.js, a file from our origin, so the CSP stays strict) fetches its options from
 * `…/passkey/options` and posts the browser's answer to `…/passkey`; the account is made with the
 * passkey and no password (src/oauth/account/invitation-passkey.ts) and signed in as by a passkey
 * sign-in. Every POST carries the CSRF token and is refused when the browser says it came from
 * another origin (notCrossOrigin, AM103).
 */
export async function invitationRoutes(app: FastifyInstance, deps: HttpDeps): Promise<void> {
  useHtmlScope(app, deps);
  const path = `${deps.config.issuerPath}${INVITATION_PAGE}`;
  const passkeyPaths = { action: `${path}/passkey`, options: `${path}/passkey/options` };
  const page = (request: FastifyRequest, reply: FastifyReply) => new InvitationView(request, reply, deps, path, passkeyPaths);
  const origin = new URL(deps.config.issuer).origin;
  /** The CSRF token and the browser's word on where the POST came from (AM103). */
  const forged = (request: FastifyRequest, raw: RawParams) => !notCrossOrigin(request, origin) || !csrfValid(request, deps, formField(raw, 'csrf_token'));

  app.get(path, async (request, reply) => {
    const token = (request.query as Record<string, unknown> | undefined)?.token;
    const invitation = await invitationLinkStatus(deps, token);
    return invitation === undefined ? page(request, reply).send('gone', { status: 410 }) : page(request, reply).send('form', { token: token as string, email: invitation.email });
  });

  /**
   * A form POST of the page: the link live (else the spent-link page, 410) and the POST not forged
   * (else the form again, 403), then `act` with the page, the fields and what redraws the form.
   */
  const form = (url: string, act: (view: InvitationView, raw: RawParams, again: { token: string; email: string }, request: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply>) =>
    app.post(url, async (request, reply) => {
      const view = page(request, reply);
      const raw = requestParams(request);
      const token = formField(raw, 'token');
      const shown = await invitationLinkStatus(deps, token);
      if (shown === undefined) return view.send('gone', { status: 410 });
      const again = { token, email: shown.email };
      if (forged(request, raw)) return view.send('form', { ...again, status: 403, message: 'resetForged' });
      return act(view, raw, again, request, reply);
    });

  form(path, async (view, raw, again, request, reply) => {
    const { token } = again;
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

  // The passkey's options (JSON, for passkey.js): for a live link only; never cached.
  app.post(passkeyPaths.options, async (request, reply) => {
    const raw = requestParams(request);
    if (forged(request, raw)) return json(reply, 403, { error: 'form_expired' });
    const options = await invitationPasskeyOptions(deps, formField(raw, 'token'));
    return options === undefined ? json(reply, 410, { error: 'invitation_gone' }) : json(reply, 200, options);
  });

  form(passkeyPaths.action, async (view, raw, again, request, reply) => {
    const { token } = again;
    const response = parseResponseField(formField(raw, 'response'));
    if (response === undefined) return view.send('form', { ...again, status: 400, message: 'invitationPasskeyRefused' });
    const ip = clientAddress(request);
    const outcome = await acceptInvitationWithPasskey(deps, { token, response, ip });
    if (outcome.type === 'gone') return view.send('gone', { status: 410 });
    if (outcome.type === 'refused') return view.send('form', { ...again, status: 400, message: 'invitationPasskeyRefused' });
    if (outcome.type === 'taken') return view.send('form', { ...again, status: 409, message: 'invitationTaken' });
    // Signed in as a passkey sign-in signs in (the passkey's amr and mfa, passkey-sign-in.ts).
    const started = await startBrowserSession(deps, { user: outcome.user, amr: outcome.amr, clientId: ACCOUNT_CLIENT_ID, ip }, readSessionCookie(request, deps.config));
    setSessionCookie(reply, deps.config, started.cookieValue);
    return reply.code(303).header('cache-control', 'no-store').redirect(`${accountSecurityPath(deps.config)}?ui_locales=${view.locale}`, 303);
  });
}

function json(reply: FastifyReply, status: number, body: unknown): FastifyReply {
  return reply.code(status).header('cache-control', 'no-store').type('application/json; charset=utf-8').send(JSON.stringify(body));
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
  private readonly passkeyPaths: { action: string; options: string };
  constructor(request: FastifyRequest, reply: FastifyReply, deps: HttpDeps, action: string, passkeyPaths: { action: string; options: string }) {
    this.request = request;
    this.reply = reply;
    this.deps = deps;
    this.action = action;
    this.passkeyPaths = passkeyPaths;
    this.locale = pageLocale(request);
    this.t = messages(this.locale, deps.config.theme);
  }

  send(mode: 'form' | 'gone', options: Options = {}): FastifyReply {
    const { t, locale } = this;
    // The passkey choice, shown by passkey.js (hidden without script: then the password form alone).
    const passkey: PasskeyForm | undefined =
      mode === 'form'
        ? { ...this.passkeyPaths, ceremony: 'register', label: t.invitationPasskeySubmit, errorText: t.invitationPasskeyRefused, hidden: [['token', options.token ?? ''], ['ui_locales', locale]], separator: t.invitationPasskeyOr, secondary: true }
        : undefined;
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
      passkey,
      scripts: passkey === undefined ? [] : passkeyScripts(this.deps.config),
    });
    return sendPage(this.reply, options.status ?? 200, html, passkey === undefined ? {} : PASSKEY_CSP);
  }
}
