/**
 * The cookies of the front channel. The session and CSRF cookies are HttpOnly, Path=/ and, on
 * https, Secure with the `__Host-` prefix, which pins them to our host (no Domain attribute, no
 * tossing from subdomains). The session cookie is SameSite=Lax so a top-level navigation from a
 * client brings it along (single sign-on); the CSRF cookie is SameSite=Strict because only our own
 * form posts need it. The pending sign-in's cookie (a right password waiting for its second
 * factor, src/oauth/authorize/second-factor.ts) is HttpOnly, SameSite=Lax, scoped to the issuer's
 * path (so `__Secure-`, not `__Host-`, on https) and lives as long as the pending sign-in.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../../config.ts';
import { PENDING_SIGN_IN_SECONDS } from '../../oauth/authorize/second-factor.ts';

type CookieConfig = Pick<Config, 'secureCookies'>;
type PendingCookieConfig = Pick<Config, 'secureCookies' | 'issuerPath'>;

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

/** The session cookie a reply sets, for the hook that records the session's browser and address (src/http/session-devices.ts). */
const startedSessions = new WeakMap<FastifyReply, string>();

/** The session cookie value this reply sets (a sign-in just started that session), if any. */
export function sessionStartedBy(reply: FastifyReply): string | undefined {
  return startedSessions.get(reply);
}

/** A browser-session cookie: the server-side deadlines decide how long the session lives. */
export function setSessionCookie(reply: FastifyReply, config: CookieConfig, value: string): void {
  startedSessions.set(reply, value);
  reply.setCookie(sessionCookieName(config), value, { path: '/', httpOnly: true, sameSite: 'lax', secure: config.secureCookies });
}

export function clearSessionCookie(reply: FastifyReply, config: CookieConfig): void {
  reply.clearCookie(sessionCookieName(config), { path: '/', httpOnly: true, sameSite: 'lax', secure: config.secureCookies });
}

export function setCsrfCookie(reply: FastifyReply, config: CookieConfig, value: string): void {
  reply.setCookie(csrfCookieName(config), value, { path: '/', httpOnly: true, sameSite: 'strict', secure: config.secureCookies });
}

export function pendingSignInCookieName(config: CookieConfig): string {
  return config.secureCookies ? '__Secure-gatehouse_pending' : 'gatehouse_pending';
}

export function readPendingSignInCookie(request: FastifyRequest, config: CookieConfig): string | undefined {
  return readCookie(request, pendingSignInCookieName(config));
}

/** The issuer's path: the login page's and the device page's second steps are both under it. */
function pendingCookieOptions(config: PendingCookieConfig) {
  return { path: config.issuerPath === '' ? '/' : config.issuerPath, httpOnly: true, sameSite: 'lax', secure: config.secureCookies } as const;
}

export function setPendingSignInCookie(reply: FastifyReply, config: PendingCookieConfig, value: string): void {
  reply.setCookie(pendingSignInCookieName(config), value, { ...pendingCookieOptions(config), maxAge: PENDING_SIGN_IN_SECONDS });
}

/** Once the sign-in is used or gone, the browser forgets it too (the store's `take` already refuses it). */
export function clearPendingSignInCookie(reply: FastifyReply, config: PendingCookieConfig): void {
  reply.clearCookie(pendingSignInCookieName(config), pendingCookieOptions(config));
}
