import type { FastifyReply, FastifyRequest } from 'fastify';
import type { SsoSession } from '../../domain/session.ts';
import { type AuthorizationRequest, carriedFields } from '../../oauth/authorize/request.ts';
import { releasedClaimNames } from '../../oauth/claims.ts';
import { clientNameFor, logoUriOf } from '../../oauth/client-display.ts';
import { consentPageFacts, type ScopeServers } from '../../oauth/confirmation-facts.ts';
import { ENDPOINT_PATHS } from '../../oauth/discovery.ts';
import { fingerprint } from '../../observability/audit.ts';
import type { HttpDeps } from '../deps.ts';
import { formActionSource, imageSource } from '../plugins/security-headers.ts';
import { csrfToken } from './csrf.ts';
import { chooseLocale, messages, type Messages } from './i18n.ts';
import { renderView, sendPage } from './views.ts';

/** Where the consent form posts; the consent route validates the carried request again from scratch. */
export function consentPath(config: Pick<HttpDeps['config'], 'issuerPath'>): string {
  return `${config.issuerPath}${ENDPOINT_PATHS.authorization}/consent`;
}

export interface ConsentPageOptions {
  status?: number;
  /** Shown above the lists: the form expired. */
  expired?: boolean;
}

/**
 * The binding of a consent form to the session it was shown to: the fingerprint of its
 * session_index. The consent route refuses a form whose session has since changed (another user
 * signed in in this browser), so a consent is only ever stored for the user who saw the page.
 */
export function consentSessionBinding(session: Pick<SsoSession, 'sessionIndex'>): string {
  return fingerprint(session.sessionIndex);
}

/**
 * The consent page of a third-party client (issue 13, item 4): its name (localized
 * `client_name#<tag>`) and https logo, what the scope lets it do, the claims it will receive and
 * the resource servers (audiences) it may use the sign-in with, in the page's language. The
 * authorization request travels as hidden fields, as on the login form (no server-side
 * interaction state, any instance can take the answer), with the double-submit CSRF token and
 * the session binding.
 */
export async function sendConsentPage(
  request: FastifyRequest,
  reply: FastifyReply,
  deps: HttpDeps,
  authorization: AuthorizationRequest,
  session: SsoSession,
  options: ConsentPageOptions = {},
): Promise<FastifyReply> {
  const locale = chooseLocale(authorization.uiLocales, request.headers['accept-language']);
  const t = messages(locale, deps.config.theme);
  const clientName = clientNameFor(authorization.client, locale);
  // Only an https logo on this page: what the user is asked to trust should not come over plain http.
  const logoUri = logoUriOf(authorization.client, locale);
  const logoSource = logoUri?.startsWith('https://') ? imageSource(logoUri) : undefined;
  // The policy's claims (issue 13 item 1) are read here, the one place all three callers (the
  // authorization endpoint, the login form, the consent answer) pass through.
  const facts = await consentPageFacts(deps, authorization.client, session.userId, authorization.scope);
  const described = describeScope(facts.servers, authorization.scope, locale, t, t.consentScopeNames);
  const html = renderView('consent', {
    lang: locale,
    t,
    title: t.consentTitle,
    display: authorization.display,
    frame: FRAMES[authorization.display],
    intro: t.consentIntro.replace('{client}', () => clientName),
    logoUri: logoSource === undefined ? undefined : logoUri,
    logoAlt: t.consentLogoAlt.replace('{client}', () => clientName),
    scopes: described.scopes,
    claims: consentClaims(authorization.scope, facts.policyClaims).map((name) => plain(t.claimNames, name)),
    audiences: described.audiences,
    username: facts.username ?? '',
    message: options.expired ? t.consentExpired : undefined,
    base: deps.config.issuerPath,
    theme: deps.config.theme,
    action: consentPath(deps.config),
    hidden: carriedFields(authorization),
    csrfToken: csrfToken(request, reply, deps),
    consentSession: consentSessionBinding(session),
  });
  // The consent POST ends in a 303 to the redirect_uri, which Chromium checks against form-action.
  const formAction = formActionSource(authorization.target.redirectUri);
  return sendPage(reply, options.status ?? 200, html, { formActionSources: formAction === undefined ? [] : [formAction], imgSources: logoSource === undefined ? [] : [logoSource] });
}

/** The claim names the client will receive: the standard ones its scope releases, then `extra` (the policy's, in plain words where the bundle has them), without duplicates. */
export function consentClaims(scope: readonly string[], extra: readonly string[] = []): string[] {
  return [...new Set([...releasedClaimNames(scope), ...extra])];
}

/** The display value's frame of the page, as the login page's templates use them. */
const FRAMES = { page: 'card', popup: 'compact', touch: 'touch' } as const;

/** A value in plain words when the bundle has them, else as it is. */
function plain(names: Messages['consentScopeNames'] | Messages['scopeNames'] | Messages['claimNames'], value: string): string {
  const table: Readonly<Record<string, string>> = names;
  return Object.hasOwn(table, value) ? table[value]! : value;
}

/**
 * A granted scope in the page's words (the consent page; the device confirmation), from its
 * resource servers as read by src/oauth/confirmation-facts.ts: `scopes`, what
 * it lets the client do — the OIDC values from `names`, and each resource server's declared value
 * (docs/decisions.md RS7) as that server's name and the value (`consentResourceScope`), since only
 * the API knows what its value means — and `audiences`, the names of the resource servers it asks
 * for (their client_ids when they have vanished). A value that asks for a server itself (its
 * client_id) is named among the audiences alone.
 */
export function describeScope(resourceServers: ScopeServers, scope: readonly string[], locale: ReturnType<typeof chooseLocale>, t: Messages, names: Messages['consentScopeNames'] | Messages['scopeNames']): { scopes: string[]; audiences: string[] } {
  const { audienceOf, servers } = resourceServers;
  const serverNames = new Map([...servers].map(([id, client]) => [id, client === undefined ? id : clientNameFor(client, locale)]));
  const scopes = scope.flatMap((value) => {
    const audience = audienceOf.get(value);
    if (audience === undefined) return [plain(names, value)];
    if (audience === value) return [];
    return [t.consentResourceScope.replace('{resource}', () => serverNames.get(audience)!).replace('{scope}', () => value)];
  });
  return { scopes, audiences: [...serverNames.values()] };
}
