/**
 * What every account page shares (issue 25 item 6; docs/account.md): the sections' paths under
 * the issuer, the navigation between them, and the "back to <application>" link, carried from page
 * to page as `?client_id=` (decisions AM82). The client_id is only ever looked up: the link shown
 * is the registered client's own home (src/oauth/account/self-service.ts backLinkOf), never a URL
 * from the request.
 */
import type { FastifyRequest } from 'fastify';
import type { BackLink } from '../../oauth/account/self-service.ts';
import type { RawParams } from '../../oauth/params.ts';
import type { HttpDeps } from '../deps.ts';
import type { Messages } from './i18n.ts';

export const ACCOUNT_SECTIONS = ['overview', 'profile', 'password', 'security', 'sessions', 'applications'] as const;
export type AccountSection = (typeof ACCOUNT_SECTIONS)[number];

/** The longest client_id carried from page to page. */
const MAX_CLIENT_ID = 256;

/** Each section's path: `<issuer path>/account` and its sections under it (the profile page is h25-verify's). */
export function accountSectionPaths(config: Pick<HttpDeps['config'], 'issuerPath'>): Record<AccountSection, string> {
  const base = `${config.issuerPath}/account`;
  return { overview: base, profile: `${base}/profile`, password: `${base}/password`, security: `${base}/security`, sessions: `${base}/sessions`, applications: `${base}/applications` };
}

/**
 * The account page's passkey sign-in page (AM108), as the sign-in forms link to it: the section to
 * come back to and the carried client_id in its query, as the password form carries them in its
 * fields. A plain link, so the pages that show it keep their CSP without script (AM111).
 */
export function accountPasskeySignInHref(config: Pick<HttpDeps['config'], 'issuerPath'>, section: AccountSection, clientId: string | undefined): string {
  const path = `${accountSectionPaths(config).security}/passkey-sign-in?section=${section}`;
  return clientId === undefined ? path : `${path}&client_id=${encodeURIComponent(clientId)}`;
}

/** The section a sign-in form names (its `section` field), by the allow-list only; anything else is the security page (where the form began before the other sections). */
export function sectionOf(value: string): AccountSection {
  return (ACCOUNT_SECTIONS as readonly string[]).includes(value) ? (value as AccountSection) : 'security';
}

/** The client_id the page was opened for: the query's (GET, and the forms' actions carry it), else a form's field. Undefined when absent or oversized. */
export function carriedClientId(request: FastifyRequest, raw: RawParams): string | undefined {
  const query = request.query !== null && typeof request.query === 'object' ? (request.query as RawParams) : {};
  const value = typeof query.client_id === 'string' ? query.client_id : raw.client_id;
  return typeof value === 'string' && value !== '' && value.length <= MAX_CLIENT_ID ? value : undefined;
}

/** `path` with the carried client_id as its query (none: the path alone). */
export function withClient(path: string, clientId: string | undefined): string {
  return clientId === undefined ? path : `${path}?client_id=${encodeURIComponent(clientId)}`;
}

export interface AccountNav {
  label: string;
  links: { href: string; text: string; current: boolean }[];
  back: { href: string; text: string } | undefined;
}

/** Each section's name in the navigation, in the page's language. */
export function sectionNames(t: Messages): Record<AccountSection, string> {
  return {
    overview: t.accountNavOverview,
    profile: t.accountNavProfile,
    password: t.accountNavPassword,
    security: t.accountNavSecurity,
    sessions: t.accountNavSessions,
    applications: t.accountNavApplications,
  };
}

/** The navigation every account page shows (templates/account-nav.eta), the current section marked (aria-current). */
export function accountNav(config: Pick<HttpDeps['config'], 'issuerPath'>, t: Messages, current: AccountSection, back: BackLink | undefined): AccountNav {
  const paths = accountSectionPaths(config);
  const texts = sectionNames(t);
  return {
    label: t.accountNavLabel,
    links: ACCOUNT_SECTIONS.map((section) => ({ href: withClient(paths[section], back?.clientId), text: texts[section], current: section === current })),
    back: back === undefined ? undefined : { href: back.uri, text: t.accountBackTo.replace('{client}', () => back.name) },
  };
}
