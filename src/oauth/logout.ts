/**
 * RP-initiated logout (OpenID Connect RP-Initiated Logout 1.0 §2, §3). Every failure is shown to
 * the user as a page and nothing is redirected or ended. Without a valid id_token_hint nobody
 * vouches that the user's relying party sent the request — any site can make the browser send it
 * — so the user is asked first (§2: the OP SHOULD ask the End-User whether to log out), and the
 * post-logout redirect happens only with a valid hint, to a URI registered, exactly, for the
 * client the request identifies (§3).
 */
import { timingSafeEqual } from 'node:crypto';
import type { SsoSession } from '../domain/session.ts';
import { fingerprint } from '../observability/audit.ts';
import type { OAuthDeps } from './deps.ts';
import { InvalidRequest } from './errors.ts';
import { verifyIdTokenHint, type IdTokenHint } from './id-token-hint.ts';
import { isLookupKey } from './lookup-key.ts';
import { param, rejectRepeated, type RawParams } from './params.ts';
import { endSession, findSession } from './sessions.ts';
import { sessionIdFor } from './sid.ts';

const LOGOUT_PARAMS = ['id_token_hint', 'client_id', 'post_logout_redirect_uri', 'state', 'ui_locales', 'logout_hint'] as const;
const MAX_LENGTH = 2048;
const MAX_HINT_LENGTH = 8192;
const DANGEROUS_SCHEME = /^\s*(javascript|data|vbscript|file):/i;

export interface LogoutRequest {
  hint: IdTokenHint | undefined;
  /** The validated post-logout redirect and the state to append; undefined: show the signed-out page. */
  redirect: { uri: string; state: string | undefined } | undefined;
  /**
   * Without an id_token_hint: the registered redirect asked for (followed only when `sid` proves
   * the relying party, below), and the client_id and `logout_hint` that may name the browser's
   * session by its `sid` (LO2).
   */
  unvouched: { redirect: { uri: string; state: string | undefined } | undefined; clientId: string | undefined; logoutHint: string | undefined } | undefined;
}

export interface LogoutResult {
  type: 'done';
  /** Whether the browser's session cookie is to be cleared. */
  clearCookie: boolean;
  /** Whether a session was ended (and its tokens revoked). */
  ended: boolean;
  redirect: LogoutRequest['redirect'];
  /**
   * Front-Channel Logout 1.0 §3: the URLs the signed-out page loads in iframes, one per relying
   * party of the ended session that registered a `frontchannel_logout_uri`, each with `iss` and
   * the `sid` that party knows (LO9). Empty when there are none.
   */
  frontChannel: string[];
}

/** Nothing was done: the user must confirm the logout first (a form with a CSRF token). */
export interface LogoutConfirmation {
  type: 'confirm';
}

export interface LogoutOptions {
  /**
   * The user confirmed the logout on our own page: the HTTP layer checked the form's CSRF token.
   * Without a valid id_token_hint a logout happens only then.
   */
  confirmed: boolean;
  ip?: string | undefined;
}

/** Checks the parameters; throws InvalidRequest (shown as a page) when any is unacceptable. */
export async function validateLogout(deps: OAuthDeps, raw: RawParams): Promise<LogoutRequest> {
  rejectRepeated(raw, LOGOUT_PARAMS);
  const token = param(raw, 'id_token_hint');
  const clientIdParam = param(raw, 'client_id');
  const uri = param(raw, 'post_logout_redirect_uri');
  const state = param(raw, 'state');
  const logoutHint = param(raw, 'logout_hint');
  if ((token?.length ?? 0) > MAX_HINT_LENGTH || [clientIdParam, uri, state, logoutHint].some((v) => (v?.length ?? 0) > MAX_LENGTH)) throw new InvalidRequest('A logout parameter is too long.');

  const hint = token === undefined ? undefined : await verifyIdTokenHint(deps, token);
  // §2: with both present, the client_id must be the one the ID token was issued to.
  if (hint && clientIdParam !== undefined && !hint.audiences.includes(clientIdParam) && hint.clientId !== clientIdParam) {
    throw new InvalidRequest('The client_id does not match the id_token_hint.');
  }
  const unvouched = (redirect: LogoutRequest['redirect']) => (hint === undefined ? { redirect, clientId: clientIdParam, logoutHint } : undefined);
  if (uri === undefined) return { hint, redirect: undefined, unvouched: unvouched(undefined) };
  // Checked even without a hint (a bad value is an error), but honoured only with one (§3: without
  // an id_token_hint the OP MUST NOT redirect unless it has other means to confirm the target).

  const clientId = clientIdParam ?? hint?.clientId;
  if (clientId === undefined) throw new InvalidRequest('A post_logout_redirect_uri needs an id_token_hint or a client_id.');
  const client = isLookupKey(clientId) ? await deps.store.clients.get(clientId) : undefined;
  if (!client?.active || DANGEROUS_SCHEME.test(uri) || uri.includes('#') || !client.postLogoutRedirectUris.includes(uri)) {
    throw new InvalidRequest('The post_logout_redirect_uri is not registered for this client.');
  }
  return { hint, redirect: hint === undefined ? undefined : { uri, state }, unvouched: unvouched({ uri, state }) };
}

/**
 * Whether a request without an id_token_hint names the browser's session by the `sid` its client
 * was given (LO2): `logout_hint` (RP-Initiated Logout 1.0 §2 leaves its meaning to the OP and
 * names a session identifier as one) equal to the session's sid at `client_id`. Only a relying
 * party that received an ID token in this session knows it, so it vouches for the request as a
 * hint does: no question, and the registered redirect is followed (§3: "other means of confirming
 * the legitimacy of the post-logout redirection target").
 */
function namesSessionBySid(request: LogoutRequest, session: SsoSession): boolean {
  const { clientId, logoutHint } = request.unvouched ?? {};
  if (clientId === undefined || logoutHint === undefined) return false;
  const expected = Buffer.from(sessionIdFor(session.sessionIndex, clientId));
  const given = Buffer.from(logoutHint);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/**
 * Ends the browser's SSO session and revokes the tokens issued in it. With an id_token_hint, the
 * session must belong to the hint's `sub`; its session_index may differ (the user logged in again
 * since), and then the browser's current session is the one ended. A session of another user is
 * left alone: a relying party cannot log out someone it did not name. Without a hint a live
 * session is ended only when the user confirmed (`options.confirmed`) or the request names it by
 * its `sid` (namesSessionBySid); otherwise the answer is `confirm` and nothing changes.
 */
export async function logout(deps: OAuthDeps, raw: RawParams, sessionCookie: string | undefined, options: LogoutOptions): Promise<LogoutResult | LogoutConfirmation> {
  const request = await validateLogout(deps, raw);
  const session = await findSession(deps, sessionCookie);
  const bySid = session !== undefined && request.hint === undefined && namesSessionBySid(request, session);
  if (session && request.hint === undefined && !bySid && !options.confirmed) return { type: 'confirm' };
  if (session && request.hint !== undefined && request.hint.sub !== session.userId) {
    return { type: 'done', clearCookie: false, ended: false, redirect: request.redirect, frontChannel: [] };
  }
  let frontChannel: string[] = [];
  if (session) {
    const { revoked, frontChannel: notices } = await endSession(deps, session);
    frontChannel = notices.map((notice) => frontChannelUrl(notice.uri, deps.config.issuer, notice.sid));
    deps.audit.emit({ event: 'logout', userId: session.userId, session: fingerprint(session.sessionIndex), revoked, clientId: request.hint?.clientId ?? (bySid ? request.unvouched?.clientId : undefined), ip: options.ip });
  }
  const redirect = bySid ? request.unvouched?.redirect : request.redirect;
  return { type: 'done', clearCookie: sessionCookie !== undefined, ended: session !== undefined, redirect, frontChannel };
}

/** Front-Channel Logout 1.0 §3: the RP's URI with `iss` and `sid` added to its own query. */
function frontChannelUrl(uri: string, issuer: string, sid: string): string {
  const url = new URL(uri);
  url.searchParams.append('iss', issuer);
  url.searchParams.append('sid', sid);
  return url.toString();
}
