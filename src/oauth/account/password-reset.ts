/**
 * Password reset (issue 25 item 2; docs/password-reset.md; decisions AM40–AM49).
 *
 * - `askForReset`: the "Forgot your password?" page's POST. It answers from what the asker sent
 *   alone — the input's shape and the client address's hourly budget — and only then, after the
 *   answer is decided, looks the account up and queues the mail (`work`, which the caller runs
 *   after replying): the answer's status, body, headers and timing cannot depend on whether an
 *   account exists, because nothing that depends on it happens before the answer (AM40).
 * - `sendResetLink`: a 256-bit random token (only its SHA-256 is stored), bound to the user and
 *   to a fingerprint of the password hash it replaces (AM42), written with its mail's outbox row
 *   in one unit of work (docs/mail.md). Also what administrators send (src/manage/password-resets.ts).
 * - `resetLinkStatus`: the page's GET, which never consumes the link (mail scanners prefetch links, AM44).
 * - `resetPassword`: the POST, which takes the link with one conditional DELETE and, in the same
 *   unit of work, sets the password (the rules and hashing of every other way, identity/users.ts)
 *   only while it is still the one the link replaces, ends the user's SSO sessions and revokes
 *   their tokens (AM45).
 */
import type { UserProfile } from '../../domain/user.ts';
import { hashSecret } from '../../lib/hash.ts';
import { hashCheckedPassword, replacePassword } from '../../identity/users.ts';
import { passwordPolicyOf } from '../../identity/password-policy.ts';
import type { OAuthDeps } from '../deps.ts';
import { mailMessage, type MailLocale, type MailService } from '../outbox/mail.ts';
import { addressGroup, counterKey } from '../throttling/keys.ts';
import type { Actor } from '../../observability/audit.ts';

export type ResetDeps = Pick<OAuthDeps, 'config' | 'store' | 'clock' | 'random' | 'audit'> & { mail?: MailService | undefined };

/** What sending a link needs: of the settings, the issuer (the link's origin) and the link's lifetime. */
export type LinkDeps = Pick<OAuthDeps, 'store' | 'clock' | 'random' | 'audit'> & { config: Pick<OAuthDeps['config'], 'issuer' | 'passwordResetLifetime'>; mail?: MailService | undefined };

/** The reset page's path under the issuer's path; the link in the mail is the issuer plus `RESET_PAGE`. */
export const RESET_PAGE = '/account/reset';
/** The "Forgot your password?" page. */
export const FORGOT_PAGE = '/account/forgot-password';

/** The budgets' fixed window: one hour. */
const WINDOW_SECONDS = 3600;
/** The most accounts one ask may reach (one e-mail address can belong to several accounts). */
const MAX_ACCOUNTS = 5;
/** The longest username or e-mail address an ask may carry (RFC 5321 §4.5.3.1: a path is at most 256 octets). */
export const MAX_IDENTIFIER = 256;
/** A token as `sendResetLink` makes it: 32 random bytes, base64url. */
const TOKEN = /^[A-Za-z0-9_-]{43}$/;

/** What a link is bound to: the SHA-256 of the password hash it replaces (AM42); no password is the hash of ''. */
export function passwordFingerprint(passwordHash: string | undefined): string {
  return hashSecret(`password-reset:${passwordHash ?? ''}`);
}

export function resetLink(issuer: string, token: string): string {
  return `${issuer}${RESET_PAGE}?token=${token}`;
}

export type ResetAsk =
  | { type: 'accepted'; work: () => Promise<void> }
  | { type: 'invalid' }
  | { type: 'throttled'; retryAfter: number }
  | { type: 'off' };

/**
 * The "Forgot your password?" POST (AM40, AM43): `accepted` whatever the account, with the work
 * to run after answering; `invalid` for an empty or oversized input; `throttled` when the client
 * address spent its hourly budget (counted for every ask, known or unknown, so it says nothing).
 */
export async function askForReset(deps: ResetDeps, input: { identifier: unknown; ip: string | undefined; locale: MailLocale }): Promise<ResetAsk> {
  if (deps.mail === undefined) return { type: 'off' };
  const identifier = typeof input.identifier === 'string' ? input.identifier.trim() : '';
  if (identifier === '' || identifier.length > MAX_IDENTIFIER || hasControlCharacter(identifier)) return { type: 'invalid' };
  const perAddress = deps.config.passwordResetsPerAddress;
  if (perAddress > 0 && input.ip !== undefined) {
    const now = deps.clock.now();
    const counted = await deps.store.rateLimits.take([{ key: counterKey('reset-ip', addressGroup(input.ip)), limit: perAddress }], now, now + WINDOW_SECONDS * 1000);
    if (counted.length === 0) return { type: 'throttled', retryAfter: WINDOW_SECONDS };
  }
  return { type: 'accepted', work: () => sendAskedLinks(deps, identifier, input.ip, input.locale) };
}

/** Whether `text` holds a C0 control character or DEL: no username or address does. */
function hasControlCharacter(text: string): boolean {
  for (const char of text) {
    const code = char.codePointAt(0)!;
    if (code < 0x20 || code === 0x7f) return true;
  }
  return false;
}

/** The accounts an ask names: the one whose username it is, and those whose e-mail address it is (exactly as stored). */
async function accountsNamed(deps: ResetDeps, identifier: string): Promise<UserProfile[]> {
  const byUsername = (await deps.store.users.getCredentials(identifier))?.user;
  const byEmail = identifier.includes('@') ? await deps.store.users.list({ filters: { email: identifier }, exactMatch: true, limit: MAX_ACCOUNTS }) : [];
  const seen = new Map<string, UserProfile>();
  for (const user of [...(byUsername ? [byUsername] : []), ...byEmail]) seen.set(user.id, user);
  return [...seen.values()].slice(0, MAX_ACCOUNTS);
}

async function sendAskedLinks(deps: ResetDeps, identifier: string, ip: string | undefined, locale: MailLocale): Promise<void> {
  const accounts = await accountsNamed(deps, identifier);
  const named = fingerprintOf(identifier);
  if (accounts.length === 0) deps.audit.emit({ event: 'password_reset.not_sent', reason: 'unknown', identifier: named, ip });
  for (const user of accounts) {
    if (user.status !== 'enabled') {
      deps.audit.emit({ event: 'password_reset.not_sent', reason: 'not_enabled', userId: user.id, identifier: named, ip });
      continue;
    }
    if (user.email === undefined) {
      deps.audit.emit({ event: 'password_reset.not_sent', reason: 'no_email', userId: user.id, identifier: named, ip });
      continue;
    }
    // The account's hourly budget (AM43): one atomic conditional upsert, no check-then-act.
    const perAccount = deps.config.passwordResetsPerAccount;
    if (perAccount > 0) {
      const now = deps.clock.now();
      const counted = await deps.store.rateLimits.take([{ key: counterKey('reset-user', user.id), limit: perAccount }], now, now + WINDOW_SECONDS * 1000);
      if (counted.length === 0) {
        deps.audit.emit({ event: 'password_reset.not_sent', reason: 'throttled', userId: user.id, identifier: named, ip });
        continue;
      }
    }
    await sendResetLink(deps, user, { locale, by: 'user', ip });
  }
}

/** What audit events say of a typed identifier: a short fingerprint, never the text (it may be a password typed in the wrong field). */
function fingerprintOf(identifier: string): string {
  return hashSecret(`reset-identifier:${identifier.toLowerCase()}`).slice(0, 16);
}

/** Thrown when a link cannot be sent to a user: `no_email`, `not_enabled`, or `off` (mail is not configured). */
export class ResetLinkRefused extends Error {
  readonly reason: 'no_email' | 'not_enabled' | 'off';
  constructor(reason: 'no_email' | 'not_enabled' | 'off', message: string) {
    super(message);
    this.reason = reason;
  }
}

/**
 * Makes a reset link for `user` and queues its mail to the user's e-mail address: the link's row
 * and the outbox row in one unit of work, so a link exists exactly when its mail will be sent.
 * Returns the outbox message's id.
 */
export async function sendResetLink(deps: LinkDeps, user: UserProfile, options: { locale: MailLocale; by: 'user' | 'administrator'; actor?: Actor; ip?: string | undefined }): Promise<string> {
  const mail = deps.mail;
  if (mail === undefined) throw new ResetLinkRefused('off', 'mail is not configured: set GATEHOUSE_SMTP_URL and GATEHOUSE_MAIL_FROM (docs/mail.md)');
  if (user.status !== 'enabled') throw new ResetLinkRefused('not_enabled', `${user.username} is ${user.status}: a reset link would not let them sign in`);
  if (user.email === undefined) throw new ResetLinkRefused('no_email', `${user.username} has no e-mail address to send a reset link to`);
  const credentials = await deps.store.users.getCredentials(user.username);
  const token = deps.random.token(32);
  const now = deps.clock.now();
  const lifetime = deps.config.passwordResetLifetime;
  const id = deps.random.uuid();
  const rendered = mail.composer.compose('password_reset', options.locale, { issuer: deps.config.issuer, link: resetLink(deps.config.issuer, token), username: user.username, minutes: String(Math.round(lifetime / 60)) });
  const message = mailMessage({ id, kind: 'password_reset', to: user.email, locale: options.locale, mail: rendered, dedupeKey: `mail.password_reset:${id}`, now });
  await deps.store.transaction(async (tx) => {
    await tx.passwordResets.insert({ tokenHash: hashSecret(token), userId: user.id, passwordFingerprint: passwordFingerprint(credentials?.passwordHash), createdAt: now, expiresAt: now + lifetime * 1000 });
    await tx.outbox.enqueue(message);
  });
  deps.audit.emit({ event: 'password_reset.sent', userId: user.id, username: user.username, messageId: id, by: options.by, ...(options.actor ? { actor: options.actor } : {}), ...(options.ip !== undefined ? { ip: options.ip } : {}) });
  return id;
}

/** Whether a link can still be used: for the page's GET, which shows the form or says the link is spent, and consumes nothing. */
export async function resetLinkStatus(deps: Pick<ResetDeps, 'store' | 'clock'>, token: unknown): Promise<'usable' | 'gone'> {
  if (typeof token !== 'string' || !TOKEN.test(token)) return 'gone';
  const reset = await deps.store.passwordResets.find(hashSecret(token), deps.clock.now());
  if (reset === undefined) return 'gone';
  const profile = await deps.store.users.getProfile(reset.userId);
  if (profile?.status !== 'enabled') return 'gone';
  // A link for a password changed since is shown as spent at once, not after the new one is typed (AM42).
  const current = (await deps.store.users.getCredentials(profile.username))?.passwordHash;
  return passwordFingerprint(current) === reset.passwordFingerprint ? 'usable' : 'gone';
}

export type ResetOutcome = { type: 'done'; username: string } | { type: 'gone' } | { type: 'mismatch' };

/**
 * The reset page's POST. The new password is checked and hashed before the link is touched (a
 * refused password — IdentityError `invalid_argument` — leaves the link usable); then one unit of
 * work takes the link, sets the password only while it is still the one the link replaces, ends
 * the sessions, revokes the tokens and deletes the user's other links. `gone`: used, expired,
 * unknown, or the password changed meanwhile (all the same to the user: ask for a new link).
 */
export async function resetPassword(deps: Pick<ResetDeps, 'store' | 'clock' | 'audit'> & { config: Partial<Pick<ResetDeps['config'], 'passwordMinLength'>> }, input: { token: unknown; password: unknown; confirmation: unknown; ip: string | undefined }): Promise<ResetOutcome> {
  if (typeof input.token !== 'string' || !TOKEN.test(input.token)) return { type: 'gone' };
  if (input.password !== input.confirmation) return { type: 'mismatch' };
  const tokenHash = hashSecret(input.token);
  // Whose link it is, read without taking it, for the policy's context words (the username and
  // address, password-policy.ts); the unit of work below takes it and checks everything again.
  const link = await deps.store.passwordResets.find(tokenHash, deps.clock.now());
  const owner = link === undefined ? undefined : await deps.store.users.getProfile(link.userId);
  if (owner === undefined) return { type: 'gone' };
  const passwordHash = await hashCheckedPassword(input.password, { username: owner.username, email: owner.email }, passwordPolicyOf(deps.config));
  const done = await deps.store.transaction(async (tx) => {
    const now = deps.clock.now();
    const reset = await tx.passwordResets.take(tokenHash, now);
    if (reset === undefined) return undefined;
    const profile = await tx.users.getProfile(reset.userId);
    if (profile?.status !== 'enabled') return undefined;
    const current = (await tx.users.getCredentials(profile.username))?.passwordHash;
    if (passwordFingerprint(current) !== reset.passwordFingerprint) return undefined;
    const sessionsEnded = await replacePassword(tx, profile.id, current, passwordHash, now);
    if (sessionsEnded === undefined) return undefined;
    await tx.passwordResets.deleteOfUser(profile.id);
    return { user: profile, sessionsEnded };
  });
  if (done === undefined) return { type: 'gone' };
  deps.audit.emit({ event: 'password_reset.completed', userId: done.user.id, username: done.user.username, sessionsEnded: done.sessionsEnded, ip: input.ip });
  return { type: 'done', username: done.user.username };
}
