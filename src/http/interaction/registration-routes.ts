import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { IdentityError } from '../../identity/errors.ts';
import { PasswordRefused, passwordPolicyOf, refusalMessageKey } from '../../identity/password-policy.ts';
import { FORGOT_PAGE } from '../../oauth/account/password-reset.ts';
import { askToRegister, completeRegistration, FINISH_PAGE, REGISTER_PAGE, registrationLinkStatus, selfRegistrationOn } from '../../oauth/account/registration.ts';
import { clientAddress } from '../client-address.ts';
import type { HttpDeps } from '../deps.ts';
import { afterAnswer } from './after-answer.ts';
import { csrfToken, csrfValid } from './csrf.ts';
import { formField, pageLocale, requestParams, useHtmlScope } from './html-scope.ts';
import { formatWait, messages, type Locale, type MessageKey } from './i18n.ts';
import { renderView, sendPage } from './views.ts';

/** The "Create an account" page's path (`/uas/account/register`), linked from the login page while self-registration is on. */
export function registerPath(config: Pick<HttpDeps['config'], 'issuerPath'>): string {
  return `${config.issuerPath}${REGISTER_PAGE}`;
}

/**
 * Self-registration's pages (docs/registration.md): "Create an account" and the page of the
 * mailed link. The decisions are the core's (src/oauth/account/registration.ts); these only
 * render. As password reset's pages: no-store, `Referrer-Policy: no-referrer` (the link's token is
 * in the URL), the strict CSP (no script), and every POST needs the double-submit CSRF token.
 */
export async function selfRegistrationRoutes(app: FastifyInstance, deps: HttpDeps): Promise<void> {
  useHtmlScope(app, deps);
  const paths = { register: registerPath(deps.config), finish: `${deps.config.issuerPath}${FINISH_PAGE}`, forgot: `${deps.config.issuerPath}${FORGOT_PAGE}` };
  const page = (request: FastifyRequest, reply: FastifyReply) => new RegistrationView(request, reply, deps, paths);
  const later = afterAnswer(app);

  app.get(paths.register, async (request, reply) => {
    const view = page(request, reply);
    if (!selfRegistrationOn(deps)) return view.register('off', { status: 404 });
    const returnTo = (request.query as Record<string, unknown> | undefined)?.return_to;
    return view.register('form', { returnTo: typeof returnTo === 'string' ? returnTo : '' });
  });

  app.post(paths.register, async (request, reply) => {
    const view = page(request, reply);
    const raw = requestParams(request);
    const values = { email: formField(raw, 'email'), given_name: formField(raw, 'given_name'), family_name: formField(raw, 'family_name') };
    const returnTo = formField(raw, 'return_to');
    if (!csrfValid(request, deps, formField(raw, 'csrf_token'))) return view.register('form', { status: 403, message: 'resetForged', values, returnTo });
    const asked = await askToRegister(deps, { email: raw.email, givenName: raw.given_name, familyName: raw.family_name, returnTo, ip: clientAddress(request), locale: view.locale });
    if (asked.type === 'off') return view.register('off', { status: 404 });
    if (asked.type === 'invalid') return view.register('form', { status: 400, message: asked.field === 'email' ? 'registerInvalidEmail' : 'registerInvalidName', invalid: asked.field, values, returnTo });
    if (asked.type === 'domain') return view.register('form', { status: 400, message: 'registerDomain', invalid: 'email', values, returnTo });
    if (asked.type === 'throttled') {
      reply.header('retry-after', String(asked.retryAfter));
      return view.register('form', { status: 429, message: 'registerThrottled', retryAfter: asked.retryAfter, values, returnTo });
    }
    // The answer is sent before the address is looked up (AM61), as password reset's (AM40):
    // the lookup and the mail follow once the response is done.
    later(reply, asked.work, 'registration: could not queue the mail');
    return view.register('sent');
  });

  app.get(paths.finish, async (request, reply) => {
    const token = (request.query as Record<string, unknown> | undefined)?.token;
    // Never consumed here: mail scanners and link previews fetch the link before the user does.
    const status = await registrationLinkStatus(deps, token);
    return status.type === 'usable' ? page(request, reply).finish('form', { token: token as string, email: status.email }) : page(request, reply).finish('gone', { status: 410 });
  });

  app.post(paths.finish, async (request, reply) => {
    const view = page(request, reply);
    const raw = requestParams(request);
    const token = formField(raw, 'token');
    const again = async (status: number, message: MessageKey, minLength?: number) => {
      const link = await registrationLinkStatus(deps, token);
      return link.type === 'usable' ? view.finish('form', { status, message, token, email: link.email, ...(minLength === undefined ? {} : { minLength }) }) : view.finish('gone', { status: 410 });
    };
    if (!csrfValid(request, deps, formField(raw, 'csrf_token'))) return again(403, 'resetForged');
    try {
      const outcome = await completeRegistration(deps, { token, password: raw.password, confirmation: raw.confirmation, ip: clientAddress(request) });
      if (outcome.type === 'mismatch') return await again(400, 'resetMismatch');
      if (outcome.type === 'gone') return view.finish('gone', { status: 410 });
      if (outcome.type === 'exists') return view.finish('exists', { status: 409 });
      return view.finish(outcome.pending ? 'pending' : 'done', { returnTo: outcome.returnTo ?? '' });
    } catch (error) {
      if (error instanceof PasswordRefused) return again(400, refusalMessageKey(error.reason), error.minLength);
      if (error instanceof IdentityError && error.code === 'invalid_argument' && error.field === 'password') return again(400, 'resetInvalidPassword');
      throw error;
    }
  });
}

interface Options {
  status?: number;
  message?: MessageKey;
  retryAfter?: number;
  /** The password policy's minimum length, for a `passwordTooShort` message. */
  minLength?: number;
  token?: string;
  email?: string;
  returnTo?: string;
  invalid?: string;
  values?: Record<'email' | 'given_name' | 'family_name', string>;
}

/** The two pages, in the language of `ui_locales` (the login page passes its own) or the browser. */
class RegistrationView {
  readonly locale: Locale;
  private readonly t: ReturnType<typeof messages>;
  private readonly at: { request: FastifyRequest; reply: FastifyReply; deps: HttpDeps; paths: { register: string; finish: string; forgot: string } };
  constructor(request: FastifyRequest, reply: FastifyReply, deps: HttpDeps, paths: { register: string; finish: string; forgot: string }) {
    this.at = { request, reply, deps, paths };
    this.locale = pageLocale(request);
    this.t = messages(this.locale, deps.config.theme);
  }

  register(mode: 'form' | 'sent' | 'off', options: Options = {}): FastifyReply {
    return this.send('register', mode, this.t.registerTitle, this.at.paths.register, options);
  }

  finish(mode: 'form' | 'gone' | 'done' | 'pending' | 'exists', options: Options = {}): FastifyReply {
    return this.send('register-finish', mode, this.t.registerFinishTitle, this.at.paths.finish, options);
  }

  private send(view: 'register' | 'register-finish', mode: string, title: string, action: string, options: Options): FastifyReply {
    const { t, locale } = this;
    const { config } = this.at.deps;
    const minLength = options.minLength ?? passwordPolicyOf(config).minLength;
    const message = options.message === undefined ? undefined : t[options.message].replace('{wait}', () => formatWait(locale, options.retryAfter ?? 0)).replace('{min}', String(minLength));
    const html = renderView(view, {
      base: config.issuerPath,
      theme: config.theme,
      lang: locale,
      t,
      title,
      display: 'page',
      mode,
      action,
      registerPath: `${this.at.paths.register}?ui_locales=${locale}`,
      forgotPath: `${this.at.paths.forgot}?ui_locales=${locale}`,
      csrfToken: csrfToken(this.at.request, this.at.reply, this.at.deps),
      token: options.token ?? '',
      email: options.email ?? '',
      returnTo: options.returnTo ?? '',
      minLength,
      invalid: options.invalid,
      values: options.values ?? { email: '', given_name: '', family_name: '' },
      required: { given_name: config.registrationFields.includes('given_name'), family_name: config.registrationFields.includes('family_name') },
      message,
    });
    return sendPage(this.at.reply, options.status ?? 200, html);
  }
}
