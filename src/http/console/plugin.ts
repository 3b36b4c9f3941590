/**
 * The web console at `/manage/` (issue 14 item 4, docs/console.md): server-rendered pages that are
 * a client of the management API. Each page runs through `consolePage` below, which
 *
 * 1. picks the language (`?lang=`, cookie, Accept-Language);
 * 2. without a session cookie, starts signing in (GET) or goes home (POST);
 * 3. on a POST, checks the Origin and the CSRF token derived from the session (csrf.ts) before anything;
 * 4. asks the API who the caller is (`GET /me`): 401 signs in again, 403 explains how to become an
 *    administrator;
 * 5. runs the page, turning the API's 401/403/404/other answers into pages.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { HttpDeps } from '../deps.ts';
import { ApiError, manageApi } from './api.ts';
import { clearConsoleCookie, readConsoleCookie } from './cookies.ts';
import { csrfTokenFor, csrfTokenValid, sameOrigin } from './csrf.ts';
import { consoleLocale, consoleMessages, fill, type ConsoleMessages, type Locale } from './i18n.ts';
import { DONE_KEYS, type ConsolePage, type DoneKey, type Me, type PageCall } from './page.ts';
import { CONSOLE_PAGES, CONSOLE_SECTIONS } from './pages/index.ts';
import { consoleClientReady, finishSignIn, safeReturnTo, signOut, startSignIn } from './signin.ts';
import { setFlash, takeFlash, type Flash } from './flash.ts';
import { BOOTSTRAP_COMMAND, bootstrapCommandFor, PASSWORD_PLACEHOLDER } from './setup-command.ts';
import { CONSOLE_CSS, CONSOLE_JS, renderConsole, sendConsolePage } from './views.ts';
import { CONSOLE_PATH, issuerOrigin } from '../../manage/management-clients.ts';
import { OAuthError } from '../../oauth/errors.ts';
import { BODY_LIMIT, useFormParser } from '../plugins/limits.ts';

/** The shared parts of every page's data: the layout reads these. */
interface Frame {
  locale: Locale;
  t: ConsoleMessages;
  me?: Me;
  csrf?: string;
  section?: string;
  path: string;
  /** The message of flash.ts to show once on this page. */
  flash?: Flash;
}

export async function consoleRoutes(app: FastifyInstance, deps: HttpDeps): Promise<void> {
  const origin = issuerOrigin(deps.config);
  // Forms only: a JSON or text body is refused (415), never guessed at.
  app.removeContentTypeParser(['application/json', 'text/plain']);
  // The JSON text areas (a policy, a client's metadata) hold one value longer than the protocol
  // endpoints' 8192 characters; the body limit (64 KiB) still bounds the whole form.
  app.removeContentTypeParser('application/x-www-form-urlencoded');
  useFormParser(app, { maxValueLength: BODY_LIMIT });
  app.setErrorHandler((error: Error & { statusCode?: number }, request, reply) => {
    // A form the parser refused (malformed encoding, too many fields) is an OAuthError with its
    // own 4xx status (src/http/plugins/limits.ts); Fastify's own errors carry statusCode.
    const claimed = error instanceof OAuthError ? error.status : error.statusCode;
    const status = typeof claimed === 'number' && claimed >= 400 && claimed < 500 ? claimed : 500;
    if (status === 500) request.log.error({ err: error }, 'console page failed');
    const locale = consoleLocale(request, reply, deps.config);
    const t = consoleMessages(locale);
    return message(reply, { locale, t, path: request.url }, status, t.errorTitle, status === 500 ? t.errorTitle : error.message);
  });

  const asset = (body: string, type: string) => async (_request: FastifyRequest, reply: FastifyReply) =>
    reply.header('cache-control', 'public, max-age=3600').type(type).send(body);
  app.get(`${CONSOLE_PATH}/assets/console.css`, asset(CONSOLE_CSS, 'text/css; charset=utf-8'));
  app.get(`${CONSOLE_PATH}/assets/console.js`, asset(CONSOLE_JS, 'text/javascript; charset=utf-8'));
  app.get(CONSOLE_PATH, async (_request, reply) => reply.redirect(`${CONSOLE_PATH}/`, 301));

  app.get(`${CONSOLE_PATH}/callback`, async (request, reply) => {
    const locale = consoleLocale(request, reply, deps.config);
    const t = consoleMessages(locale);
    const outcome = await finishSignIn(app, request, reply, deps);
    if (outcome.ok) return reply.code(303).header('cache-control', 'no-store').redirect(outcome.returnTo, 303);
    // The error and its description as the authorization server sent them (RFC 6749 §4.1.2.1):
    // "invalid_target" alone does not say which resource or why. The template escapes both.
    const error = outcome.error ?? '';
    const described = outcome.description === undefined ? error : `${error}: ${outcome.description}`;
    const text = outcome.reason === 'refused' ? fill(outcome.description === undefined ? t.signInRefused : t.signInRefusedDescribed, { error, description: outcome.description ?? '' }) : outcome.reason === 'exchange' ? `${t.signInFailed} (${described})` : t.signInFailed;
    return sendConsolePage(reply, 400, renderConsole('message', { ...frameData({ locale, t, path: request.url }), title: t.signInFailedTitle, text, link: { href: `${CONSOLE_PATH}/`, label: t.signInAgain } }));
  });

  // A path under /manage/ that is no page: the console's own "not found" page, not the root's JSON
  // (the management API below /manage/api/v1 keeps its problem documents: its prefix is longer).
  await app.register(
    async (scope) =>
      scope.setNotFoundHandler((request, reply) => {
        const locale = consoleLocale(request, reply, deps.config);
        const t = consoleMessages(locale);
        return message(reply, { locale, t, path: request.url }, 404, t.notFoundTitle, t.notFound);
      }),
    { prefix: CONSOLE_PATH },
  );

  app.post(`${CONSOLE_PATH}/sign-out`, async (request, reply) => {
    const locale = consoleLocale(request, reply, deps.config);
    const t = consoleMessages(locale);
    const session = sessionToken(readConsoleCookie(request, deps.config, 'session'));
    if (session === undefined) return reply.code(303).redirect(`${CONSOLE_PATH}/`, 303);
    if (!postAccepted(request, session)) return formRejected(reply, { locale, t, path: request.url });
    return signOut(app, request, reply, deps, session);
  });

  for (const page of CONSOLE_PAGES) {
    app.route({ method: page.method, url: `${CONSOLE_PATH}${page.path}`, handler: async (request, reply) => consolePage(page, request, reply) });
  }

  function postAccepted(request: FastifyRequest, session: string): boolean {
    const form = (request.body ?? {}) as Record<string, unknown>;
    return sameOrigin(request, origin) && csrfTokenValid(session, form.csrf_token);
  }

  async function consolePage(page: ConsolePage, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
    const locale = consoleLocale(request, reply, deps.config);
    const t = consoleMessages(locale);
    const frame: Frame = { locale, t, section: page.section, path: request.url };
    const session = sessionToken(readConsoleCookie(request, deps.config, 'session'));
    if (session === undefined) return signInFirst(request, reply, frame);
    if (request.method === 'POST' && !postAccepted(request, session)) return formRejected(reply, frame);

    const api = manageApi(app, session, request.ip);
    const whoami = await api.call('GET', '/me');
    if (whoami.status === 401) {
      clearConsoleCookie(reply, deps.config, 'session');
      return signInFirst(request, reply, frame);
    }
    if (whoami.status === 403) return notManager(reply, { ...frame, csrf: csrfTokenFor(session) });
    if (whoami.status !== 200) return apiFailed(reply, frame, new ApiError(whoami));
    const me = whoami.body as Me;
    // A flash is shown by the next page that renders (a GET), never lost on a POST's redirect.
    const flash = request.method === 'GET' ? takeFlash(request, reply, deps.config) : undefined;
    const full: Frame = { ...frame, me, csrf: csrfTokenFor(session), flash };
    const call: PageCall = {
      request,
      reply,
      deps,
      locale,
      t,
      api,
      me,
      canWrite: me.role === 'admin',
      params: (request.params ?? {}) as Record<string, string>,
      query: (request.query ?? {}) as Record<string, unknown>,
      form: request.method === 'POST' ? ((request.body ?? {}) as Record<string, unknown>) : {},
      render: (view, data, status = 200) => sendConsolePage(reply, status, renderConsole(view, { ...frameData(full), ...data })),
      redirect: (path: string, done?: DoneKey) => {
        const target = done === undefined ? `${CONSOLE_PATH}${path}` : `${CONSOLE_PATH}${path}${path.includes('?') ? '&' : '?'}done=${done}`;
        return reply.code(303).header('cache-control', 'no-store').redirect(target, 303);
      },
    };
    try {
      return await page.handle(call);
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      if (error.status === 401) {
        clearConsoleCookie(reply, deps.config, 'session');
        return signInFirst(request, reply, frame);
      }
      // A refused change goes back to the page its form was on, which shows the API's detail.
      const back = request.method === 'POST' && REFUSALS.has(error.status) ? formPage(request) : undefined;
      if (back !== undefined) {
        setFlash(reply, deps.config, { kind: 'refused', detail: error.detail });
        return reply.code(303).header('cache-control', 'no-store').redirect(back, 303);
      }
      return apiFailed(reply, full, error);
    }
  }

  /**
   * GET: off to sign in, coming back here. POST: nothing is done (no session, so no CSRF check is
   * possible); back to the page the form was on (else home), which signs in, and a flash that
   * says after the sign-in that the change was not made (docs/decisions.md CO10).
   */
  async function signInFirst(request: FastifyRequest, reply: FastifyReply, frame: Frame): Promise<FastifyReply> {
    if (request.method !== 'GET') {
      setFlash(reply, deps.config, { kind: 'lost' });
      return reply.code(303).header('cache-control', 'no-store').redirect(formPage(request) ?? `${CONSOLE_PATH}/`, 303);
    }
    if (!(await consoleClientReady(deps, request.log))) {
      // 200, not 503: the service works; this page is the answer to "how do I start" (docs/console.md).
      const setup = bootstrapCommandFor(deps.config);
      return sendConsolePage(reply, 200, renderConsole('setup', { ...frameData(frame), title: frame.t.noConsoleTitle, text: frame.t.noConsole, command: setup.command, passwordHidden: setup.passwordHidden ? fill(frame.t.bootstrapPasswordHidden, { placeholder: PASSWORD_PLACEHOLDER }) : undefined }));
    }
    return startSignIn(reply, deps, request.url, frame.locale);
  }

  /** The console page a form was posted from: its Referer, when of our origin and a console page. */
  function formPage(request: FastifyRequest): string | undefined {
    const referer = request.headers.referer;
    if (typeof referer !== 'string' || referer.length > 2000) return undefined;
    let url: URL;
    try {
      url = new URL(referer);
    } catch {
      return undefined;
    }
    if (url.origin !== origin) return undefined;
    // `done=` and `missing=` told of an earlier form's outcome: not this one's.
    url.searchParams.delete('done');
    url.searchParams.delete('missing');
    const path = `${url.pathname}${url.search}`;
    const safe = safeReturnTo(path);
    return safe === path ? safe : undefined;
  }

  function notManager(reply: FastifyReply, frame: Frame): FastifyReply {
    const text = fill(frame.t.notManager, { adminGroup: deps.config.manageAdminGroup, readerGroup: deps.config.manageReadonlyGroup });
    return sendConsolePage(reply, 403, renderConsole('setup', { ...frameData(frame), title: frame.t.notManagerTitle, text, command: BOOTSTRAP_COMMAND, signOutOnly: true }));
  }
}

/**
 * The session cookie as a bearer token: only the b64token characters of RFC 6750 §2.1 and a sane
 * length, so a forged cookie (say with a percent-encoded line break) never reaches a header.
 * Anything else is no session.
 */
function sessionToken(cookie: string | undefined): string | undefined {
  return cookie !== undefined && cookie.length <= 8192 && /^[A-Za-z0-9\-._~+/]+=*$/.test(cookie) ? cookie : undefined;
}

/**
 * The API's answers that refuse a change for a reason the page can show (RFC 9457 detail): a
 * conflict (the last administrator, a policy in use, a protected client) or bad input of an action
 * without its own form. 401, 403 and 404 keep their pages.
 */
const REFUSALS = new Set([400, 409, 422]);


function frameData(frame: Frame): Record<string, unknown> {
  const pathOnly = frame.path.split('?')[0] ?? `${CONSOLE_PATH}/`;
  const query = new URLSearchParams(frame.path.includes('?') ? frame.path.slice(frame.path.indexOf('?') + 1) : '');
  const done = query.get('done');
  const langLink = (lang: string) => {
    const next = new URLSearchParams(query);
    next.delete('done');
    next.set('lang', lang);
    return `${pathOnly}?${next}`;
  };
  return {
    lang: frame.locale,
    t: frame.t,
    me: frame.me,
    csrf: frame.csrf,
    canWrite: frame.me?.role === 'admin',
    base: CONSOLE_PATH,
    nav: frame.me === undefined ? [] : CONSOLE_SECTIONS.map((s) => ({ href: `${CONSOLE_PATH}${s.path}`, label: frame.t[s.label], current: s.key === frame.section })),
    languages: [
      { lang: 'en', label: 'English', href: langLink('en') },
      { lang: 'fi', label: 'Suomi', href: langLink('fi') },
      { lang: 'sv', label: 'Svenska', href: langLink('sv') },
    ],
    flash: frame.flash === undefined ? undefined : frame.flash.kind === 'lost' ? frame.t.lostChange : fill(frame.t.refusedChange, { detail: frame.flash.detail }),
    doneMessage: done !== null && (DONE_KEYS as readonly string[]).includes(done) ? frame.t[`done_${done as DoneKey}`] : undefined,
  };
}

function message(reply: FastifyReply, frame: Frame, status: number, title: string, text: string): FastifyReply {
  return sendConsolePage(reply, status, renderConsole('message', { ...frameData(frame), title, text, link: { href: `${CONSOLE_PATH}/`, label: frame.t.backToConsole } }));
}

function formRejected(reply: FastifyReply, frame: Frame): FastifyReply {
  return message(reply, frame, 403, frame.t.formRejectedTitle, frame.t.formRejected);
}

/** The API's refusal as a page: 403 "not allowed", 404 "not found", anything else its detail. */
function apiFailed(reply: FastifyReply, frame: Frame, error: ApiError): FastifyReply {
  const { t } = frame;
  if (error.status === 403) return message(reply, frame, 403, t.forbiddenTitle, t.forbidden);
  if (error.status === 404) return message(reply, frame, 404, t.notFoundTitle, t.notFound);
  // A 5xx of the API is a failure of this gateway to it (RFC 9110 §15.6.3); a 4xx keeps its status.
  const status = error.status >= 500 ? 502 : error.status >= 400 ? error.status : 502;
  return message(reply, frame, status, t.errorTitle, fill(t.apiFailed, { status: error.status, detail: error.detail }));
}
