/**
 * E-mail verification (issue 25 item 3; docs/email-verification.md; decisions AM50–AM59).
 *
 * - `sendVerificationLink`: a 256-bit random token (only its SHA-256 is stored), bound to the
 *   user, the address it verifies and the address the user has now (AM52), written with its
 *   mail's outbox row in one unit of work (docs/mail.md). The mail goes to the address being
 *   verified: the user's own, or the new one of a change, which replaces the old one only when
 *   the link is followed ("a changed address is verified before it replaces the old one").
 *   Also what administrators send (src/manage/email-verifications.ts).
 * - `askForVerification`: the profile page's "send verification link" and "change address":
 *   the same, within the account's and the recipient address's hourly budgets (AM54).
 * - `verificationLinkStatus`: the page's GET, which never consumes the link (mail scanners
 *   prefetch links, AM53).
 * - `verifyEmail`: the POST, which takes the link with one conditional DELETE and, in the same
 *   unit of work, sets the address and marks it verified only while the user's address is still
 *   the one it was when the link was sent (one conditional UPDATE, UserStore.confirmEmail).
 */
import type { UserProfile } from '../../domain/user.ts';
import { IdentityError } from '../../identity/errors.ts';
import { checkedEmail } from '../../identity/users.ts';
import { hashSecret } from '../../lib/hash.ts';
import type { Actor } from '../../observability/audit.ts';
import type { OAuthDeps } from '../deps.ts';
import { mailMessage, type MailLocale, type MailService } from '../outbox/mail.ts';
import { counterKey } from '../throttling/keys.ts';

/** What sending a link needs: of the settings, the issuer (the link's origin) and the link's lifetime. */
export type VerificationLinkDeps = Pick<OAuthDeps, 'store' | 'clock' | 'random' | 'audit'> & {
  config: Pick<OAuthDeps['config'], 'issuer' | 'emailVerificationLifetime'>;
  mail?: MailService | undefined;
};

/** What the profile page's asks need besides: the hourly budgets. */
export type VerificationAskDeps = VerificationLinkDeps & { config: Pick<OAuthDeps['config'], 'emailVerificationsPerAccount' | 'emailVerificationsPerRecipient'> };

/** The verification page's path under the issuer's path; the link in the mail is the issuer plus `VERIFY_PAGE`. */
export const VERIFY_PAGE = '/account/verify-email';

/** The budgets' fixed window: one hour. */
const WINDOW_SECONDS = 3600;
/** A token as `sendVerificationLink` makes it: 32 random bytes, base64url. */
const TOKEN = /^[A-Za-z0-9_-]{43}$/;
/** The longest address a change may name (RFC 5321 §4.5.3.1: a path is at most 256 octets). */
const MAX_ADDRESS = 254;

export function verificationLink(issuer: string, token: string): string {
  return `${issuer}${VERIFY_PAGE}?token=${token}`;
}

/**
 * Why a link is not sent: mail is off (`off`), the user has no address (`no_email`), is not
 * enabled (`not_enabled`), the address is verified already and no other one is named
 * (`already_verified`), or the new address is the user's own, or not an address (`invalid`).
 */
export type VerificationRefusal = 'off' | 'no_email' | 'not_enabled' | 'already_verified' | 'invalid';

export class VerificationLinkRefused extends Error {
  readonly reason: VerificationRefusal;
  constructor(reason: VerificationRefusal, message: string) {
    super(message);
    this.reason = reason;
  }
}

/**
 * What a link would verify: the new address of a change (checked as every address is,
 * checkedEmail), or the user's own. Throws VerificationLinkRefused when there is nothing to verify.
 */
function addressToVerify(user: UserProfile, newEmail: unknown): string {
  if (newEmail !== undefined && newEmail !== '') {
    if (typeof newEmail !== 'string' || newEmail.length > MAX_ADDRESS) throw new VerificationLinkRefused('invalid', 'the new e-mail address is not an e-mail address');
    let checked: string | undefined;
    try {
      checked = checkedEmail(newEmail);
    } catch (error) {
      if (error instanceof IdentityError) throw new VerificationLinkRefused('invalid', error.message);
      throw error;
    }
    if (checked === undefined) throw new VerificationLinkRefused('invalid', 'the new e-mail address is empty');
    // The same address again is no change (the own address has its own button).
    if (checked === user.email) throw new VerificationLinkRefused('invalid', 'the new e-mail address is the current one');
    return checked;
  }
  if (user.email === undefined) throw new VerificationLinkRefused('no_email', `${user.username} has no e-mail address to verify`);
  if (user.emailVerified) throw new VerificationLinkRefused('already_verified', `the e-mail address of ${user.username} is verified already`);
  return user.email;
}

/**
 * Makes a verification link for `user` and queues its mail to the address it verifies (the
 * user's own, or `newEmail`): the link's row and the outbox row in one unit of work, so a link
 * exists exactly when its mail will be sent. Returns the outbox message's id and the address.
 */
export async function sendVerificationLink(
  deps: VerificationLinkDeps,
  user: UserProfile,
  options: { newEmail?: unknown; locale: MailLocale; by: 'user' | 'administrator'; actor?: Actor; ip?: string | undefined },
): Promise<{ messageId: string; email: string }> {
  const mail = deps.mail;
  if (mail === undefined) throw new VerificationLinkRefused('off', 'mail is not configured: set GATEHOUSE_SMTP_URL and GATEHOUSE_MAIL_FROM (docs/mail.md)');
  if (user.status !== 'enabled') throw new VerificationLinkRefused('not_enabled', `${user.username} is ${user.status}`);
  const email = addressToVerify(user, options.newEmail);
  return queueLink(deps, mail, user, email, options);
}

async function queueLink(
  deps: VerificationLinkDeps,
  mail: MailService,
  user: UserProfile,
  email: string,
  options: { locale: MailLocale; by: 'user' | 'administrator'; actor?: Actor; ip?: string | undefined },
): Promise<{ messageId: string; email: string }> {
  const token = deps.random.token(32);
  const now = deps.clock.now();
  const lifetime = deps.config.emailVerificationLifetime;
  const id = deps.random.uuid();
  const rendered = mail.composer.compose('email_verification', options.locale, {
    issuer: deps.config.issuer,
    link: verificationLink(deps.config.issuer, token),
    username: user.username,
    email,
    minutes: String(Math.round(lifetime / 60)),
  });
  const message = mailMessage({ id, kind: 'email_verification', to: email, locale: options.locale, mail: rendered, dedupeKey: `mail.email_verification:${id}`, now });
  await deps.store.transaction(async (tx) => {
    await tx.emailVerifications.insert({ tokenHash: hashSecret(token), userId: user.id, email, previousEmail: user.email, createdAt: now, expiresAt: now + lifetime * 1000 });
    await tx.outbox.enqueue(message);
  });
  const change = email !== user.email;
  deps.audit.emit({ event: 'email_verification.sent', userId: user.id, username: user.username, messageId: id, change, by: options.by, ...(options.actor ? { actor: options.actor } : {}), ...(options.ip !== undefined ? { ip: options.ip } : {}) });
  return { messageId: id, email };
}

export type VerificationAsk = { type: 'sent'; email: string } | { type: 'refused'; reason: VerificationRefusal } | { type: 'throttled'; retryAfter: number } | { type: 'reauthenticate' };

/**
 * The profile page's ask (AM54): a link to the user's own address, or to `newEmail` for a
 * change, within the account's hourly budget and the recipient address's (counted across all
 * accounts, so nobody can flood another's mailbox by asking to change to it). Both budgets are
 * taken in one atomic statement (RateLimitStore.take), after the ask is known to be sendable.
 */
export async function askForVerification(deps: VerificationAskDeps, asker: { user: UserProfile; fresh: boolean }, input: { newEmail?: unknown; locale: MailLocale; ip: string | undefined }): Promise<VerificationAsk> {
  const { user } = asker;
  // The address is where password reset links go: moving it is as strong a change as the
  // password's, so it needs a recent sign-in, as every change on the security page does (AM120).
  if (input.newEmail !== undefined && !asker.fresh) return { type: 'reauthenticate' };
  const mail = deps.mail;
  let email: string;
  try {
    if (mail === undefined) throw new VerificationLinkRefused('off', 'mail is not configured');
    if (user.status !== 'enabled') throw new VerificationLinkRefused('not_enabled', `${user.username} is ${user.status}`);
    email = addressToVerify(user, input.newEmail);
  } catch (error) {
    if (error instanceof VerificationLinkRefused) return { type: 'refused', reason: error.reason };
    throw error;
  }
  const budgets = [
    { key: counterKey('verify-user', user.id), limit: deps.config.emailVerificationsPerAccount },
    { key: counterKey('verify-recipient', email.toLowerCase()), limit: deps.config.emailVerificationsPerRecipient },
  ].filter((budget) => budget.limit > 0);
  if (budgets.length > 0) {
    const now = deps.clock.now();
    // Refused when any budget is full (the store then counts the hit in none of them).
    const counted = await deps.store.rateLimits.take(budgets, now, now + WINDOW_SECONDS * 1000);
    if (counted.length < budgets.length) {
      deps.audit.emit({ event: 'email_verification.not_sent', userId: user.id, username: user.username, reason: 'throttled', ...(input.ip !== undefined ? { ip: input.ip } : {}) });
      return { type: 'throttled', retryAfter: WINDOW_SECONDS };
    }
  }
  await queueLink(deps, mail, user, email, { locale: input.locale, by: 'user', ip: input.ip });
  return { type: 'sent', email };
}

/** The newest live link of a change the user asked for (a new address not yet theirs), for the profile page. */
export async function pendingChange(deps: Pick<OAuthDeps, 'store' | 'clock'>, user: UserProfile): Promise<string | undefined> {
  const links = await deps.store.emailVerifications.listOfUser(user.id, deps.clock.now());
  return links.find((link) => link.email !== user.email && link.previousEmail === user.email)?.email;
}

export type LinkStatus = { type: 'usable'; email: string; username: string } | { type: 'gone' };

/** Whether a link can still be used: for the page's GET, which shows the button or says the link is spent, and consumes nothing. */
export async function verificationLinkStatus(deps: Pick<OAuthDeps, 'store' | 'clock'>, token: unknown): Promise<LinkStatus> {
  if (typeof token !== 'string' || !TOKEN.test(token)) return { type: 'gone' };
  const link = await deps.store.emailVerifications.find(hashSecret(token), deps.clock.now());
  if (link === undefined) return { type: 'gone' };
  const profile = await deps.store.users.getProfile(link.userId);
  // A link for an address changed since is shown as spent at once, not after the click (AM52).
  if (profile?.status !== 'enabled' || profile.email !== link.previousEmail) return { type: 'gone' };
  return { type: 'usable', email: link.email, username: profile.username };
}

export type VerifyOutcome = { type: 'done'; email: string; username: string; changed: boolean } | { type: 'gone' };

/**
 * The verification page's POST: one unit of work takes the link (one conditional DELETE, so of
 * concurrent posts of one link exactly one gets it), sets the address it verifies and marks it
 * verified only while the user's address is still the one the link was sent under (one
 * conditional UPDATE), and deletes the user's other links (they were sent under the old address
 * or verify it: dead either way). For a change of address (AM120), the same unit of work also
 * deletes the user's pending password reset links — mailed to the old address, they would
 * otherwise outlive it — and queues a notice to the old address, so an owner whose session was
 * used to move the account's mail elsewhere learns of it. `gone`: used, expired, unknown, or the
 * address changed meanwhile.
 */
export async function verifyEmail(deps: VerificationLinkDeps, input: { token: unknown; locale: MailLocale; ip: string | undefined }): Promise<VerifyOutcome> {
  if (typeof input.token !== 'string' || !TOKEN.test(input.token)) return { type: 'gone' };
  const tokenHash = hashSecret(input.token);
  const done = await deps.store.transaction(async (tx) => {
    const now = deps.clock.now();
    const link = await tx.emailVerifications.take(tokenHash, now);
    if (link === undefined) return undefined;
    const profile = await tx.users.getProfile(link.userId);
    if (profile?.status !== 'enabled') return undefined;
    if (!(await tx.users.confirmEmail(profile.id, link.previousEmail, link.email, now))) return undefined;
    await tx.emailVerifications.deleteOfUser(profile.id);
    const changed = link.email !== link.previousEmail;
    if (changed) {
      await tx.passwordResets.deleteOfUser(profile.id);
      if (link.previousEmail !== undefined && deps.mail !== undefined) await tx.outbox.enqueue(changeNotice(deps, deps.mail, profile, link.previousEmail, link.email, input.locale, tokenHash, now));
    }
    return { user: profile, email: link.email, changed };
  });
  if (done === undefined) return { type: 'gone' };
  deps.audit.emit({ event: 'email_verification.verified', userId: done.user.id, username: done.user.username, changed: done.changed, ...(input.ip !== undefined ? { ip: input.ip } : {}) });
  return { type: 'done', email: done.email, username: done.user.username, changed: done.changed };
}

/** The notice of a change to the address it replaced; its dedupe key is the link's, so a unit of work run again queues it once. */
function changeNotice(deps: VerificationLinkDeps, mail: MailService, user: UserProfile, previous: string, email: string, locale: MailLocale, tokenHash: string, now: number) {
  const rendered = mail.composer.compose('email_changed', locale, { issuer: deps.config.issuer, username: user.username, email, time: new Date(now).toISOString() });
  return mailMessage({ id: deps.random.uuid(), kind: 'email_changed', to: previous, locale, mail: rendered, dedupeKey: `mail.email_changed:${tokenHash}`, now });
}
