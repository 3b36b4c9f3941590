import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { passwordPolicyOf, refusalMessageKey } from '../../identity/password-policy.ts';
import { accountOf, type Account } from '../../oauth/account/security.ts';
import {
  accountApplications,
  accountSessions,
  backLinkOf,
  changeAccountPassword,
  endAccountSession,
  endOtherAccountSessions,
  hasPassword,
  withdrawAccountApplication,
  type BackLink,
} from '../../oauth/account/self-service.ts';
import { clientNameFor } from '../../oauth/client-display.ts';
import { scopeServers } from '../../oauth/confirmation-facts.ts';
import type { RawParams } from '../../oauth/params.ts';
import { summariseUserAgent } from '../../lib/user-agent.ts';
import { clientAddress } from '../client-address.ts';
import { sameOrigin } from '../console/csrf.ts';
import type { HttpDeps } from '../deps.ts';
import { accountNav, accountPasskeySignInHref, accountSectionPaths, carriedClientId, sectionNames, withClient, type AccountSection } from './account-nav.ts';
import { describeScope } from './consent-page.ts';
import { readSessionCookie } from './cookies.ts';
import { csrfToken, csrfValid } from './csrf.ts';
import { formField, pageLocale, requestParams, useHtmlScope } from './html-scope.ts';
import { formatWait, messages, type Locale, type MessageKey, type Messages } from './i18n.ts';
import { renderView, sendPage } from './views.ts';

/** The notices a section shows after a change's 303 (`?notice=`), by an allow-list: the query never chooses a text of its own. */
const NOTICES: Record<string, MessageKey> = {
  password_changed: 'accountPasswordChanged',
  session_ended: 'accountSessionEnded',
  others_ended: 'accountOtherSessionsEnded',
  withdrawn: 'accountApplicationWithdrawn',
};

/**
 * The account page (issue 25 item 6; docs/account.md): `<issuer path>/account`, the overview, and
 * its sections for the password, the sessions and the applications (the security section is
 * account-routes.ts, the profile section h25-verify's). Without a session each shows the security
 * page's sign-in form, which brings the browser back to the section asked for (its `section`
 * field). Every POST needs the double-submit CSRF token and an Origin of the issuer's (SA53; the
 * pages send `Referrer-Policy: same-origin`), and is answered 303 to the section after a change,
 * or the section again with what was wrong (4xx), never a 5xx for what a form carries. No script:
 * the strict CSP of every page.
 */
export async function accountPages(app: FastifyInstance, deps: HttpDeps): Promise<void> {
  useHtmlScope(app, deps);
  const paths = accountSectionPaths(deps.config);
  const actions = actionsOf(deps);
  const origin = new URL(deps.config.issuer).origin;
  const pages = async (request: FastifyRequest, reply: FastifyReply, raw: RawParams) => {
    const locale = pageLocale(request);
    return new AccountPages(request, reply, deps, locale, await backLinkOf(deps, carriedClientId(request, raw), locale), actions);
  };
  const account = (request: FastifyRequest) => accountOf(deps, readSessionCookie(request, deps.config));

  /** A section's GET: its page for the session's user, or the sign-in form that comes back to it. */
  const section = (name: Exclude<AccountSection, 'profile' | 'security'>, show: (view: AccountPages, account: Account, options: Options) => Promise<FastifyReply>) =>
    app.get(paths[name], async (request, reply) => {
      const raw = requestParams(request);
      const view = await pages(request, reply, raw);
      const signedIn = await account(request);
      if (signedIn === undefined) return view.signIn(name);
      // Own keys only: `?notice=__proto__` must not reach an inherited member.
      const key = formField(raw, 'notice');
      const notice = Object.hasOwn(NOTICES, key) ? NOTICES[key] : undefined;
      return show(view, signedIn, notice === undefined ? {} : { notice });
    });

  /** A section's POST: the session's account (none: the sign-in form, 401), the checks (refused: 403, nothing done), then the change. */
  const change = (path: string, name: AccountSection, act: (view: AccountPages, account: Account, raw: RawParams, request: FastifyRequest) => Promise<FastifyReply>) =>
    app.post(path, async (request, reply) => {
      const raw = requestParams(request);
      const view = await pages(request, reply, raw);
      const signedIn = await account(request);
      if (signedIn === undefined) return view.signIn(name, { status: 401 });
      if (!sameOrigin(request, origin) || !csrfValid(request, deps, formField(raw, 'csrf_token'))) return view.section(name, signedIn, { status: 403, message: 'formExpired' });
      return act(view, signedIn, raw, request);
    });

  section('overview', (view, signedIn, options) => view.overview(signedIn, options));
  section('password', async (view, signedIn, options) => view.password(signedIn, await hasPassword(deps, signedIn), options));
  section('sessions', (view, signedIn, options) => view.sessions(signedIn, options));
  section('applications', (view, signedIn, options) => view.applications(signedIn, options));

  change(actions.password, 'password', async (view, signedIn, raw, request) => {
    const changed = await changeAccountPassword(deps, signedIn, {
      current: formField(raw, 'current_password'),
      password: formField(raw, 'new_password'),
      confirmation: formField(raw, 'confirm_password'),
      ip: clientAddress(request),
    });
    if (changed.type === 'changed') return view.done('password', 'password_changed');
    const has = await hasPassword(deps, signedIn);
    if (changed.type === 'throttled') {
      view.reply.header('retry-after', String(changed.retryAfter));
      return view.password(signedIn, has, { status: 429, message: 'tooManyAttempts', retryAfter: changed.retryAfter, invalid: 'current' });
    }
    const refused: Record<Exclude<typeof changed.type, 'changed' | 'throttled'>, Options> = {
      mismatch: { status: 400, message: 'resetMismatch', invalid: 'new' },
      invalid_password: { status: 400, message: changed.type === 'invalid_password' && changed.reason !== undefined ? refusalMessageKey(changed.reason) : 'resetInvalidPassword', invalid: 'new' },
      wrong_current: { status: 401, message: 'accountPasswordWrongCurrent', invalid: 'current' },
      // Without a password, the page itself says to sign in again (accountPasswordNoneStale).
      reauthenticate: has ? { status: 401, message: 'accountPasswordCurrentNeeded', invalid: 'current' } : { status: 401 },
      changed_meanwhile: { status: 409, message: 'accountPasswordChangedMeanwhile' },
    };
    return view.password(signedIn, has, refused[changed.type]);
  });

  change(actions.endSession, 'sessions', async (view, signedIn, raw, request) => {
    const ended = await endAccountSession(deps, signedIn, formField(raw, 'session'), clientAddress(request));
    if (ended.type === 'not_found') return view.sessions(signedIn, { status: 404, message: 'accountSessionNotFound' });
    return view.done('sessions', 'session_ended');
  });

  change(actions.endOthers, 'sessions', async (view, signedIn, _raw, request) => {
    await endOtherAccountSessions(deps, signedIn, clientAddress(request));
    return view.done('sessions', 'others_ended');
  });

  change(actions.withdraw, 'applications', async (view, signedIn, raw, request) => {
    const withdrawn = await withdrawAccountApplication(deps, signedIn, formField(raw, 'application'), clientAddress(request));
    if (withdrawn.type === 'not_found') return view.applications(signedIn, { status: 404, message: 'accountApplicationNotFound' });
    return view.done('applications', 'withdrawn');
  });
}

interface Options {
  status?: number;
  message?: MessageKey;
  notice?: MessageKey;
  retryAfter?: number;
  /** Which password field the message is about (aria-invalid). */
  invalid?: 'current' | 'new';
}

type Actions = Record<'password' | 'endSession' | 'endOthers' | 'withdraw' | 'signIn', string>;

/** The sections' renderings, in the page's language; every one sends `Referrer-Policy: same-origin` (the Origin check, SA53). */
/** The forms' actions of the sections. */
function actionsOf(deps: HttpDeps): Actions {
  const paths = accountSectionPaths(deps.config);
  return { password: paths.password, endSession: `${paths.sessions}/end`, endOthers: `${paths.sessions}/end-others`, withdraw: `${paths.applications}/withdraw`, signIn: `${paths.security}/sign-in` };
}

/**
 * The sign-in form of the account page, which brings the browser back to `section` (with the
 * carried client_id's back link): for a section served elsewhere (the profile, profile-routes.ts).
 */
export async function sendAccountSignIn(request: FastifyRequest, reply: FastifyReply, deps: HttpDeps, section: AccountSection, options: { status?: number; message?: MessageKey } = {}): Promise<FastifyReply> {
  const locale = pageLocale(request);
  const back = await backLinkOf(deps, carriedClientId(request, requestParams(request)), locale);
  return new AccountPages(request, reply, deps, locale, back, actionsOf(deps)).signIn(section, options);
}

class AccountPages {
  readonly reply: FastifyReply;
  private readonly request: FastifyRequest;
  private readonly deps: HttpDeps;
  private readonly locale: Locale;
  private readonly t: Messages;
  private readonly back: BackLink | undefined;
  private readonly actions: Actions;
  constructor(request: FastifyRequest, reply: FastifyReply, deps: HttpDeps, locale: Locale, back: BackLink | undefined, actions: Actions) {
    this.request = request;
    this.reply = reply;
    this.deps = deps;
    this.locale = locale;
    this.t = messages(locale, deps.config.theme);
    this.back = back;
    this.actions = actions;
    reply.header('referrer-policy', 'same-origin');
  }

  /** After a change: 303 to the section (the browser must not repeat the POST), with the notice to show and the carried client_id. */
  done(name: AccountSection, notice: keyof typeof NOTICES): FastifyReply {
    const path = withClient(accountSectionPaths(this.deps.config)[name], this.back?.clientId);
    const target = `${path}${path.includes('?') ? '&' : '?'}notice=${notice}`;
    return this.reply.code(303).header('cache-control', 'no-store').redirect(target, 303);
  }

  /** The security page's sign-in form (its POST signs in and comes back to `name`). */
  signIn(name: AccountSection, options: Options = {}): FastifyReply {
    const hidden: [string, string][] = [['section', name], ...(this.back === undefined ? [] : [['client_id', this.back.clientId] as [string, string]])];
    const passkeySignIn = accountPasskeySignInHref(this.deps.config, name, this.back?.clientId);
    return this.send('sign-in', undefined, options, { heading: this.t.accountPageTitle, action: this.actions.signIn, hidden, username: '', invalidCredentials: false, passkeySignIn });
  }

  /** A section again, with what was wrong: a refused form. */
  section(name: AccountSection, account: Account, options: Options): Promise<FastifyReply> | FastifyReply {
    if (name === 'password') return hasPassword(this.deps, account).then((has) => this.password(account, has, options));
    if (name === 'sessions') return this.sessions(account, options);
    if (name === 'applications') return this.applications(account, options);
    return this.overview(account, options);
  }

  async overview(account: Account, options: Options = {}): Promise<FastifyReply> {
    const { t } = this;
    const { user } = account;
    const name = [user.givenName, user.familyName].filter((part) => part !== undefined && part !== '').join(' ');
    const paths = accountSectionPaths(this.deps.config);
    const names = sectionNames(t);
    const describe = (section: AccountSection, text: string) => ({ href: withClient(paths[section], this.back?.clientId), text: names[section], description: text });
    const sections = [
      describe('profile', t.accountOverviewProfile),
      describe('password', t.accountOverviewPassword),
      describe('security', t.accountOverviewSecurity),
      describe('sessions', t.accountOverviewSessions),
      describe('applications', t.accountOverviewApplications),
    ];
    return this.send('overview', 'overview', options, { heading: t.accountPageTitle, username: user.username, name, email: user.email ?? '', sections });
  }

  password(account: Account, has: boolean, options: Options = {}): FastifyReply {
    const askCurrent = has && !account.fresh;
    const stale = !has && !account.fresh;
    // Without a password and signed in too long ago: confirming it is you by a passkey brings the browser back here (AM112).
    const reauthPasskey = stale ? accountPasskeySignInHref(this.deps.config, 'password', this.back?.clientId) : undefined;
    return this.send('password', 'password', options, { heading: this.t.accountPasswordTitle, username: account.user.username, has, askCurrent, stale, fresh: account.fresh, invalid: options.invalid ?? '', reauthPasskey });
  }

  async sessions(account: Account, options: Options = {}): Promise<FastifyReply> {
    const { t } = this;
    const listed = await accountSessions(this.deps, account);
    const sessions = listed.map((session) => {
      const { browser, os } = summariseUserAgent(session.userAgent);
      const device =
        browser !== undefined && os !== undefined ? t.accountSessionBrowserOn.replace('{browser}', () => browser).replace('{os}', () => os) : (browser ?? os ?? t.accountSessionUnknownDevice);
      const signedIn = this.date(session.signedInAt);
      return {
        sessionIndex: session.sessionIndex,
        current: session.current,
        device,
        signedIn,
        lastUsed: this.date(session.lastUsedAt),
        ip: session.ip ?? t.accountUnknown,
        endText: t.accountSessionEnd.replace('{device}', () => device).replace('{time}', () => signedIn),
      };
    });
    return this.send('sessions', 'sessions', options, { heading: t.accountSessionsTitle, sessions, others: sessions.some((session) => !session.current) });
  }

  async applications(account: Account, options: Options = {}): Promise<FastifyReply> {
    const { t, locale } = this;
    const listed = await accountApplications(this.deps, account);
    const applications = await Promise.all(
      listed.map(async ({ consent, client }) => {
        const name = client === undefined ? consent.clientId : clientNameFor(client, locale);
        const described = describeScope(await scopeServers(this.deps, consent.scope), consent.scope, locale, t, t.consentScopeNames);
        return {
          clientId: consent.clientId,
          name,
          scopes: [...described.scopes, ...described.audiences],
          since: t.accountApplicationSince.replace('{time}', () => this.date(consent.grantedAt)),
          withdrawText: t.accountApplicationWithdraw.replace('{client}', () => name),
        };
      }),
    );
    return this.send('applications', 'applications', options, { heading: t.accountApplicationsTitle, applications });
  }

  private send(mode: string, current: AccountSection | undefined, options: Options, data: Record<string, unknown>): FastifyReply {
    const { t, locale } = this;
    const minLength = String(passwordPolicyOf(this.deps.config).minLength);
    const text = (key: MessageKey | undefined) => (key === undefined ? undefined : t[key].replace('{wait}', () => formatWait(locale, options.retryAfter ?? 0)).replace('{min}', minLength));
    const clientId = this.back?.clientId;
    const action = (path: string) => withClient(path, clientId);
    const html = renderView('account', {
      base: this.deps.config.issuerPath,
      theme: this.deps.config.theme,
      lang: locale,
      t,
      title: typeof data.heading === 'string' ? data.heading : t.accountPageTitle,
      display: 'page',
      referrer: 'same-origin',
      mode,
      nav: current === undefined ? undefined : accountNav(this.deps.config, t, current, this.back),
      actions: { password: action(this.actions.password), endSession: action(this.actions.endSession), endOthers: action(this.actions.endOthers), withdraw: action(this.actions.withdraw) },
      csrfToken: csrfToken(this.request, this.reply, this.deps),
      message: text(options.message),
      notice: text(options.notice),
      ...data,
    });
    return sendPage(this.reply, options.status ?? 200, html);
  }

  /** A moment in the page's language, in UTC (the server does not know the user's time zone), as the security page shows them. */
  private date(at: number): string {
    return new Intl.DateTimeFormat(this.locale, { year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', timeZone: 'UTC', timeZoneName: 'short' }).format(at);
  }
}
