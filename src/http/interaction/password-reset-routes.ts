import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { IdentityError } from '../../identity/errors.ts';
import { PasswordRefused, refusalMessageKey } from '../../identity/password-policy.ts';
import { askForReset, FORGOT_PAGE, RESET_PAGE, resetLinkStatus, resetPassword } from '../../oauth/account/password-reset.ts';
import { clientAddress } from '../client-address.ts';
import type { HttpDeps } from '../deps.ts';
import { afterAnswer } from './after-answer.ts';
import { csrfToken, csrfValid } from './csrf.ts';
import { formField, pageLocale, requestParams, useHtmlScope } from './html-scope.ts';
import { formatWait, messages, type Locale, type MessageKey } from './i18n.ts';
import { renderView, sendPage } from './views.ts';

/** The "Forgot your password?" page's path (`/uas/account/forgot-password`), linked from the login page while mail is on. */
export function forgotPasswordPath(config: Pick<HttpDeps['config'], 'issuerPath'>): string {
  return `${config.issuerPath}${FORGOT_PAGE}`;
}

/**
 * Password reset's pages (docs/password-reset.md): "Forgot your password?" and the page of the
 * mailed link. The decisions are the core's (src/oauth/account/password-reset.ts); these only
 * render. Both pages: no-store (sendPage), `Referrer-Policy: no-referrer` (the security headers'
 * default, kept: the link's token is in the URL, AM44), the strict CSP (no script), and every
 * POST needs the double-submit CSRF token (csrf.ts), as the login form does.
 */
export async function passwordResetRoutes(app: FastifyInstance, deps: HttpDeps): Promise<void> {
  useHtmlScope(app, deps);
  const forgot = forgotPasswordPath(deps.config);
  const reset = `${deps.config.issuerPath}${RESET_PAGE}`;
  const page = (request: FastifyRequest, reply: FastifyReply) => new ResetView(request, reply, deps, { forgot, reset });
  const later = afterAnswer(app);

  app.get(forgot, async (request, reply) => (deps.mail === undefined ? page(request, reply).forgot('off', { status: 404 }) : page(request, reply).forgot('form')));

  app.post(forgot, async (request, reply) => {
    const view = page(request, reply);
    const raw = requestParams(request);
    if (!csrfValid(request, deps, formField(raw, 'csrf_token'))) return view.forgot('form', { status: 403, message: 'resetForged' });
    const ip = clientAddress(request);
    const asked = await askForReset(deps, { identifier: raw.identifier, ip, locale: view.locale });
    if (asked.type === 'off') return view.forgot('off', { status: 404 });
    if (asked.type === 'invalid') return view.forgot('form', { status: 400, message: 'forgotInvalid' });
    if (asked.type === 'throttled') {
      reply.header('retry-after', String(asked.retryAfter));
      return view.forgot('form', { status: 429, message: 'forgotThrottled', retryAfter: asked.retryAfter });
    }
    // The answer is sent before the account is looked up (AM40): nothing the answer holds, nor
    // when it leaves, depends on whether one exists. The lookup and the mail follow it, once the
    // response is done ('close' comes after 'finish', and also when the client went away first).
    later(reply, asked.work, 'password reset: could not queue the reset link');
    return view.forgot('sent');
  });

  app.get(reset, async (request, reply) => {
    const token = (request.query as Record<string, unknown> | undefined)?.token;
    // Never consumed here: mail scanners and link previews fetch the link before the user does (AM44).
    const status = await resetLinkStatus(deps, token);
    return status === 'usable' ? page(request, reply).reset('form', { token: token as string }) : page(request, reply).reset('gone', { status: 410 });
  });

  app.post(reset, async (request, reply) => {
    const view = page(request, reply);
    const raw = requestParams(request);
    const token = formField(raw, 'token');
    if (!csrfValid(request, deps, formField(raw, 'csrf_token'))) return view.reset('form', { status: 403, message: 'resetForged', token });
    try {
      const outcome = await resetPassword(deps, { token, password: raw.password, confirmation: raw.confirmation, ip: clientAddress(request) });
      if (outcome.type === 'mismatch') return view.reset('form', { status: 400, message: 'resetMismatch', token });
      if (outcome.type === 'gone') return view.reset('gone', { status: 410 });
      return view.reset('done');
    } catch (error) {
      // The rule that refused it, in the page's language (password-policy.ts); the link stays usable.
      if (error instanceof PasswordRefused) return view.reset('form', { status: 400, message: refusalMessageKey(error.reason), minLength: error.minLength, token });
      if (error instanceof IdentityError && error.code === 'invalid_argument') return view.reset('form', { status: 400, message: 'resetInvalidPassword', token });
      throw error;
    }
  });
}

interface Options {
  status?: number;
  message?: MessageKey;
  retryAfter?: number;
  minLength?: number;
  token?: string;
}

/** The two pages, in the language of `ui_locales` (the login page passes its own) or the browser. */
class ResetView {
  readonly locale: Locale;
  private readonly t: ReturnType<typeof messages>;
  /** The request and reply of the page, and where its forms post. */
  private readonly at: { request: FastifyRequest; reply: FastifyReply; deps: HttpDeps; paths: { forgot: string; reset: string } };
  constructor(request: FastifyRequest, reply: FastifyReply, deps: HttpDeps, paths: { forgot: string; reset: string }) {
    this.at = { request, reply, deps, paths };
    this.locale = pageLocale(request);
    this.t = messages(this.locale, deps.config.theme);
  }

  forgot(mode: 'form' | 'sent' | 'off', options: Options = {}): FastifyReply {
    return this.send('forgot-password', mode, this.t.forgotTitle, this.at.paths.forgot, options);
  }

  reset(mode: 'form' | 'gone' | 'done', options: Options = {}): FastifyReply {
    return this.send('reset-password', mode, this.t.resetTitle, this.at.paths.reset, options);
  }

  private send(view: 'forgot-password' | 'reset-password', mode: string, title: string, action: string, options: Options): FastifyReply {
    const { t, locale } = this;
    const message = options.message === undefined ? undefined : t[options.message].replace('{wait}', () => formatWait(locale, options.retryAfter ?? 0)).replace('{min}', String(options.minLength ?? ''));
    const html = renderView(view, {
      base: this.at.deps.config.issuerPath,
      theme: this.at.deps.config.theme,
      lang: locale,
      t,
      title,
      display: 'page',
      mode,
      action,
      forgotPath: `${this.at.paths.forgot}?ui_locales=${locale}`,
      csrfToken: csrfToken(this.at.request, this.at.reply, this.at.deps),
      token: options.token ?? '',
      minLength: this.at.deps.config.passwordMinLength,
      message,
    });
    return sendPage(this.at.reply, options.status ?? 200, html);
  }
}
