/**
 * The console's cookies, all HttpOnly and scoped to `Path=/manage`, so neither the OpenID
 * Provider's routes under the issuer path nor any other application sharing the host ever receive
 * the administrator's token (docs/decisions.md CO2):
 *
 * - the session: the management API access token itself, SameSite=Strict, Max-Age = its expires_in;
 * - the ID token, kept only as the `id_token_hint` of sign-out (same attributes);
 * - the sign-in transaction (state, nonce, PKCE verifier, where to return), SameSite=Lax so the
 *   redirect back from the authorization endpoint brings it, ten minutes;
 * - the language chosen with `?lang=`, a year;
 * - a flash: one message for the next page shown (a refused change's detail, or "your last change
 *   was not made" after a sign-in), SameSite=Lax so it survives the sign-in's redirects, ten minutes.
 *
 * On https they are Secure and carry the `__Secure-` prefix. `__Host-` would also pin them to the
 * host, but it requires `Path=/` (RFC 6265bis §4.1.3.2), which would send the token to every path
 * of a host the issuer may share with other applications; the path scope is worth more here.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../../config.ts';
import { CONSOLE_PATH } from '../../manage/management-clients.ts';

type CookieConfig = Pick<Config, 'secureCookies'>;

export type ConsoleCookie = 'session' | 'idToken' | 'signIn' | 'lang' | 'flash';

const BASE_NAMES: Record<ConsoleCookie, string> = {
  session: 'gatehouse_console',
  idToken: 'gatehouse_console_id',
  signIn: 'gatehouse_console_signin',
  lang: 'gatehouse_console_lang',
  flash: 'gatehouse_console_flash',
};

/** How each cookie may travel; Max-Age for those that outlive the browser session on their own. */
const SAME_SITE: Record<ConsoleCookie, 'strict' | 'lax'> = { session: 'strict', idToken: 'strict', signIn: 'lax', lang: 'lax', flash: 'lax' };

/** The sign-in transaction's lifetime: long enough to type a password, short enough to be useless later. */
export const SIGN_IN_MAX_AGE = 600;
const LANG_MAX_AGE = 365 * 24 * 3600;

export function consoleCookieName(config: CookieConfig, cookie: ConsoleCookie): string {
  return config.secureCookies ? `__Secure-${BASE_NAMES[cookie]}` : BASE_NAMES[cookie];
}

export function readConsoleCookie(request: FastifyRequest, config: CookieConfig, cookie: ConsoleCookie): string | undefined {
  // @fastify/cookie parses in an onRequest hook: a request refused by an earlier root hook (a path
  // not in its normal form, src/http/plugins/limits.ts) reaches the console's error page without it.
  const cookies = request.cookies as FastifyRequest['cookies'] | undefined;
  const value = cookies?.[consoleCookieName(config, cookie)];
  return value === undefined || value === '' ? undefined : value;
}

export function setConsoleCookie(reply: FastifyReply, config: CookieConfig, cookie: ConsoleCookie, value: string, maxAge?: number): void {
  const age = maxAge ?? (cookie === 'signIn' || cookie === 'flash' ? SIGN_IN_MAX_AGE : cookie === 'lang' ? LANG_MAX_AGE : undefined);
  reply.setCookie(consoleCookieName(config, cookie), value, {
    path: CONSOLE_PATH,
    httpOnly: true,
    sameSite: SAME_SITE[cookie],
    secure: config.secureCookies,
    ...(age === undefined ? {} : { maxAge: age }),
  });
}

export function clearConsoleCookie(reply: FastifyReply, config: CookieConfig, cookie: ConsoleCookie): void {
  reply.clearCookie(consoleCookieName(config, cookie), { path: CONSOLE_PATH, httpOnly: true, sameSite: SAME_SITE[cookie], secure: config.secureCookies });
}
