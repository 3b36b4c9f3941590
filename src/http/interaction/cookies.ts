/**
 * The two cookies of the front channel. Both are HttpOnly, Path=/ and, on https, Secure with the
 * `__Host-` prefix, which pins them to our host (no Domain attribute, no tossing from subdomains).
 * The session cookie is SameSite=Lax so a top-level navigation from a client brings it along
 * (single sign-on); the CSRF cookie is SameSite=Strict because only our own form posts need it.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../../config.ts';

type CookieConfig = Pick<Config, 'secureCookies'>;

export function sessionCookieName(config: CookieConfig): string {
  return config.secureCookies ? '__Host-gatehouse_session' : 'gatehouse_session';
}

export function csrfCookieName(config: CookieConfig): string {
  return config.secureCookies ? '__Host-gatehouse_csrf' : 'gatehouse_csrf';
}

export function readCookie(request: FastifyRequest, name: string): string | undefined {
  const value = request.cookies[name];
  return value === undefined || value === '' ? undefined : value;
}

export function readSessionCookie(request: FastifyRequest, config: CookieConfig): string | undefined {
  return readCookie(request, sessionCookieName(config));
}

/** A browser-session cookie: the server-side deadlines decide how long the session lives. */
export function setSessionCookie(reply: FastifyReply, config: CookieConfig, value: string): void {
  reply.setCookie(sessionCookieName(config), value, { path: '/', httpOnly: true, sameSite: 'lax', secure: config.secureCookies });
}

export function clearSessionCookie(reply: FastifyReply, config: CookieConfig): void {
  reply.clearCookie(sessionCookieName(config), { path: '/', httpOnly: true, sameSite: 'lax', secure: config.secureCookies });
}

export function setCsrfCookie(reply: FastifyReply, config: CookieConfig, value: string): void {
  reply.setCookie(csrfCookieName(config), value, { path: '/', httpOnly: true, sameSite: 'strict', secure: config.secureCookies });
}
