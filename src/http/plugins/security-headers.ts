/**
 * The security headers of every response — pages, JSON, redirects, errors, 404s — set in one
 * onSend hook on the root instance, so no route can forget them:
 *
 * - `Content-Security-Policy`: nothing may load but our own stylesheet (and images); no script at
 *   all, no inline style, no framing, no `<base>`, and forms may post only to us. A page that
 *   needs more (the login form, see formActionSource) sets its own policy before the hook runs.
 * - `X-Frame-Options: DENY` for browsers without CSP `frame-ancestors` (RFC 9700 §4.16, clickjacking).
 * - `X-Content-Type-Options: nosniff`: a JSON or text answer is never sniffed into HTML or script.
 * - `Referrer-Policy: no-referrer`: codes, states and hints in our URLs never leak in a Referer
 *   (RFC 9700 §4.2.4).
 * - `Strict-Transport-Security` only when the issuer is https: over plain http it means nothing
 *   (RFC 6797 §7.2), and on a development host it would pin https onto `localhost` for a year.
 */
import type { FastifyInstance } from 'fastify';
import type { Config } from '../../config.ts';

/**
 * The policy of every response; `form-action` and `img-src` are widened only by the login page
 * (see formActionSource and imageSource below). `script-src` exists only on the form_post page,
 * and there only as `'self'`: its one script is our static file (never inline, never eval), and
 * every other answer of our origin is JSON, text or HTML sent with `nosniff`, which a browser
 * refuses to run as script.
 */
export function contentSecurityPolicy(formActionSources: readonly string[] = [], imgSources: readonly string[] = [], scriptSources: readonly string[] = [], connectSources: readonly string[] = [], frameSources: readonly string[] = []): string {
  return [
    "default-src 'none'",
    // Only the signed-out page frames anything: the front-channel logout URIs' origins (LO9).
    ...(frameSources.length > 0 ? [`frame-src ${frameSources.join(' ')}`] : []),
    ...(scriptSources.length > 0 ? [`script-src ${scriptSources.join(' ')}`] : []),
    // Only the pages with a passkey ceremony fetch (its options, from our origin: 'self').
    ...(connectSources.length > 0 ? [`connect-src ${connectSources.join(' ')}`] : []),
    "style-src 'self'",
    `img-src ${["'self'", ...imgSources].join(' ')}`,
    `form-action ${["'self'", ...formActionSources].join(' ')}`,
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join('; ');
}

/**
 * The CSP source that lets the login form's redirect reach the client. Chromium checks
 * `form-action` against every redirect that follows a form submission, not only the form's own
 * action (whether it should is the open w3c/webappsec-csp#8; Firefox does not, MDN's form-action
 * page warns), and the login POST answers 303 to the client's redirect_uri: with
 * `form-action 'self'` alone Chromium refuses that navigation and the login never reaches the
 * client (test/e2e/login-page.test.ts fails so). So the login page's policy also allows the origin
 * of the one redirect_uri its request was verified for — not every client's, not any URL.
 *
 * http(s) URIs give their origin (`https://rp.example:8443`); a private-use scheme
 * (`com.example.app:/cb`, RFC 8252 §7.1) gives the scheme, the narrowest source CSP can express
 * for it. A host CSP cannot write (an IPv6 literal such as `[::1]`) falls back to the scheme.
 * Undefined when no source is needed or none can be built safely.
 */
export function formActionSource(redirectUri: string): string | undefined {
  let url: URL;
  try {
    url = new URL(redirectUri);
  } catch {
    return undefined;
  }
  const scheme = url.protocol; // lower-case, with the colon; only [a-z0-9+.-] (WHATWG URL)
  if (!/^[a-z][a-z0-9+.-]*:$/.test(scheme)) return undefined;
  if (scheme !== 'http:' && scheme !== 'https:') return scheme;
  // CSP host-source: DNS labels and an optional port (CSP3 §2.3.1); url.host is already punycode.
  return /^[a-z0-9.-]+(:[0-9]+)?$/.test(url.host) ? `${scheme}//${url.host}` : scheme;
}

/**
 * The CSP source that lets the login page show the client's registered `logo_uri`: that URL's
 * origin, and only on the login page of that client's request. The logo is loaded from the
 * client's own server (registration allows only https, or http on a loopback host), as the
 * client's pages would load it; Referrer-Policy: no-referrer keeps the login URL, with its state
 * and hints, out of that request. Undefined when the URL is not http(s) or its host cannot be
 * written in CSP: the page then shows no logo.
 */
export function imageSource(logoUri: string): string | undefined {
  let url: URL;
  try {
    url = new URL(logoUri);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return undefined;
  return /^[a-z0-9.-]+(:[0-9]+)?$/.test(url.host) ? `${url.protocol}//${url.host}` : undefined;
}

/** The headers every response carries, for this configuration. */
export function securityHeaders(config: Pick<Config, 'issuer'>): Readonly<Record<string, string>> {
  return {
    'content-security-policy': contentSecurityPolicy(),
    'x-frame-options': 'DENY',
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    ...(config.issuer.startsWith('https:') ? { 'strict-transport-security': 'max-age=31536000; includeSubDomains' } : {}),
  };
}

/** Adds the security headers to every response of `app` (call on the root instance, before the routes). */
export function useSecurityHeaders(app: FastifyInstance, config: Pick<Config, 'issuer'>): void {
  const headers = Object.entries(securityHeaders(config));
  app.addHook('onSend', async (_request, reply) => {
    for (const [name, value] of headers) {
      // A page may have set a stricter or wider policy of its own (the login form's form-action),
      // or its own referrer policy (the console's same-origin: its CSRF check reads Origin).
      if ((name === 'content-security-policy' || name === 'referrer-policy') && reply.hasHeader(name)) continue;
      reply.header(name, value);
    }
  });
}
