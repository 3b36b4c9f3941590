/**
 * Server-rendered pages through Eta templates, which escape every `<%= %>` value for HTML
 * (autoEscape): user input never reaches a page by string concatenation.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Eta } from 'eta';
import type { FastifyReply } from 'fastify';
import type { ServingConfig } from '../deps.ts';
import { contentSecurityPolicy } from '../plugins/security-headers.ts';
import type { Theme } from './theme.ts';

const eta = new Eta({ views: join(import.meta.dirname, 'templates'), cache: true, autoEscape: true });

/** The login stylesheet, read once at start-up. */
export const LOGIN_CSS = readFileSync(join(import.meta.dirname, 'assets', 'login.css'), 'utf8');

/** The form_post page's one script (it submits the form), read once at start-up: a file, so the page's CSP needs no inline script. */
export const FORM_POST_JS = readFileSync(join(import.meta.dirname, 'assets', 'form-post.js'), 'utf8');

/** The passkey ceremonies' script (assets/passkey.js), read once at start-up. */
export const PASSKEY_JS = readFileSync(join(import.meta.dirname, 'assets', 'passkey.js'), 'utf8');

/**
 * @simplewebauthn/browser's bundled build (a UMD file defining `SimpleWebAuthnBrowser`), served
 * from our origin so `script-src 'self'` covers it; read once at start-up from node_modules.
 */
export const WEBAUTHN_JS = readFileSync(join(dirname(createRequire(import.meta.url).resolve('@simplewebauthn/browser')), '..', 'dist', 'bundle', 'index.umd.min.js'), 'utf8');

export type View = 'consent' | 'login-page' | 'login-popup' | 'login-touch' | 'error' | 'signed-out' | 'logout-confirm' | 'landing' | 'form-post' | 'device-code' | 'device-login' | 'device-confirm' | 'device-done' | 'access-denied' | 'second-factor' | 'account-security' | 'account' | 'enrol-totp' | 'forgot-password' | 'reset-password' | 'register' | 'register-finish' | 'invitation' | 'account-profile' | 'verify-email';

/** What every page needs of the configuration: where it is served and its theme. */
export type PageConfig = Pick<ServingConfig, 'issuerPath' | 'theme'>;

/**
 * `base` is the issuer's path (config.issuerPath): the layout links the stylesheet under it.
 * `theme` (GATEHOUSE_THEME_DIR, docs/theming.md), when set, adds the product name to the title,
 * its logo and name above the page, and links its stylesheets after login.css; without one the
 * pages are exactly the built-in ones.
 */
export function renderView(view: View, data: Record<string, unknown> & { base: string; theme?: Theme | undefined }): string {
  return eta.render(`./${view}`, { ...data, brand: data.theme === undefined ? undefined : brandOf(data.theme, data.base) });
}

/** The theme's parts the layout shows: file URLs under `<issuer path>/theme/` (src/http/interaction/theme-routes.ts). */
function brandOf(theme: Theme, base: string) {
  const url = (name: string | undefined) => (name === undefined ? undefined : `${base}/theme/${name}`);
  return {
    productName: theme.productName,
    logoUri: url(theme.logo?.name),
    faviconUri: url(theme.favicon?.name),
    stylesheets: [url(theme.stylesheet.name), url(theme.customCss?.name)].filter((href) => href !== undefined),
  };
}

/**
 * Headers of every page: never cached (they carry per-request state and CSRF tokens). The
 * security headers (CSP, X-Frame-Options, Referrer-Policy, nosniff, HSTS) are added to every
 * response by src/http/plugins/security-headers.ts; a page whose form must be allowed to end up
 * elsewhere passes its `form-action` sources, and a page that shows a client's logo its `img-src`
 * source (only the login page does either, see formActionSource and imageSource); the form_post
 * page passes its redirect_uri's origin and `script-src 'self'` for its script file.
 */
export function sendPage(
  reply: FastifyReply,
  status: number,
  html: string,
  options: { formActionSources?: readonly string[]; imgSources?: readonly string[]; scriptSources?: readonly string[]; connectSources?: readonly string[]; frameSources?: readonly string[] } = {},
): FastifyReply {
  const formAction = options.formActionSources ?? [];
  const img = options.imgSources ?? [];
  const script = options.scriptSources ?? [];
  const connect = options.connectSources ?? [];
  const frame = options.frameSources ?? [];
  if (formAction.length > 0 || img.length > 0 || script.length > 0 || connect.length > 0 || frame.length > 0) reply.header('content-security-policy', contentSecurityPolicy(formAction, img, script, connect, frame));
  return reply.code(status).header('cache-control', 'no-store').header('pragma', 'no-cache').type('text/html; charset=utf-8').send(html);
}
