/**
 * The front channel as a browser sees it, for S5 (authorization with an SSO session) and S6 (a
 * password login). The login page is being written while this is, so nothing here assumes its
 * markup beyond HTML: the probe follows same-origin redirects to the first page with a form that
 * has a password field, fills that form (hidden fields kept, the text field gets the username),
 * and expects a redirect to the client with a code and a session cookie. When anything is not as
 * expected the scenarios report "not yet measurable" with the reason instead of failing the run.
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
      /** The status of the login POST's answer (302 or 303). */
      loginStatus: number;
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

/** Walks the front channel once with fetch; says whether S5 and S6 can run, and how. */
export async function probeFrontChannel(base: string, authorizePath: string, login: { username: string; password: string }): Promise<FrontChannel> {
  const jar: Record<string, string> = {};
  const get = async (path: string) => {
    const response = await fetch(base + path, { redirect: 'manual', headers: { cookie: cookieHeader(jar), accept: 'text/html' } });
    storeCookies(jar, setCookies(response.headers));
    return { response, body: await response.text() };
  };
  try {
    let path = authorizePath;
    let page = await get(path);
    if (page.response.status === 404) return { available: false, reason: `the authorization endpoint is not there yet (GET ${authorizePath.split('?')[0]} answers 404)` };
    let hops = 0;
    while ([301, 302, 303, 307].includes(page.response.status) && hops < 3) {
      const next = sameOriginPath(page.response.headers.get('location'));
      if (next === undefined) return { available: false, reason: `the authorization request without a session redirected to ${page.response.headers.get('location')}, not to a login page` };
      path = next;
      page = await get(path);
      hops++;
    }
    if (page.response.status !== 200) return { available: false, reason: `the login page answered ${page.response.status}` };
    const parsed = parseLoginForm(page.body, path);
    if (!parsed) return { available: false, reason: 'no login form (a POST form with a text and a password field) on the page the authorization request leads to' };

    const posted = await fetch(base + parsed.action, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: cookieHeader(jar), accept: 'text/html' },
      body: formBody(parsed, login),
    });
    await posted.arrayBuffer();
    storeCookies(jar, setCookies(posted.headers));
    const location = posted.headers.get('location') ?? '';
    if (![302, 303].includes(posted.status) || !location.startsWith(REDIRECT_URI) || !/[?&]code=/.test(location)) {
      return { available: false, reason: `the login POST answered ${posted.status} ${location ? `to ${location.split('?')[0]}` : 'without a redirect'}, not a redirect to the client with a code` };
    }
    const sessionCookie = cookieHeader(jar);
    const sso = await fetch(base + authorizePath, { redirect: 'manual', headers: { cookie: sessionCookie } });
    await sso.arrayBuffer();
    if (sso.status !== 302 || !/[?&]code=/.test(sso.headers.get('location') ?? '')) {
      return { available: false, reason: `an authorization request with the session cookie answered ${sso.status}, not a 302 with a code` };
    }
    return { available: true, authorizePath, sessionCookie, hops, loginStatus: posted.status };
  } catch (error) {
    return { available: false, reason: `probe failed: ${(error as Error).message}` };
  }
}

/**
 * S6 as autocannon requests, one login per pass: GET the authorization request (no cookie), follow
 * the probe's number of same-origin hops, then POST the form it found. Each connection keeps its
 * own cookie jar in autocannon's per-connection context, reset at the start of every pass.
 */
export function loginFlow(front: Extract<FrontChannel, { available: true }>, login: { username: string; password: string }): autocannon.Request[] {
  const onPage = (status: number, body: string, context: Record<string, unknown>, headers: Record<string, string | string[]>) => {
    const jar = (context.jar ??= {}) as Record<string, string>;
    storeCookies(jar, setCookies(headers));
    context.next = [301, 302, 303, 307].includes(status) ? sameOriginPath(header(headers, 'location')) : undefined;
    if (status === 200) context.form = parseLoginForm(body, (context.path as string | undefined) ?? front.authorizePath);
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
        return { ...request, method: 'GET', path, headers: { accept: 'text/html', cookie: cookieHeader((context.jar ?? {}) as Record<string, string>) } };
      },
      onResponse: onPage,
    });
  }
  requests.push({
    method: 'POST',
    setupRequest: (request, context) => {
      const parsed = context.form as ParsedForm | undefined;
      return {
        ...request,
        method: 'POST',
        path: parsed?.action ?? front.authorizePath,
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html', cookie: cookieHeader((context.jar ?? {}) as Record<string, string>) },
        body: parsed ? formBody(parsed, login) : 'missing=form',
      };
    },
  });
  return requests;
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
      if (response.status === 302 && code) codes.push(code);
      else if (++failures > 10) throw new Error(`minting codes through the authorization endpoint failed: ${response.status}`);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, lane));
  return codes;
}
