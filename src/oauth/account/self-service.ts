/**
 * The account page's use cases (issue 25 item 6; docs/account.md; decisions AM80–AM89): the
 * signed-in user changes their password, sees and ends their SSO sessions, and sees and withdraws
 * the consents they gave applications. Each takes the `Account` of the browser's session
 * (security.ts accountOf), so every change is scoped to that session's user: an id of another
 * user's session or consent changes nothing and is answered as an unknown one. The HTTP layer
 * (src/http/interaction/account-pages.ts) only renders what these decide.
 */
import type { Client } from '../../domain/client.ts';
import { isNativeClient } from '../../domain/client.ts';
import type { Consent } from '../../domain/consent.ts';
import type { SsoSession } from '../../domain/session.ts';
import { IdentityError } from '../../identity/errors.ts';
import { PasswordRefused, passwordPolicyOf, type PasswordRefusal } from '../../identity/password-policy.ts';
import { checkedPassword, hashCheckedPassword } from '../../identity/users.ts';
import { fingerprint } from '../../observability/audit.ts';
import { checkPasswordLogin } from '../authorize/verify-credentials.ts';
import { clientNameFor } from '../client-display.ts';
import { withdrawConsent } from '../consents.ts';
import type { OAuthDeps } from '../deps.ts';
import { endOtherSessions, endSessionOfUser } from '../sessions.ts';
import { ACCOUNT_CLIENT_ID, type Account } from './security.ts';

/** The longest current password worth checking: longer is no password anyone could have set (users.ts's rules stop far below). */
const MAX_CURRENT_PASSWORD = 4096;
/** The longest client_id the page looks up (the store's ids are far shorter). */
const MAX_CLIENT_ID = 256;
/** The most sessions the list shows: far more than anyone has; older ones still end with "end all others". */
export const MAX_LISTED_SESSIONS = 100;

export type PasswordChange =
  | { type: 'changed'; sessionsEnded: number; revoked: number }
  | { type: 'mismatch' }
  /** Refused by the password policy (`reason`, and the policy's minimum length for `too_short`); no reason: not a password at all. */
  | { type: 'invalid_password'; reason?: PasswordRefusal; minLength?: number }
  | { type: 'wrong_current' }
  | { type: 'throttled'; retryAfter: number }
  | { type: 'reauthenticate' }
  | { type: 'changed_meanwhile' };

/**
 * The password form (AM81, AM84). The new password twice, and the current one — which may be left
 * out when the session's sign-in is recent (GATEHOUSE_ACCOUNT_REAUTH_WINDOW, as every change on
 * the security page), and must be for a user who has none (a passkey-only user sets one after a
 * fresh sign-in). The current password goes through checkPasswordLogin, so a wrong one counts
 * against the login throttle of the same username and address, and a throttled one is refused
 * before it is checked. The new one passes the rules and hashing of every other way
 * (hashCheckedPassword). Then one unit of work sets it only while the hash is still the one just
 * verified (a change made meanwhile wins: `changed_meanwhile`), ends the user's other sessions
 * and revokes every token not issued in this one (sessions.ts endOtherSessions), and deletes the
 * user's pending reset links. The browser that made the change stays signed in.
 */
export async function changeAccountPassword(deps: OAuthDeps, account: Account, input: { current: string; password: string; confirmation: string; ip: string | undefined }): Promise<PasswordChange> {
  if (input.password !== input.confirmation) return { type: 'mismatch' };
  const { user } = account;
  const context = { username: user.username, email: user.email };
  const policy = passwordPolicyOf(deps.config);
  try {
    checkedPassword(input.password, context, policy);
  } catch (error) {
    if (error instanceof PasswordRefused) return { type: 'invalid_password', reason: error.reason, minLength: error.minLength };
    if (error instanceof IdentityError && error.code === 'invalid_argument') return { type: 'invalid_password' };
    throw error;
  }
  let expected: string | undefined;
  let by: 'current_password' | 'recent_sign_in';
  if (input.current === '') {
    if (!account.fresh) return { type: 'reauthenticate' };
    expected = (await deps.store.users.getCredentials(user.username))?.passwordHash;
    by = 'recent_sign_in';
  } else {
    if (input.current.length > MAX_CURRENT_PASSWORD) return { type: 'wrong_current' };
    const check = await checkPasswordLogin(deps, { username: user.username, password: input.current, clientId: ACCOUNT_CLIENT_ID, ip: input.ip, via: 'login_form' });
    if (check.type === 'failed') return { type: 'wrong_current' };
    if (check.type === 'throttled') return check;
    if (check.user.id !== user.id) return { type: 'wrong_current' };
    expected = check.passwordHash;
    by = 'current_password';
  }
  const passwordHash = await hashCheckedPassword(input.password, context, policy);
  const now = deps.clock.now();
  const done = await deps.store.transaction(async (tx) => {
    if (!(await tx.users.replacePasswordHash(user.id, expected, passwordHash, now))) return undefined;
    const ended = await endOtherSessions(tx, account.session, now);
    await tx.passwordResets.deleteOfUser(user.id);
    return ended;
  });
  if (done === undefined) return { type: 'changed_meanwhile' };
  deps.audit.emit({ event: 'account.password_changed', userId: user.id, username: user.username, by, sessionsEnded: done.sessions.length, revoked: done.revoked, ip: input.ip });
  return { type: 'changed', sessionsEnded: done.sessions.length, revoked: done.revoked };
}

/** Whether the user has a password at all (a passkey-only user has none): the form then asks for no current one. */
export async function hasPassword(deps: Pick<OAuthDeps, 'store'>, account: Account): Promise<boolean> {
  return (await deps.store.users.getCredentials(account.user.username))?.passwordHash !== undefined;
}

/** A session as the list shows it; `lastUsedAt`: when its idle deadline last moved (to within a sixtieth of the idle timeout, sessions.ts touchSession). */
export interface AccountSession {
  sessionIndex: string;
  current: boolean;
  signedInAt: number;
  lastUsedAt: number;
  userAgent: string | undefined;
  ip: string | undefined;
}

/** The user's live sessions, newest first, this browser's marked. */
export async function accountSessions(deps: Pick<OAuthDeps, 'store' | 'clock' | 'config'>, account: Account): Promise<AccountSession[]> {
  const sessions = await deps.store.sessions.pageOfUser(account.user.id, deps.clock.now(), { after: undefined, limit: MAX_LISTED_SESSIONS });
  const idleMs = deps.config.sessionIdleTtl * 1000;
  return sessions.map((session: SsoSession) => ({
    sessionIndex: session.sessionIndex,
    current: session.idHash === account.session.idHash,
    signedInAt: session.authTime,
    lastUsedAt: Math.max(session.createdAt, Math.min(session.expiresAt, session.maxExpiresAt) - idleMs),
    userAgent: session.userAgent,
    ip: session.ip,
  }));
}

/**
 * Ends one of the user's own sessions by its session_index, as an administrator ends one
 * (sessions.ts endSessionOfUser: its codes spent and its tokens revoked in the same unit of
 * work). `not_found` for a malformed index, another user's session or one already ended: the
 * same answer, so the form tells nothing of other users' sessions.
 */
export async function endAccountSession(deps: OAuthDeps, account: Account, sessionIndex: string, ip: string | undefined): Promise<{ type: 'ended'; revoked: number } | { type: 'not_found' }> {
  const ended = await endSessionOfUser(deps, account.user.id, sessionIndex);
  if (ended === undefined) return { type: 'not_found' };
  deps.audit.emit({ event: 'account.session_ended', userId: account.user.id, session: fingerprint(ended.session.sessionIndex), revoked: ended.revoked, ip });
  return { type: 'ended', revoked: ended.revoked };
}

/** Ends every session of the user but this browser's, and revokes every token not issued in this one (AM84), in one unit of work. */
export async function endOtherAccountSessions(deps: OAuthDeps, account: Account, ip: string | undefined): Promise<{ sessionsEnded: number; revoked: number }> {
  const now = deps.clock.now();
  const done = await deps.store.transaction((tx) => endOtherSessions(tx, account.session, now));
  deps.audit.emit({ event: 'account.other_sessions_ended', userId: account.user.id, sessionsEnded: done.sessions.length, revoked: done.revoked, ip });
  return { sessionsEnded: done.sessions.length, revoked: done.revoked };
}

/** A consent as the applications list shows it: its client, when the client still exists. */
export interface AccountApplication {
  consent: Consent;
  client: Client | undefined;
}

/** The user's consents, by the client's id. */
export async function accountApplications(deps: Pick<OAuthDeps, 'store'>, account: Account): Promise<AccountApplication[]> {
  const consents = await deps.store.consents.listForUser(account.user.id);
  const clients = await Promise.all(consents.map((consent) => deps.store.clients.get(consent.clientId)));
  return consents.map((consent, i) => ({ consent, client: clients[i] }));
}

/**
 * Withdraws the user's consent to a client: src/oauth/consents.ts withdrawConsent, as an
 * administrator withdraws one (the consent, the client's unredeemed codes for the user and its
 * tokens for the user, in one unit of work). Only a consent the user has: `not_found` otherwise
 * (a malformed id, a client the user never consented to), and nothing is revoked.
 */
export async function withdrawAccountApplication(deps: OAuthDeps, account: Account, clientId: string, ip: string | undefined): Promise<{ type: 'withdrawn'; revoked: number } | { type: 'not_found' }> {
  if (clientId === '' || clientId.length > MAX_CLIENT_ID) return { type: 'not_found' };
  if ((await deps.store.consents.find(account.user.id, clientId)) === undefined) return { type: 'not_found' };
  const result = await withdrawConsent(deps.store, account.user.id, clientId, deps.clock.now());
  // Withdrawn meanwhile by another tab or an administrator: already done, the same answer.
  deps.audit.emit({ event: 'account.consent_withdrawn', userId: account.user.id, clientId, revoked: result.revoked, ip });
  return { type: 'withdrawn', revoked: result.revoked };
}

/** The link back to the application that sent the user here (AM82). */
export interface BackLink {
  clientId: string;
  name: string;
  uri: string;
}

/**
 * The "back to <application>" link for `?client_id=`: only ever the registered client's own home,
 * the origin of its first web redirect URI (https, or http on a loopback host) — never a URL from
 * the query, so the page cannot be made to link anywhere else (no open redirect, RFC 9700 §4.11).
 * None for an unknown client, a native one (its redirect URIs are not pages), or one without a
 * web redirect URI. `client_uri` is not registered (client-metadata-keys.ts), so it cannot be used.
 */
export async function backLinkOf(deps: Pick<OAuthDeps, 'store'>, clientId: string | undefined, locale: string): Promise<BackLink | undefined> {
  if (clientId === undefined || clientId === '' || clientId.length > MAX_CLIENT_ID) return undefined;
  const client = await deps.store.clients.get(clientId);
  if (client === undefined || isNativeClient(client)) return undefined;
  const uri = homeOf(client.redirectUris);
  return uri === undefined ? undefined : { clientId, name: clientNameFor(client, locale), uri };
}

function homeOf(redirectUris: readonly string[]): string | undefined {
  for (const redirectUri of redirectUris) {
    let url: URL;
    try {
      url = new URL(redirectUri);
    } catch {
      continue;
    }
    const loopback = url.hostname === 'localhost' || url.hostname === '127.0.0.1' || url.hostname === '[::1]';
    if (url.protocol === 'https:' || (url.protocol === 'http:' && loopback)) return `${url.origin}/`;
  }
  return undefined;
}
