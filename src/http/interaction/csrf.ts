/**
 * Double-submit CSRF protection of the login form (RFC 6749 §10.12, OWASP CSRF Cheat Sheet): a
 * random value in a SameSite=Strict, HttpOnly cookie and the same value in a hidden field. A
 * cross-site page can make the browser post the form but can neither read nor set the cookie.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { constantTimeEqual } from '../../lib/hash.ts';
import type { HttpDeps } from '../deps.ts';
import { csrfCookieName, readCookie, setCsrfCookie } from './cookies.ts';

const TOKEN = /^[A-Za-z0-9_-]{43}$/;

/** The browser's CSRF token, kept when it has one (several tabs may show the form), else a new one. */
export function csrfToken(request: FastifyRequest, reply: FastifyReply, deps: Pick<HttpDeps, 'config' | 'random'>): string {
  const current = readCookie(request, csrfCookieName(deps.config));
  const token = current !== undefined && TOKEN.test(current) ? current : deps.random.token(32);
  setCsrfCookie(reply, deps.config, token);
  return token;
}

/** Whether the submitted field equals the cookie, compared in constant time. */
export function csrfValid(request: FastifyRequest, deps: Pick<HttpDeps, 'config'>, submitted: string | undefined): boolean {
  const cookie = readCookie(request, csrfCookieName(deps.config));
  if (cookie === undefined || submitted === undefined || !TOKEN.test(cookie)) return false;
  return constantTimeEqual(cookie, submitted);
}

/**
 * Whether the browser says nothing against the POST coming from a page of `origin` (AM103), for
 * pages that must send `Referrer-Policy: no-referrer` (a secret in their URL), whose POSTs carry
 * `Origin: null` and no Referer, so sameOrigin (console/csrf.ts) cannot be required: refused when
 * `Sec-Fetch-Site` (Fetch Metadata) is present and not `same-origin`, or when `Origin` names another
 * origin. The CSRF token is required besides.
 */
export function notCrossOrigin(request: FastifyRequest, origin: string): boolean {
  const site = request.headers['sec-fetch-site'];
  if (typeof site === 'string' && site !== 'same-origin') return false;
  const header = request.headers.origin;
  return typeof header !== 'string' || header === 'null' || header === origin;
}
