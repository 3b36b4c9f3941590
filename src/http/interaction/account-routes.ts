import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  accountOf,
  confirmAccountTotp,
  newAccountRecoveryCodes,
  removeAccountFactor,
  renameAccountFactor,
  resumeAccountTotp,
  secondFactorForAccount,
  startAccountEmail,
  confirmAccountEmail,
  emailCodeForAccount,
  signInToAccount,
  startAccountTotp,
  type Account,
  type StartedTotp,
} from '../../oauth/account/security.ts';
import { accountPasskeyOptions, accountPasskeySignInOptions, finishAccountPasskey, passkeyForAccount, passkeySignInToAccount, startAccountPasskey } from '../../oauth/account/passkeys.ts';
import { parseResponseField } from '../../oauth/factors/passkey.ts';
import type { RawParams } from '../../oauth/params.ts';
import { backLinkOf, type BackLink } from '../../oauth/account/self-service.ts';
import { clientAddress } from '../client-address.ts';
import { sameOrigin } from '../console/csrf.ts';
import type { HttpDeps } from '../deps.ts';
import { accountNav, accountPasskeySignInHref, accountSectionPaths, carriedClientId, sectionOf, withClient, type AccountSection } from './account-nav.ts';
import { clearPendingSignInCookie, readPendingSignInCookie, readSessionCookie, setPendingSignInCookie, setSessionCookie } from './cookies.ts';
import { csrfToken, csrfValid } from './csrf.ts';
import { formField, pageLocale, requestParams, useHtmlScope } from './html-scope.ts';
import { formatWait, messages, type Locale, type MessageKey } from './i18n.ts';
import { PASSKEY_CSP, passkeyScripts, type PasskeyForm } from './passkey-page.ts';
import { answerEmailCodeAsk, asksForEmailCode, codeMethodOf, firstCodeMethod, kindsOf, sendSecondFactorPage, type SecondFactorPage } from './second-factor-page.ts';
import { renderView, sendPage } from './views.ts';

/** The account security page's path under the issuer (`/uas/account/security`). */
export function accountSecurityPath(config: Pick<HttpDeps['config'], 'issuerPath'>): string {
  return `${config.issuerPath}/account/security`;
}


/**
 * The account security page (issue 24; docs/second-factors.md, "Self-service"): the signed-in
 * user's second factors, and forms to add an authenticator app, make new recovery codes and
 * remove a factor. Without a session it is a sign-in form of its own, by the login page's steps
 * (src/oauth/account/security.ts, SA50). Every POST needs the double-submit CSRF token (csrf.ts)
 * and an Origin (or Referer) of the issuer's origin (SA53): the pages send
 * `Referrer-Policy: same-origin` so browsers send a real Origin. No script: the strict CSP; the
 * QR code is inline SVG.
 */
export async function accountRoutes(app: FastifyInstance, deps: HttpDeps): Promise<void> {
  useHtmlScope(app, deps);
  const page = accountSecurityPath(deps.config);
  const paths = { page, signIn: `${page}/sign-in`, secondFactor: `${page}/second-factor`, totp: `${page}/totp`, confirm: `${page}/totp/confirm`, recoveryCodes: `${page}/recovery-codes`, remove: `${page}/remove`, rename: `${page}/rename`,
    passkey: `${page}/passkey`, passkeyOptions: `${page}/passkey/options`, secondFactorPasskey: `${page}/second-factor/passkey`, secondFactorPasskeyOptions: `${page}/second-factor/passkey/options`,
    email: `${page}/email`, emailConfirm: `${page}/email/confirm`, passkeySignIn: `${page}/passkey-sign-in`, passkeySignInOptions: `${page}/passkey-sign-in/options` };
  const origin = new URL(deps.config.issuer).origin;
  const view = async (request: FastifyRequest, reply: FastifyReply) => {
    const locale = pageLocale(request);
    return new AccountView(request, reply, deps, paths, locale, await backLinkOf(deps, carriedClientId(request, requestParams(request)), locale));
  };
  /** Where a sign-in of this page returns: the account section its form names (account-nav.ts), with the carried client_id. */
  const signedInTarget = (request: FastifyRequest, raw: RawParams) => withClient(accountSectionPaths(deps.config)[sectionOf(formField(raw, 'section'))], carriedClientId(request, raw));

  app.get(paths.page, async (request, reply) => {
    const account = await accountOf(deps, readSessionCookie(request, deps.config));
    return account === undefined ? (await view(request, reply)).signIn() : (await view(request, reply)).overview(account);
  });

  /** The checks of every POST; a refused one is answered with the page again (403), nothing done. */
  const forged = (request: FastifyRequest, raw: RawParams) => !sameOrigin(request, origin) || !csrfValid(request, deps, formField(raw, 'csrf_token'));

  app.post(paths.signIn, async (request, reply) => {
    const raw = requestParams(request);
    const username = formField(raw, 'username');
    if (forged(request, raw)) return (await view(request, reply)).signIn({ status: 403, message: 'formExpired', username });
    const outcome = await signInToAccount(deps, { username, password: formField(raw, 'password'), previousCookie: readSessionCookie(request, deps.config), ip: clientAddress(request) });
    if (outcome.type === 'failed' || outcome.type === 'throttled') {
      if (outcome.type === 'throttled') reply.header('retry-after', String(outcome.retryAfter));
      const options = outcome.type === 'failed' ? { status: 401, message: 'loginFailed' as const } : { status: 429, message: 'tooManyAttempts' as const, retryAfter: outcome.retryAfter };
      // Signing in again before a change: the page stays, with the password field marked.
      const account = await accountOf(deps, readSessionCookie(request, deps.config));
      return account === undefined ? (await view(request, reply)).signIn({ ...options, username }) : (await view(request, reply)).overview(account, options);
    }
    if (outcome.type === 'second_factor') {
      setPendingSignInCookie(reply, deps.config, outcome.pendingCookie);
      return (await view(request, reply)).code({ method: firstCodeMethod(outcome.kinds), kinds: outcome.kinds });
    }
    setSessionCookie(reply, deps.config, outcome.cookieValue);
    // 303: the browser must not repeat the POST with its password; the page is then read afresh.
    return reply.code(303).header('cache-control', 'no-store').redirect(signedInTarget(request, raw), 303);
  });

  // "Sign in with a passkey" (AM108–AM111): a page of its own, the only one here with a script
  // (passkey.js, its CSP 'self'), whose form runs the login page's username-less ceremony.
  app.get(paths.passkeySignIn, async (request, reply) => (await view(request, reply)).passkeySignIn());

  app.post(paths.passkeySignInOptions, async (request, reply) => {
    const raw = requestParams(request);
    if (forged(request, raw)) return json(reply, 403, { error: 'form_expired' });
    const made = await accountPasskeySignInOptions(deps, clientAddress(request));
    if ('type' in made) {
      // RFC 6585 §4: the address used the budget it shares with the login page's passkey sign-in (AM109).
      reply.header('retry-after', String(made.retryAfter));
      return json(reply, 429, { error: 'too_many_requests' });
    }
    return json(reply, 200, made);
  });

  app.post(paths.passkeySignIn, async (request, reply) => {
    const raw = requestParams(request);
    if (forged(request, raw)) return (await view(request, reply)).passkeySignIn({ status: 403, message: 'formExpired' });
    const response = parseResponseField(formField(raw, 'response'));
    // Not JSON at all: a malformed request (400), not a refused passkey.
    if (response === undefined) return (await view(request, reply)).passkeySignIn({ status: 400, message: 'passkeyFailed' });
    const outcome = await passkeySignInToAccount(deps, { response, previousCookie: readSessionCookie(request, deps.config), ip: clientAddress(request) });
    if (outcome.type === 'refused') return (await view(request, reply)).passkeySignIn({ status: 401, message: 'passkeyFailed' });
    setSessionCookie(reply, deps.config, outcome.cookieValue);
    // As the password form: 303 to the section the form named (an allow-list, never a URL from the request).
    return reply.code(303).header('cache-control', 'no-store').redirect(signedInTarget(request, raw), 303);
  });

  app.post(paths.secondFactor, async (request, reply) => {
    const raw = requestParams(request);
    if (forged(request, raw)) return (await view(request, reply)).signIn({ status: 403, message: 'formExpired' });
    const { method, switched } = codeMethodOf({ method: formField(raw, 'method'), switch: formField(raw, 'switch') });
    const kinds = kindsOf(formField(raw, 'kinds'));
    if (switched) return (await view(request, reply)).code({ method, kinds });
    if (asksForEmailCode(formField(raw, 'send'))) {
      const sent = await emailCodeForAccount(deps, { pendingCookie: readPendingSignInCookie(request, deps.config), locale: pageLocale(request), ip: clientAddress(request) });
      const shown = await view(request, reply);
      return answerEmailCodeAsk(reply, sent, kinds, (page) => shown.code(page), () => {
        clearPendingSignInCookie(reply, deps.config);
        return shown.signIn({ status: 400, message: 'secondFactorExpired' });
      });
    }
    const outcome = await secondFactorForAccount(deps, { code: formField(raw, 'code'), pendingCookie: readPendingSignInCookie(request, deps.config), previousCookie: readSessionCookie(request, deps.config), ip: clientAddress(request) });
    return secondStepAnswered(request, reply, raw, outcome, { method, kinds, message: 'secondFactorFailed' });
  });

  // The same step by a passkey (passkeys.ts): its options for the held user, then the assertion.
  app.post(paths.secondFactorPasskeyOptions, async (request, reply) => {
    const raw = requestParams(request);
    if (forged(request, raw)) return json(reply, 403, { error: 'form_expired' });
    const made = await accountPasskeyOptions(deps, readPendingSignInCookie(request, deps.config));
    return made === undefined ? json(reply, 400, { error: 'sign_in_expired' }) : json(reply, 200, made);
  });
  app.post(paths.secondFactorPasskey, async (request, reply) => {
    const raw = requestParams(request);
    if (forged(request, raw)) return (await view(request, reply)).signIn({ status: 403, message: 'formExpired' });
    const kinds = kindsOf(formField(raw, 'kinds'));
    const method = firstCodeMethod(kinds);
    const response = parseResponseField(formField(raw, 'response'));
    if (response === undefined) return (await view(request, reply)).code({ method, kinds, status: 400, message: 'passkeyFailed' });
    const outcome = await passkeyForAccount(deps, { response, pendingCookie: readPendingSignInCookie(request, deps.config), previousCookie: readSessionCookie(request, deps.config), ip: clientAddress(request) });
    return secondStepAnswered(request, reply, raw, outcome, { method, kinds, message: 'passkeyFailed' });
  });

  /** What the second step answers, by a code or a passkey: the page again when refused or throttled, else the new session and the page. */
  const secondStepAnswered = async (request: FastifyRequest, reply: FastifyReply, raw: RawParams, outcome: Awaited<ReturnType<typeof secondFactorForAccount>>, shown: Pick<SecondFactorPage, 'method' | 'kinds'> & { message: MessageKey }) => {
    const { method, kinds } = shown;
    if (outcome.type === 'second_factor_refused') return (await view(request, reply)).code({ method, kinds, status: 401, message: shown.message, invalid: shown.message === 'secondFactorFailed' });
    if (outcome.type === 'throttled') {
      reply.header('retry-after', String(outcome.retryAfter));
      return (await view(request, reply)).code({ method, kinds, status: 429, message: 'tooManyAttempts', retryAfter: outcome.retryAfter });
    }
    clearPendingSignInCookie(reply, deps.config);
    if (outcome.type === 'expired') return (await view(request, reply)).signIn({ status: 400, message: 'secondFactorExpired' });
    setSessionCookie(reply, deps.config, outcome.cookieValue);
    return reply.code(303).header('cache-control', 'no-store').redirect(signedInTarget(request, raw), 303);
  };

  /**
   * The change forms: the account of the session (none: the sign-in form, 401), the checks, then
   * the change; a session signed in too long ago gets the overview with the password field (401).
   */
  const change = (path: string, act: (request: FastifyRequest, reply: FastifyReply, account: Account, raw: RawParams) => Promise<FastifyReply>) =>
    app.post(path, async (request, reply) => {
      const raw = requestParams(request);
      const account = await accountOf(deps, readSessionCookie(request, deps.config));
      if (account === undefined) return (await view(request, reply)).signIn({ status: 401 });
      if (forged(request, raw)) return (await view(request, reply)).overview(account, { status: 403, message: 'formExpired' });
      return act(request, reply, account, raw);
    });
  const reauthenticate = async (request: FastifyRequest, reply: FastifyReply, account: Account) => (await view(request, reply)).overview(account, { status: 401 });

  change(paths.totp, async (request, reply, account) => {
    const started = await startAccountTotp(deps, account);
    if ('type' in started) return reauthenticate(request, reply, account);
    return (await view(request, reply)).totp(started);
  });

  change(paths.confirm, async (request, reply, account, raw) => {
    const carried = { secret: formField(raw, 'secret'), expiresAt: formField(raw, 'expires_at'), proof: formField(raw, 'proof') };
    const confirmed = await confirmAccountTotp(deps, account, { ...carried, code: formField(raw, 'code') });
    if (confirmed.type === 'expired') return (await view(request, reply)).overview(account, { status: 400, message: 'accountTotpExpired' });
    if (confirmed.type === 'wrong_code') {
      const shown = await resumeAccountTotp(deps, account, carried);
      if (shown === undefined) return (await view(request, reply)).overview(account, { status: 400, message: 'accountTotpExpired' });
      return (await view(request, reply)).totp(shown, { status: 400, message: 'accountTotpWrongCode' });
    }
    const now = await accountOf(deps, readSessionCookie(request, deps.config));
    return (await view(request, reply)).overview(now ?? account, { notice: 'accountTotpAdded' });
  });

  change(paths.recoveryCodes, async (request, reply, account) => {
    const made = await newAccountRecoveryCodes(deps, account);
    if (made.type === 'reauthenticate') return reauthenticate(request, reply, account);
    return (await view(request, reply)).codes(made.codes);
  });

  // A passkey (passkeys.ts): the options of its registration (JSON, for the page's script), then
  // the browser's answer with the name the user gave it.
  app.post(paths.passkeyOptions, async (request, reply) => {
    const raw = requestParams(request);
    const account = await accountOf(deps, readSessionCookie(request, deps.config));
    if (account === undefined) return json(reply, 401, { error: 'login_required' });
    if (forged(request, raw)) return json(reply, 403, { error: 'form_expired' });
    const started = await startAccountPasskey(deps, account);
    return 'type' in started ? json(reply, 401, { error: 'reauthenticate' }) : json(reply, 200, started);
  });

  change(paths.passkey, async (request, reply, account, raw) => {
    const response = parseResponseField(formField(raw, 'response'));
    if (response === undefined) return (await view(request, reply)).overview(account, { status: 400, message: 'accountPasskeyRefused' });
    const added = await finishAccountPasskey(deps, account, { response, name: formField(raw, 'name') });
    if (added.type === 'reauthenticate') return reauthenticate(request, reply, account);
    if (added.type === 'bad_name') return (await view(request, reply)).overview(account, { status: 400, message: 'accountPasskeyBadName' });
    if (added.type === 'refused') return (await view(request, reply)).overview(account, { status: 400, message: 'accountPasskeyRefused' });
    const now = await accountOf(deps, readSessionCookie(request, deps.config));
    return (await view(request, reply)).overview(now ?? account, { notice: 'accountPasskeyAdded' });
  });

  // E-mail codes (docs/second-factors.md, "E-mail codes"): a code to the profile's address, then that code back.
  change(paths.email, async (request, reply, account) => {
    const started = await startAccountEmail(deps, account, { locale: pageLocale(request), ip: clientAddress(request) });
    switch (started.type) {
      case 'reauthenticate':
        return reauthenticate(request, reply, account);
      case 'sent':
        return (await view(request, reply)).email(account);
      case 'throttled':
        reply.header('retry-after', String(started.retryAfter));
        return (await view(request, reply)).overview(account, { status: 429, message: 'emailCodeThrottled', retryAfter: started.retryAfter });
      case 'no_email':
        return (await view(request, reply)).overview(account, { status: 400, message: 'accountEmailNoAddress' });
      case 'enrolled':
        return (await view(request, reply)).overview(account, { status: 409, message: 'accountEmailEnrolled' });
      case 'off':
        return (await view(request, reply)).overview(account, { status: 409, message: 'accountEmailOff' });
    }
  });

  change(paths.emailConfirm, async (request, reply, account, raw) => {
    const confirmed = await confirmAccountEmail(deps, account, { code: formField(raw, 'code'), ip: clientAddress(request) });
    switch (confirmed.type) {
      case 'reauthenticate':
        return reauthenticate(request, reply, account);
      case 'refused':
        return (await view(request, reply)).email(account, { status: 400, message: 'accountEmailWrongCode' });
      case 'throttled':
        reply.header('retry-after', String(confirmed.retryAfter));
        return (await view(request, reply)).email(account, { status: 429, message: 'tooManyAttempts', retryAfter: confirmed.retryAfter });
      case 'already':
        return (await view(request, reply)).overview((await accountOf(deps, readSessionCookie(request, deps.config))) ?? account, { status: 409, message: 'accountEmailEnrolled' });
      case 'enrolled':
        return (await view(request, reply)).overview((await accountOf(deps, readSessionCookie(request, deps.config))) ?? account, { notice: 'accountEmailAdded' });
    }
  });

  change(paths.remove, async (request, reply, account, raw) => {
    const removed = await removeAccountFactor(deps, account, formField(raw, 'factor_id'), clientAddress(request));
    if (removed.type === 'reauthenticate') return reauthenticate(request, reply, account);
    const now = (await accountOf(deps, readSessionCookie(request, deps.config))) ?? account;
    if (removed.type === 'not_found') return (await view(request, reply)).overview(now, { status: 404, message: 'accountFactorNotFound' });
    return (await view(request, reply)).overview(now, { notice: 'accountFactorRemoved' });
  });

  change(paths.rename, async (request, reply, account, raw) => {
    const renamed = await renameAccountFactor(deps, account, formField(raw, 'factor_id'), formField(raw, 'name'), clientAddress(request));
    if (renamed.type === 'reauthenticate') return reauthenticate(request, reply, account);
    const now = (await accountOf(deps, readSessionCookie(request, deps.config))) ?? account;
    if (renamed.type === 'not_found') return (await view(request, reply)).overview(now, { status: 404, message: 'accountFactorNotFound' });
    if (renamed.type === 'invalid_name') return (await view(request, reply)).overview(now, { status: 400, message: 'accountFactorNameInvalid' });
    return (await view(request, reply)).overview(now, { notice: 'accountFactorRenamed' });
  });
}

interface Options {
  status?: number;
  message?: MessageKey;
  notice?: MessageKey;
  retryAfter?: number;
}

type Paths = Record<
  'page' | 'signIn' | 'secondFactor' | 'totp' | 'confirm' | 'recoveryCodes' | 'remove' | 'rename' | 'passkey' | 'passkeyOptions' | 'secondFactorPasskey' | 'secondFactorPasskeyOptions' | 'email' | 'emailConfirm' | 'passkeySignIn' | 'passkeySignInOptions',
  string
>;

function json(reply: FastifyReply, status: number, body: unknown): FastifyReply {
  return reply.code(status).header('cache-control', 'no-store').header('referrer-policy', 'same-origin').type('application/json; charset=utf-8').send(JSON.stringify(body));
}

/** The page's renderings, in the browser's language; every one sends `Referrer-Policy: same-origin` (the Origin check, SA53). */
class AccountView {
  private readonly locale: Locale;
  private readonly t: ReturnType<typeof messages>;
  private readonly request: FastifyRequest;
  private readonly reply: FastifyReply;
  private readonly deps: HttpDeps;
  private readonly paths: Paths;
  private readonly back: BackLink | undefined;
  constructor(request: FastifyRequest, reply: FastifyReply, deps: HttpDeps, paths: Paths, locale: Locale, back: BackLink | undefined) {
    this.request = request;
    this.reply = reply;
    this.deps = deps;
    this.paths = paths;
    this.back = back;
    this.locale = locale;
    this.t = messages(this.locale, deps.config.theme);
    reply.header('referrer-policy', 'same-origin');
  }

  signIn(options: Options & { username?: string } = {}): FastifyReply {
    const passkeySignIn = accountPasskeySignInHref(this.deps.config, this.section(), this.back?.clientId);
    return this.send('sign-in', options, { heading: this.t.accountTitle, action: this.paths.signIn, hidden: this.carried(), username: options.username ?? '', invalidCredentials: options.message === 'loginFailed', passkeySignIn });
  }

  /**
   * The passkey sign-in page: the login page's username-less form (passkey.js shows it), carrying
   * the section and client_id as the password form does; a link back to that form.
   */
  passkeySignIn(options: Options = {}): FastifyReply {
    const { t } = this;
    const passkey: PasskeyForm = { action: this.paths.passkeySignIn, options: this.paths.passkeySignInOptions, ceremony: 'authenticate', label: t.passkeySignIn, errorText: t.passkeyCancelled, hidden: this.carried() };
    const passwordHref = withClient(accountSectionPaths(this.deps.config)[this.section()], this.back?.clientId);
    return this.send('passkey-sign-in', options, { heading: t.accountPasskeySignInTitle, passkey, passwordHref, scripts: passkeyScripts(this.deps.config) }, true);
  }

  overview(account: Account, options: Options = {}): FastifyReply {
    const t = this.t;
    const factors = account.factors.map((factor) => ({
      id: factor.id,
      name: factor.name,
      kindText: kindText(t, factor),
      added: this.date(factor.createdAt),
      lastUsed: factor.lastUsedAt === undefined ? t.accountNever : this.date(factor.lastUsedAt),
      codesLeft: factor.codesLeft === undefined ? '' : String(factor.codesLeft),
      removeText: t.accountRemove.replace('{name}', () => factor.name),
      renameLabel: t.accountRenameLabel.replace('{name}', () => factor.name),
    }));
    // Adding a passkey: a ceremony, so a form that passkey.js shows and drives (hidden without it).
    const passkey: PasskeyForm | undefined = account.fresh
      ? { action: this.paths.passkey, options: this.paths.passkeyOptions, ceremony: 'register', label: t.accountAddPasskey, errorText: t.accountPasskeyRefused, hidden: [], nameField: true }
      : undefined;
    return this.send(
      'overview',
      options,
      {
        heading: t.accountTitle,
        username: account.user.username,
        fresh: account.fresh,
        // Confirming it is you: by a passkey too, for a user who has one (a passkey-only user has no password to enter, AM112).
        reauthPasskey: !account.fresh && account.factors.some((f) => f.kind === 'passkey') ? accountPasskeySignInHref(this.deps.config, 'security', this.back?.clientId) : undefined,
        factors,
        invalidCredentials: options.message === 'loginFailed',
        passkey,
        scripts: passkey === undefined ? [] : passkeyScripts(this.deps.config),
        // E-mail codes: offered while mail is on and the user has none; without mail, a user who has them is told they cannot be used now (AM97).
        emailOffer: emailOffer(account.factors.some((f) => f.kind === 'email_otp'), this.deps.mail !== undefined),
      },
      passkey !== undefined,
    );
  }

  totp(started: StartedTotp, options: Options = {}): FastifyReply {
    const totp = { qrSvg: started.qrSvg, secret: started.secret, secretGroups: started.secret.replace(/(.{4})(?=.)/g, '$1 '), expiresAt: String(started.expiresAt), proof: started.proof };
    return this.send('totp', options, { heading: this.t.accountAddTotp, totp });
  }

  /** The code sent to the profile's address, asked back to add e-mail codes. */
  email(account: Account, options: Options = {}): FastifyReply {
    const intro = this.t.accountEmailIntro.replace('{address}', () => account.user.email ?? '');
    return this.send('email', options, { heading: this.t.accountAddEmail, emailIntro: intro });
  }

  codes(codes: string[]): FastifyReply {
    return this.send('codes', {}, { heading: this.t.accountCodesTitle, codes });
  }

  /** The second factor's page of the login page, for this page's held sign-in. */
  code(options: Pick<SecondFactorPage, 'method' | 'kinds' | 'status' | 'message' | 'retryAfter' | 'invalid' | 'sentTo'>): FastifyReply {
    const passkey = { action: this.paths.secondFactorPasskey, options: this.paths.secondFactorPasskeyOptions };
    return sendSecondFactorPage(this.request, this.reply, this.deps, { ...options, locale: this.locale, display: 'page', clientName: this.t.accountTitle, clientIntro: 'signInTo', action: this.paths.secondFactor, hidden: this.carried(), passkey, referrer: 'same-origin' });
  }

  /**
   * What this page's sign-in forms carry to their next step: the section to come back to (the one
   * the posted form named — another section's sign-in goes through here — else this one) and the
   * client_id of the back link.
   */
  private carried(): [string, string][] {
    return [['section', this.section()], ...(this.back === undefined ? [] : [['client_id', this.back.clientId] as [string, string]])];
  }

  /** The section this page's sign-in comes back to: the request's `section` (a form's field, the passkey page's query), by the allow-list. */
  private section(): AccountSection {
    return sectionOf(formField(requestParams(this.request), 'section'));
  }

  private send(mode: string, options: Options, data: Record<string, unknown>, passkey = false): FastifyReply {
    const { t, locale } = this;
    const clientId = this.back?.clientId;
    // The forms post back with the client_id in their query, so the page they answer keeps the navigation's back link.
    const actions = Object.fromEntries(Object.entries(this.paths).map(([name, path]) => [name, withClient(path, clientId)]));
    const text = (key: MessageKey | undefined) => (key === undefined ? undefined : t[key].replace('{wait}', () => formatWait(locale, options.retryAfter ?? 0)));
    const html = renderView('account-security', {
      base: this.deps.config.issuerPath,
      theme: this.deps.config.theme,
      lang: locale,
      t,
      title: t.accountTitle,
      display: 'page',
      referrer: 'same-origin',
      mode,
      pagePath: withClient(this.paths.page, clientId),
      actions,
      nav: mode === 'sign-in' || mode === 'passkey-sign-in' ? undefined : accountNav(this.deps.config, t, 'security', this.back),
      csrfToken: csrfToken(this.request, this.reply, this.deps),
      message: text(options.message),
      notice: text(options.notice),
      ...data,
    });
    return sendPage(this.reply, options.status ?? 200, html, passkey ? PASSKEY_CSP : {});
  }

  /** A moment in the page's language, in UTC (the server does not know the user's time zone). */
  private date(at: number): string {
    return new Intl.DateTimeFormat(this.locale, { year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', timeZone: 'UTC', timeZoneName: 'short' }).format(at);
  }
}

/** A factor's kind as the table says it; an e-mail factor with the address its codes go to. */
function kindText(t: ReturnType<typeof messages>, factor: Account['factors'][number]): string {
  switch (factor.kind) {
    case 'totp':
      return t.accountKindTotp;
    case 'passkey':
      return factor.backupEligible === true ? t.accountKindPasskeySynced : t.accountKindPasskey;
    case 'email_otp':
      return `${t.accountKindEmail} (${factor.email ?? ''})`;
    case 'recovery_codes':
      return t.accountKindRecovery;
  }
}

/** What the overview says of e-mail codes: `on`, the button to add them; `off`, that the user's cannot be used (no mail); nothing otherwise. */
function emailOffer(has: boolean, mailOn: boolean): 'on' | 'off' | undefined {
  if (has) return mailOn ? undefined : 'off';
  return mailOn ? 'on' : undefined;
}
