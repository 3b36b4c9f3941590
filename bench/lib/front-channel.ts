/**
 * The front channel as a browser sees it, for S5 (authorization with an SSO session), S6 (a
 * password login) and S6t (a password and a TOTP code). The login page is being written while this is, so nothing here assumes its
 * markup beyond HTML: the probe follows same-origin redirects to the first page with a form that
 * has a password field, fills that form (hidden fields kept, the text field gets the username),
 * and expects a redirect to the client with a code and a session cookie. When anything is not as
 * expected the scenarios report "not yet measurable" with the reason instead of failing the run.
 * S6t's second step is found the same way: the first POST form after the password with one visible
 * text field, its hidden fields kept.
 */
import type autocannon from 'autocannon';
import { REDIRECT_URI } from './fixtures.ts';

export type FrontChannel =
  | { available: false; reason: string }
  | {
      available: true;
      /** GET this (with the session cookie for S5) to start an authorization request. */
      authorizePath: string;
      /** `Cookie` header value of a logged-in browser. */
      sessionCookie: string;
      /** Same-origin redirects between the authorization request and the login form. */
      hops: number;
      /** The status of the answer that ends a login with a redirect to the client (302 or 303). */
      loginStatus: number;
      /**
       * Same-origin redirects between the login POST and the redirect to the client with a code:
       * none on gatehouse; one on oidc-provider, whose interaction hands back to its authorization
       * endpoint (`/auth/:uid`), which then redirects to the client.
       */
      afterLoginHops: number;
      /** The status of an authorization request's answer with the session cookie (302 or 303). */
      ssoStatus: number;
    };

interface ParsedForm {
  action: string;
  fields: [string, string][];
  usernameField: string;
  passwordField: string;
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", '#39': "'", '#x27': "'", '#x2F': '/', '#47': '/' };

function decodeEntities(value: string): string {
  return value.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (all, name: string) => {
    if (ENTITIES[name] !== undefined) return ENTITIES[name];
    if (name.startsWith('#x') || name.startsWith('#X')) return String.fromCodePoint(parseInt(name.slice(2), 16));
    if (name.startsWith('#')) return String.fromCodePoint(Number(name.slice(1)));
    return all;
  });
}

function attributes(tag: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of tag.matchAll(/([\w:-]+)\s*=\s*("([^"]*)"|'([^']*)'|([^\s>"']+))/g)) {
    out[m[1]!.toLowerCase()] = decodeEntities(m[3] ?? m[4] ?? m[5] ?? '');
  }
  return out;
}

/** The first form with a password field: where it posts and what it sends. */
export function parseLoginForm(html: string, pagePath: string): ParsedForm | undefined {
  for (const formMatch of html.matchAll(/<form\b([^>]*)>([\s\S]*?)<\/form>/gi)) {
    const formAttrs = attributes(formMatch[1]!);
    if ((formAttrs.method ?? 'get').toLowerCase() !== 'post') continue;
    const inputs = [...formMatch[2]!.matchAll(/<input\b[^>]*>/gi)].map((m) => attributes(m[0]));
    const password = inputs.find((i) => (i.type ?? '').toLowerCase() === 'password' && i.name);
    if (!password) continue;
    const username = inputs.find((i) => ['text', 'email', ''].includes((i.type ?? '').toLowerCase()) && i.name && i.name !== password.name);
    if (!username) continue;
    const fields: [string, string][] = inputs
      .filter((i) => (i.type ?? '').toLowerCase() === 'hidden' && i.name)
      .map((i) => [i.name!, i.value ?? '']);
    const submit = [...formMatch[2]!.matchAll(/<button\b[^>]*>/gi)].map((m) => attributes(m[0])).find((b) => (b.type ?? 'submit') === 'submit' && b.name);
    if (submit) fields.push([submit.name!, submit.value ?? '']);
    const action = new URL(formAttrs.action || pagePath, `http://host${pagePath}`);
    return { action: action.pathname + action.search, fields, usernameField: username.name!, passwordField: password.name! };
  }
  return undefined;
}

function setCookies(headers: Headers | Record<string, string | string[]>): string[] {
  if (headers instanceof Headers) return headers.getSetCookie();
  for (const [name, value] of Object.entries(headers)) if (name.toLowerCase() === 'set-cookie') return Array.isArray(value) ? value : [value];
  return [];
}

function header(headers: Record<string, string | string[]>, wanted: string): string | undefined {
  for (const [name, value] of Object.entries(headers)) if (name.toLowerCase() === wanted) return Array.isArray(value) ? value[0] : value;
  return undefined;
}

/** Cookie jar as a plain object (autocannon clones contexts), `name → value`. */
function storeCookies(jar: Record<string, string>, lines: string[]): void {
  for (const line of lines) {
    const pair = line.split(';', 1)[0]!;
    const eq = pair.indexOf('=');
    if (eq > 0) jar[pair.slice(0, eq).trim()] = pair.slice(eq + 1).trim();
  }
}

const cookieHeader = (jar: Record<string, string>) =>
  Object.entries(jar)
    .map(([n, v]) => `${n}=${v}`)
    .join('; ');

/** A same-origin Location as a path, or undefined when it points elsewhere (the client). */
function sameOriginPath(location: string | null | undefined): string | undefined {
  if (!location || location.startsWith(REDIRECT_URI)) return undefined;
  const url = new URL(location, 'http://host/');
  if (/^https?:\/\//i.test(location) && !/^https?:\/\/(127\.0\.0\.1|localhost)(:\d+)?\//i.test(location)) return undefined;
  return url.pathname + url.search;
}

function formBody(form: ParsedForm, login: { username: string; password: string }): string {
  const body = new URLSearchParams(form.fields);
  body.set(form.usernameField, login.username);
  body.set(form.passwordField, login.password);
  return body.toString();
}

/** A browser for the probes: fetch with a cookie jar, no redirect followed. */
function probeBrowser(base: string) {
  const jar: Record<string, string> = {};
  const send = async (path: string, init: { method?: string; body?: string }) => {
    const headers: Record<string, string> = { cookie: cookieHeader(jar), accept: 'text/html' };
    if (init.body !== undefined) headers['content-type'] = 'application/x-www-form-urlencoded';
    const response = await fetch(base + path, { method: init.method ?? 'GET', redirect: 'manual', headers, ...(init.body !== undefined ? { body: init.body } : {}) });
    storeCookies(jar, setCookies(response.headers));
    return { response, body: await response.text() };
  };
  return { jar, get: (path: string) => send(path, {}), post: (path: string, body: string) => send(path, { method: 'POST', body }) };
}

/** Follows the authorization request without a session to its login form, as S6's passes do; a string says why it cannot. */
async function reachLoginForm(browser: ReturnType<typeof probeBrowser>, authorizePath: string): Promise<{ form: ParsedForm; hops: number } | string> {
  let path = authorizePath;
  let page = await browser.get(path);
  if (page.response.status === 404) return `the authorization endpoint is not there yet (GET ${authorizePath.split('?')[0]} answers 404)`;
  let hops = 0;
  while ([301, 302, 303, 307].includes(page.response.status) && hops < 3) {
    const next = sameOriginPath(page.response.headers.get('location'));
    if (next === undefined) return `the authorization request without a session redirected to ${page.response.headers.get('location')}, not to a login page`;
    path = next;
    page = await browser.get(path);
    hops++;
  }
  if (page.response.status !== 200) return `the login page answered ${page.response.status}`;
  const form = parseLoginForm(page.body, path);
  if (!form) return 'no login form (a POST form with a text and a password field) on the page the authorization request leads to';
  return { form, hops };
}

/** Why an answer is not a redirect to the client with a code, or undefined when it is one. */
function notRedirectWithCode(what: string, response: Response): string | undefined {
  const location = response.headers.get('location') ?? '';
  if ([302, 303].includes(response.status) && location.startsWith(REDIRECT_URI) && /[?&]code=/.test(location)) return undefined;
  return `${what} answered ${response.status} ${location ? `to ${location.split('?')[0]}` : 'without a redirect'}, not a redirect to the client with a code`;
}

/** Walks the front channel once with fetch; says whether S5 and S6 can run, and how. */
export async function probeFrontChannel(base: string, authorizePath: string, login: { username: string; password: string }): Promise<FrontChannel> {
  const browser = probeBrowser(base);
  try {
    const reached = await reachLoginForm(browser, authorizePath);
    if (typeof reached === 'string') return { available: false, reason: reached };
    let posted = await browser.post(reached.form.action, formBody(reached.form, login));
    let afterLoginHops = 0;
    for (let next = sameOriginPath(posted.response.headers.get('location')); [302, 303].includes(posted.response.status) && next !== undefined && afterLoginHops < 3; next = sameOriginPath(posted.response.headers.get('location'))) {
      posted = await browser.get(next);
      afterLoginHops++;
    }
    const notCode = notRedirectWithCode(afterLoginHops ? `the login POST, after ${afterLoginHops} same-origin redirect(s),` : 'the login POST', posted.response);
    if (notCode) return { available: false, reason: notCode };
    const sessionCookie = cookieHeader(browser.jar);
    const sso = await fetch(base + authorizePath, { redirect: 'manual', headers: { cookie: sessionCookie } });
    await sso.arrayBuffer();
    if (![302, 303].includes(sso.status) || !/[?&]code=/.test(sso.headers.get('location') ?? '')) {
      return { available: false, reason: `an authorization request with the session cookie answered ${sso.status}, not a redirect with a code` };
    }
    return { available: true, authorizePath, sessionCookie, hops: reached.hops, loginStatus: posted.response.status, afterLoginHops, ssoStatus: sso.status };
  } catch (error) {
    return { available: false, reason: `probe failed: ${(error as Error).message}` };
  }
}

type Login = { username: string; password: string };
type Front = Extract<FrontChannel, { available: true }>;
const FORM_HEADERS = { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html' };

const jarOf = (context: Record<string, unknown>) => cookieHeader((context.jar ?? {}) as Record<string, string>);

/**
 * A pass's requests up to the login page: GET the authorization request (no cookie), then the
 * probe's number of same-origin hops. The page's form lands in `context.form`.
 */
function toLoginPage(front: Front, parse: (html: string, pagePath: string) => unknown = parseLoginForm): autocannon.Request[] {
  const onPage = (status: number, body: string, context: Record<string, unknown>, headers: Record<string, string | string[]>) => {
    const jar = (context.jar ??= {}) as Record<string, string>;
    storeCookies(jar, setCookies(headers));
    context.next = [301, 302, 303, 307].includes(status) ? sameOriginPath(header(headers, 'location')) : undefined;
    if (status === 200) context.form = parse(body, (context.path as string | undefined) ?? front.authorizePath);
  };
  const requests: autocannon.Request[] = [
    {
      method: 'GET',
      setupRequest: (request, context) => {
        context.jar = {};
        context.path = front.authorizePath;
        return { ...request, method: 'GET', path: front.authorizePath, headers: { accept: 'text/html' } };
      },
      onResponse: onPage,
    },
  ];
  for (let i = 0; i < front.hops; i++) {
    requests.push({
      method: 'GET',
      setupRequest: (request, context) => {
        const path = (context.next as string | undefined) ?? front.authorizePath;
        context.path = path;
        return { ...request, method: 'GET', path, headers: { accept: 'text/html', cookie: jarOf(context) } };
      },
      onResponse: onPage,
    });
  }
  return requests;
}

/**
 * S6 as autocannon requests, one login per pass: GET the authorization request (no cookie), follow
 * the probe's number of same-origin hops, then POST the form it found. Each connection keeps its
 * own cookie jar in autocannon's per-connection context, reset at the start of every pass.
 */
export function loginFlow(front: Front, login: Login, completed?: () => void): autocannon.Request[] {
  // After the POST: the probe's number of same-origin redirects to the one that reaches the client.
  const follow = (status: number, _body: string, context: Record<string, unknown>, headers: Record<string, string | string[]>) => {
    storeCookies((context.jar ??= {}) as Record<string, string>, setCookies(headers));
    context.next = [301, 302, 303, 307].includes(status) ? sameOriginPath(header(headers, 'location')) : undefined;
  };
  const done = (status: number, headers: Record<string, string | string[]>) => {
    if (completed && [302, 303].includes(status) && /[?&]code=/.test(header(headers, 'location') ?? '')) completed();
  };
  const requests: autocannon.Request[] = [
    ...toLoginPage(front),
    {
      method: 'POST',
      setupRequest: (request, context) => {
        const parsed = context.form as ParsedForm | undefined;
        return { ...request, method: 'POST', path: parsed?.action ?? front.authorizePath, headers: { ...FORM_HEADERS, cookie: jarOf(context) }, body: parsed ? formBody(parsed, login) : 'missing=form' };
      },
      onResponse: (status, body, context, headers) => (front.afterLoginHops ? follow(status, body, context, headers) : done(status, headers)),
    },
  ];
  for (let i = 0; i < front.afterLoginHops; i++) {
    const last = i === front.afterLoginHops - 1;
    requests.push({
      method: 'GET',
      setupRequest: (request, context) => ({ ...request, method: 'GET', path: (context.next as string | undefined) ?? front.authorizePath, headers: { accept: 'text/html', cookie: jarOf(context) } }),
      onResponse: (status, body, context, headers) => (last ? done(status, headers) : follow(status, body, context, headers)),
    });
  }
  return requests;
}

/** The second factor's form: where it posts, its hidden fields, and its one visible text field (the code). */
interface CodeForm {
  action: string;
  fields: [string, string][];
  codeField: string;
}

/**
 * The first POST form without a password field that has exactly one visible text field: the code
 * page after the password. As a browser submits it with its first button: that button's name and
 * value are sent only when it has a name (gatehouse's page also has a named "use a recovery code"
 * button, which must not be pressed).
 */
export function parseCodeForm(html: string, pagePath: string): CodeForm | undefined {
  for (const formMatch of html.matchAll(/<form\b([^>]*)>([\s\S]*?)<\/form>/gi)) {
    const formAttrs = attributes(formMatch[1]!);
    if ((formAttrs.method ?? 'get').toLowerCase() !== 'post') continue;
    const inputs = [...formMatch[2]!.matchAll(/<input\b[^>]*>/gi)].map((m) => attributes(m[0]));
    if (inputs.some((i) => (i.type ?? '').toLowerCase() === 'password')) continue;
    const visible = inputs.filter((i) => ['text', 'number', 'tel', ''].includes((i.type ?? '').toLowerCase()) && i.name);
    if (visible.length !== 1) continue;
    const fields: [string, string][] = inputs.filter((i) => (i.type ?? '').toLowerCase() === 'hidden' && i.name).map((i) => [i.name!, i.value ?? '']);
    const first = [...formMatch[2]!.matchAll(/<button\b[^>]*>/gi)].map((m) => attributes(m[0])).find((b) => (b.type ?? 'submit') === 'submit');
    if (first?.name) fields.push([first.name, first.value ?? '']);
    const action = new URL(formAttrs.action || pagePath, `http://host${pagePath}`);
    return { action: action.pathname + action.search, fields, codeField: visible[0]!.name! };
  }
  return undefined;
}

function codeBody(form: CodeForm, code: string): string {
  const body = new URLSearchParams(form.fields);
  body.set(form.codeField, code);
  return body.toString();
}

/**
 * Where S6t's logins come from: users with a TOTP factor (bench/lib/totp-logins.ts). `take` gives
 * a pass its user, or undefined when none may log in in this time step; `code` that user's code
 * now, called once per pass, just before the code is sent.
 */
export interface SecondFactorLogins {
  take(): (Login & { index: number }) | undefined;
  code(index: number): string;
}

/**
 * S6t as autocannon requests, one login per pass: S6's pass to the login form, the password POST
 * (answered by the second factor's page, with the pending sign-in's cookie), then the code POST.
 * A pass that gets no user (none free in this time step) posts `missing=login` to the
 * authorization endpoint instead of credentials, and its code POST `missing=form`: visible as
 * unexpected statuses, and no failed credential that the throttle would count.
 */
export function secondFactorLoginFlow(front: Front, logins: SecondFactorLogins): autocannon.Request[] {
  return [
    ...toLoginPage(front),
    {
      method: 'POST',
      setupRequest: (request, context) => {
        const parsed = context.form as ParsedForm | undefined;
        const login = parsed ? logins.take() : undefined;
        context.login = login?.index;
        const headers = { ...FORM_HEADERS, cookie: jarOf(context) };
        if (!parsed || !login) return { ...request, method: 'POST', path: front.authorizePath, headers, body: parsed ? 'missing=login' : 'missing=form' };
        context.path = parsed.action;
        return { ...request, method: 'POST', path: parsed.action, headers, body: formBody(parsed, login) };
      },
      onResponse: (status, body, context, headers) => {
        storeCookies((context.jar ??= {}) as Record<string, string>, setCookies(headers));
        context.codeForm = status === 200 && context.login !== undefined ? parseCodeForm(body, context.path as string) : undefined;
      },
    },
    {
      method: 'POST',
      setupRequest: (request, context) => {
        const form = context.codeForm as CodeForm | undefined;
        const index = context.login as number | undefined;
        const headers = { ...FORM_HEADERS, cookie: jarOf(context) };
        if (!form || index === undefined) return { ...request, method: 'POST', path: front.authorizePath, headers, body: 'missing=form' };
        return { ...request, method: 'POST', path: form.action, headers, body: codeBody(form, logins.code(index)) };
      },
    },
  ];
}

/**
 * Walks S6t's login once with fetch, for a user with a TOTP factor: the password must be answered
 * by a page with a code form (not by a redirect), and the code by a redirect to the client with a
 * code. Says whether S6t can run, and the status of that last answer (its operation's).
 */
export async function probeSecondFactorLogin(base: string, front: Front, logins: SecondFactorLogins): Promise<{ available: true; status: number } | { available: false; reason: string }> {
  const browser = probeBrowser(base);
  try {
    const reached = await reachLoginForm(browser, front.authorizePath);
    if (typeof reached === 'string') return { available: false, reason: reached };
    const login = logins.take();
    if (!login) return { available: false, reason: 'no user with a TOTP factor is free in this time step' };
    const posted = await browser.post(reached.form.action, formBody(reached.form, login));
    if (posted.response.status !== 200) return { available: false, reason: `the login POST of a user with a TOTP factor answered ${posted.response.status}, not the second factor's page` };
    const form = parseCodeForm(posted.body, reached.form.action);
    if (!form) return { available: false, reason: 'no second-factor form (a POST form with one text field) on the page after the password' };
    const answered = await browser.post(form.action, codeBody(form, logins.code(login.index)));
    const notCode = notRedirectWithCode('the second factor\'s POST', answered.response);
    return notCode ? { available: false, reason: notCode } : { available: true, status: answered.response.status };
  } catch (error) {
    return { available: false, reason: `probe failed: ${(error as Error).message}` };
  }
}

/**
 * `count` authorization codes minted the way a relying party gets them: authorization requests
 * with the logged-in browser's session cookie, each answered by a 302 to the client with a code.
 */
export async function mintCodesViaAuthorization(base: string, front: Extract<FrontChannel, { available: true }>, count: number, concurrency = 24): Promise<string[]> {
  const codes: string[] = [];
  let failures = 0;
  const lane = async () => {
    while (codes.length + failures < count) {
      const response = await fetch(base + front.authorizePath, { redirect: 'manual', headers: { cookie: front.sessionCookie } });
      await response.arrayBuffer();
      const code = new URL(response.headers.get('location') ?? '', 'http://host/').searchParams.get('code');
      if ([302, 303].includes(response.status) && code) codes.push(code);
      else if (++failures > 10) throw new Error(`minting codes through the authorization endpoint failed: ${response.status}`);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, lane));
  return codes;
}

/** The login page's passkey form (issue 24): where its options come from, where it posts, and its hidden fields. */
interface PasskeyForm {
  action: string;
  options: string;
  fields: [string, string][];
}

/** The first POST form with `data-options` (gatehouse's "Sign in with a passkey"), as its script posts it. */
export function parsePasskeyForm(html: string, pagePath: string): PasskeyForm | undefined {
  for (const formMatch of html.matchAll(/<form\b([^>]*)>([\s\S]*?)<\/form>/gi)) {
    const formAttrs = attributes(formMatch[1]!);
    if ((formAttrs.method ?? 'get').toLowerCase() !== 'post' || formAttrs['data-options'] === undefined) continue;
    const fields = [...formMatch[2]!.matchAll(/<input\b[^>]*>/gi)].map((m) => attributes(m[0])).filter((i) => i.name && i.name !== 'response').map((i): [string, string] => [i.name!, i.value ?? '']);
    const url = (path: string) => new URL(path, `http://host${pagePath}`);
    return { action: url(formAttrs.action ?? pagePath).pathname, options: url(formAttrs['data-options']).pathname, fields };
  }
  return undefined;
}

/** Where S6p's logins come from (bench/lib/passkey-logins.ts): the authenticator's answer to the options, at the page's origin. */
export interface PasskeyAnswers {
  answer(optionsJson: string, origin: string): string;
}

/**
 * S6p as autocannon requests, one username-less login per pass (issue 24): S6's pass to the login
 * page, the passkey form's options POST (as its script fetches them), then the form with the
 * authenticator's answer, answered by a redirect to the client with a code.
 */
export function passkeyLoginFlow(front: Front, answers: PasskeyAnswers, origin: string): autocannon.Request[] {
  return [
    ...toLoginPage(front, parsePasskeyForm),
    {
      method: 'POST',
      setupRequest: (request, context) => {
        const form = context.form as PasskeyForm | undefined;
        const headers = { ...FORM_HEADERS, cookie: jarOf(context) };
        if (!form) return { ...request, method: 'POST', path: front.authorizePath, headers, body: 'missing=form' };
        return { ...request, method: 'POST', path: form.options, headers, body: new URLSearchParams(form.fields).toString() };
      },
      onResponse: (status, body, context) => {
        context.options = status === 200 ? body : undefined;
      },
    },
    {
      method: 'POST',
      setupRequest: (request, context) => {
        const form = context.form as PasskeyForm | undefined;
        const options = context.options as string | undefined;
        const headers = { ...FORM_HEADERS, cookie: jarOf(context) };
        if (!form || options === undefined) return { ...request, method: 'POST', path: front.authorizePath, headers, body: 'missing=options' };
        const body = new URLSearchParams(form.fields);
        body.set('response', answers.answer(options, origin));
        return { ...request, method: 'POST', path: form.action, headers, body: body.toString() };
      },
    },
  ];
}

/** Walks S6p's login once with fetch: says whether it can run, and the status of its last answer. */
export async function probePasskeyLogin(base: string, front: Front, answers: PasskeyAnswers, origin: string): Promise<{ available: true; status: number } | { available: false; reason: string }> {
  const browser = probeBrowser(base);
  try {
    const reached = await browser.get(front.authorizePath);
    let page = reached;
    let path = front.authorizePath;
    for (let hops = 0; [301, 302, 303, 307].includes(page.response.status) && hops < 3; hops++) {
      path = sameOriginPath(page.response.headers.get('location')) ?? path;
      page = await browser.get(path);
    }
    const form = parsePasskeyForm(page.body, path);
    if (!form) return { available: false, reason: 'no passkey form (a POST form with data-options) on the login page' };
    const options = await browser.post(form.options, new URLSearchParams(form.fields).toString());
    if (options.response.status !== 200) return { available: false, reason: `the passkey options answered ${options.response.status}` };
    const body = new URLSearchParams(form.fields);
    body.set('response', answers.answer(options.body, origin));
    const answered = await browser.post(form.action, body.toString());
    const notCode = notRedirectWithCode('the passkey sign-in', answered.response);
    return notCode ? { available: false, reason: notCode } : { available: true, status: answered.response.status };
  } catch (error) {
    return { available: false, reason: `probe failed: ${(error as Error).message}` };
  }
}
