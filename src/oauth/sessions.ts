/**
 * SSO session use cases. The browser holds only a random value (256 bits); the store holds its
 * SHA-256 (`idHash`), so a leaked database cannot be replayed as cookies (DESIGN.md, principle 4).
 */
import type { SsoSession } from '../domain/session.ts';
import { tellRelyingParties, type FrontChannelNotice } from '../identity/logout-notices.ts';
import { hashSecret } from '../lib/hash.ts';
import type { SessionPageKey, StoreTransaction } from '../storage/ports.ts';
import type { OAuthDeps } from './deps.ts';

export type { SessionPageKey };

type SessionDeps = Pick<OAuthDeps, 'config' | 'store' | 'clock' | 'random'>;

export interface NewSession {
  /** The value for the session cookie; never stored. */
  cookieValue: string;
  session: SsoSession;
}

export interface Authentication {
  userId: string;
  /** Authentication methods (OIDC Core §2 `amr`); a password login is `['pwd']` (RFC 8176 §2). */
  amr?: string[];
  acr?: string | undefined;
}

/** Cookie values we issue are 43 base64url characters; anything else is not worth a lookup. */
const COOKIE_VALUE = /^[A-Za-z0-9_-]{43}$/;

/** What createSession makes: `_` and 40 hex characters. */
const SESSION_INDEX = /^_[0-9a-f]{40}$/;

/**
 * Starts an SSO session after a successful authentication: `session_index` is `_` + 40 hex
 * characters as in the product we replace; the idle deadline moves on use, the absolute one never.
 */
export async function createSession(deps: SessionDeps, authentication: Authentication): Promise<NewSession> {
  const made = newSession(deps, authentication);
  await deps.store.sessions.insert(made.session);
  return made;
}

/** A new SSO session and its cookie value, not yet stored (for a unit of work that stores it with other changes). */
export function newSession(deps: Pick<OAuthDeps, 'config' | 'clock' | 'random'>, authentication: Authentication): NewSession {
  const now = deps.clock.now();
  const cookieValue = deps.random.token(32);
  const session: SsoSession = {
    idHash: hashSecret(cookieValue),
    sessionIndex: `_${deps.random.hex(20)}`,
    userId: authentication.userId,
    authTime: now,
    amr: authentication.amr ?? ['pwd'],
    acr: authentication.acr,
    createdAt: now,
    expiresAt: now + deps.config.sessionIdleTtl * 1000,
    maxExpiresAt: now + deps.config.sessionMaxTtl * 1000,
  };
  return { cookieValue, session };
}

/** The most of a User-Agent a session keeps: enough for any browser's, and a bound on what a client can make us store. */
export const MAX_USER_AGENT = 256;

/**
 * Records the browser's User-Agent (at most MAX_USER_AGENT characters) and the client address of
 * the session a sign-in just started, for the account page's session list (migration 033, AM83).
 */
export async function describeSession(deps: Pick<OAuthDeps, 'store'>, cookieValue: string, device: { userAgent: string | undefined; ip: string | undefined }): Promise<void> {
  const idHash = sessionIdHash(cookieValue);
  if (idHash === undefined) return;
  await deps.store.sessions.describe(idHash, { userAgent: device.userAgent?.slice(0, MAX_USER_AGENT), ip: device.ip });
}

/** The live session behind a cookie value, if any. */
export async function findSession(deps: Pick<OAuthDeps, 'store' | 'clock'>, cookieValue: string | undefined): Promise<SsoSession | undefined> {
  const idHash = sessionIdHash(cookieValue);
  return idHash === undefined ? undefined : deps.store.sessions.findLive(idHash, deps.clock.now());
}

/**
 * A live session whose user may still sign in: a user disabled or locked after the login loses
 * single sign-on at once, whether or not whoever disabled them also ended the sessions.
 */
export async function findUsableSession(deps: Pick<OAuthDeps, 'store' | 'clock'>, cookieValue: string | undefined): Promise<SsoSession | undefined> {
  const idHash = sessionIdHash(cookieValue);
  return idHash === undefined ? undefined : deps.store.sessions.findUsable(idHash, deps.clock.now());
}

/** The store's key for a well-formed cookie value; undefined for anything a session cookie cannot be. */
function sessionIdHash(cookieValue: string | undefined): string | undefined {
  return cookieValue !== undefined && COOKIE_VALUE.test(cookieValue) ? hashSecret(cookieValue) : undefined;
}

/**
 * Each use extends the inactivity deadline, never past the absolute one; returns the session as
 * extended. The deadline is written only when it moves by at least a sixtieth of the idle timeout
 * (a minute of the default hour): a burst of single sign-ons then costs one write, not one each,
 * and a session in use can only end that much sooner than the exact rule says, never later.
 */
export async function touchSession(deps: Pick<OAuthDeps, 'config' | 'store' | 'clock'>, session: SsoSession): Promise<SsoSession> {
  const idleMs = deps.config.sessionIdleTtl * 1000;
  const expiresAt = Math.min(deps.clock.now() + idleMs, session.maxExpiresAt);
  if (expiresAt - session.expiresAt < idleMs / TOUCH_STEPS) return session;
  await deps.store.sessions.touch(session.idHash, expiresAt);
  return { ...session, expiresAt };
}

const TOUCH_STEPS = 60;

/**
 * Ends a session, spends its unredeemed codes and revokes every token issued in it (logout: the
 * relying parties' tokens must not outlive the session the user ended, RFC 9700 §4.14.2 — nor may
 * a code issued just before the logout mint new ones). Returns how many tokens were revoked and
 * the relying parties to tell through the browser.
 */
export async function endSession(deps: Pick<OAuthDeps, 'store' | 'clock'>, session: SsoSession): Promise<SessionEnd> {
  const now = deps.clock.now();
  // One unit of work (Store.transaction): a code redemption or a refresh that overlaps the logout
  // runs wholly before it (and its tokens are revoked here) or wholly after it (and finds its code
  // spent or its refresh token revoked).
  return deps.store.transaction(async (tx) => {
    await tx.sessions.end(session.idHash);
    return cutOff(tx, session, now);
  });
}

/** What ending a session did: tokens revoked, and the relying parties only the browser can tell (Front-Channel Logout). */
export interface SessionEnd {
  revoked: number;
  frontChannel: FrontChannelNotice[];
}

/**
 * Inside the unit of work that ends `session`: spends its unredeemed codes, revokes its tokens and
 * tells its relying parties (src/identity/logout-notices.ts: logout tokens queued).
 */
async function cutOff(tx: Pick<StoreTransaction, 'codes' | 'tokens' | 'sessionClients' | 'clients' | 'outbox'>, session: SsoSession, now: number): Promise<SessionEnd> {
  await tx.codes.consumeBySession(session.sessionIndex, now);
  const frontChannel = await tellRelyingParties(tx, session.userId, [session.sessionIndex], now);
  return { revoked: await tx.tokens.revokeBySession(session, now), frontChannel };
}

/**
 * A page of `userId`'s live sessions, newest first: up to `limit + 1` of them (the one past
 * `limit` says that a next page exists), and the clients holding a live token issued in each of
 * the first `limit` (client_ids, sorted: what ending it would cut off), for the management API.
 */
export async function pageOfUserSessions(
  deps: Pick<OAuthDeps, 'store' | 'clock'>,
  userId: string,
  page: { after: SessionPageKey | undefined; limit: number },
): Promise<{ sessions: SsoSession[]; clients: Map<string, string[]> }> {
  const now = deps.clock.now();
  const sessions = await deps.store.sessions.pageOfUser(userId, now, { after: page.after, limit: page.limit + 1 });
  const clients = await deps.store.tokens.clientsOfSessions(userId, sessions.slice(0, page.limit).map((s) => s.sessionIndex), now);
  return { sessions, clients };
}

/**
 * An administrator ends one of `userId`'s sessions, named by its session_index: as endSession,
 * the session's end, its codes and its tokens in one unit of work. Returns the session ended and
 * how many tokens were revoked, for its `session.ended` audit event (emitted by the use case,
 * src/manage/sessions.ts); undefined when that user has no such session (one past its deadline but
 * not yet cleaned up can still be ended: tokens issued in it may outlive it).
 */
export async function endSessionOfUser(deps: Pick<OAuthDeps, 'store' | 'clock'>, userId: string, sessionIndex: string): Promise<{ session: SsoSession; revoked: number } | undefined> {
  if (!SESSION_INDEX.test(sessionIndex)) return undefined;
  const now = deps.clock.now();
  return deps.store.transaction(async (tx) => {
    const session = await tx.sessions.endOfUser(userId, sessionIndex);
    return session && { session, revoked: (await cutOff(tx, session, now)).revoked };
  });
}

/**
 * Inside the caller's unit of work: ends every session of the user but `keep`, spends the ended
 * sessions' unredeemed codes, and revokes every token of the user not issued in `keep` — those of
 * the ended sessions, and those whose session is long gone (a refresh token outlives its session)
 * — so what a password change or "end all other sessions" leaves is this browser alone (the
 * account page, docs/account.md, AM84). Returns the sessions ended and how many tokens were revoked.
 */
export async function endOtherSessions(tx: Pick<StoreTransaction, 'sessions' | 'codes' | 'tokens' | 'sessionClients' | 'clients' | 'outbox'>, keep: SsoSession, now: number): Promise<{ sessions: SsoSession[]; revoked: number }> {
  const sessions = await tx.sessions.endOthersOfUser(keep.userId, keep.idHash);
  for (const session of sessions) await tx.codes.consumeBySession(session.sessionIndex, now);
  // Their relying parties are told by back-channel logout (LO3); no browser of theirs is here for the front channel.
  await tellRelyingParties(tx, keep.userId, sessions.map((s) => s.sessionIndex), now);
  const revoked = await tx.tokens.revokeByUserExceptSession(keep.userId, keep.sessionIndex, now);
  return { sessions, revoked };
}

/** When the session stops being valid: the earlier of its two deadlines (ms). */
export function sessionDeadline(session: SsoSession): number {
  return Math.min(session.expiresAt, session.maxExpiresAt);
}
