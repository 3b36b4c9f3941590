/**
 * Invitations, the invitee's side and the link (issue 25 item 4; docs/invitations.md; decisions
 * AM74–AM79). Administrators' acts are in src/manage/invitations.ts.
 *
 * - `queueInvitationMail`: renders the mail with a fresh 256-bit token's link; the caller writes
 *   the invitation row (new or renewed) and the returned outbox message in ONE unit of work, so a
 *   link exists exactly when its mail will be sent.
 * - `invitationLinkStatus`: the page's GET, which never spends the link (mail scanners prefetch).
 * - `acceptInvitation`: the POST. The password is checked (the password policy, with the address
 *   as username and e-mail) and hashed first, so a refused one leaves the link usable; then one
 *   unit of work spends the invitation by one conditional UPDATE and makes the account (username
 *   and address: the invitation's address), so two POSTs of one link make one account (AM76).
 */
import type { Invitation } from '../../domain/invitation.ts';
import type { User } from '../../domain/user.ts';
import { passwordPolicyOf } from '../../identity/password-policy.ts';
import { hashCheckedPassword, newUserId } from '../../identity/users.ts';
import { hashSecret } from '../../lib/hash.ts';
import { ConflictError, MissingReferenceError } from '../../storage/ports.ts';
import type { NewOutboxMessage } from '../../domain/outbox.ts';
import type { OAuthDeps } from '../deps.ts';
import { mailMessage, type MailLocale, type MailService } from '../outbox/mail.ts';

/** The page's path under the issuer's path; the link in the mail is the issuer plus `INVITATION_PAGE`. */
export const INVITATION_PAGE = '/account/invitation';
/** A token as `queueInvitationMail` makes it: 32 random bytes, base64url. */
const TOKEN = /^[A-Za-z0-9_-]{43}$/;

export function invitationLink(issuer: string, token: string): string {
  return `${issuer}${INVITATION_PAGE}?token=${token}`;
}

/** A new link and its mail, not yet written: the caller writes `tokenHash` and `message` in one unit of work. */
export interface QueuedInvitationMail {
  tokenHash: string;
  expiresAt: number;
  message: NewOutboxMessage;
}

/** Draws a token and renders the invitation mail to `invitation.email` in its locale, the link valid for `lifetime` seconds from now. */
export function queueInvitationMail(
  deps: Pick<OAuthDeps, 'clock' | 'random'> & { mail: MailService; config: { issuer: string; invitationLifetime: number } },
  invitation: Pick<Invitation, 'email' | 'locale'>,
): QueuedInvitationMail {
  const token = deps.random.token(32);
  const now = deps.clock.now();
  const lifetime = deps.config.invitationLifetime;
  const id = deps.random.uuid();
  const locale = invitation.locale as MailLocale;
  const rendered = deps.mail.composer.compose('invitation', locale, { issuer: deps.config.issuer, link: invitationLink(deps.config.issuer, token), email: invitation.email, days: String(Math.max(1, Math.round(lifetime / 86_400))) });
  const message = mailMessage({ id, kind: 'invitation', to: invitation.email, locale, mail: rendered, dedupeKey: `mail.invitation:${id}`, now });
  return { tokenHash: hashSecret(token), expiresAt: now + lifetime * 1000, message };
}

/** The live invitation of a link (the page's GET: nothing is spent), or undefined (used, revoked, expired, resent, unknown). */
export async function invitationLinkStatus(deps: Pick<OAuthDeps, 'store' | 'clock'>, token: unknown): Promise<Invitation | undefined> {
  if (typeof token !== 'string' || !TOKEN.test(token)) return undefined;
  return deps.store.invitations.findLive(hashSecret(token), deps.clock.now());
}

export type AcceptOutcome =
  | { type: 'done'; user: User }
  | { type: 'gone' }
  | { type: 'mismatch' }
  /** An account with the address as its username exists (made since the invitation): the link stays usable. */
  | { type: 'taken'; username: string };

export type AcceptDeps = Pick<OAuthDeps, 'store' | 'clock' | 'random' | 'audit'> & { config: Partial<Pick<OAuthDeps['config'], 'passwordMinLength'>> };

/**
 * The page's POST. Throws PasswordRefused (IdentityError invalid_argument) for a password the
 * policy refuses, before anything is spent.
 */
export async function acceptInvitation(deps: AcceptDeps, input: { token: unknown; password: unknown; confirmation: unknown; ip: string | undefined }): Promise<AcceptOutcome> {
  if (typeof input.token !== 'string' || !TOKEN.test(input.token)) return { type: 'gone' };
  if (input.password !== input.confirmation) return { type: 'mismatch' };
  const tokenHash = hashSecret(input.token);
  const live = await deps.store.invitations.findLive(tokenHash, deps.clock.now());
  if (live === undefined) return { type: 'gone' };
  // Checked and hashed before the unit of work (argon2 must not hold SQLite's write lock); the
  // context words are the account's username and address, both the invitation's address.
  const passwordHash = await hashCheckedPassword(input.password, { username: live.email, email: live.email }, passwordPolicyOf(deps.config));
  let user: User | undefined;
  try {
    user = await deps.store.transaction(async (tx) => {
      const now = deps.clock.now();
      const invitation = await tx.invitations.accept(tokenHash, now);
      if (invitation === undefined) return undefined;
      const created = accountOf(invitation, await newUserId(tx, deps.random), now);
      await tx.users.insert(created, passwordHash);
      await tx.invitations.recordUser(invitation.id, created.id);
      return created;
    });
  } catch (error) {
    // The username is taken (an account made since the invitation): the unit rolled back, the invitation is still pending.
    if (error instanceof ConflictError) return { type: 'taken', username: live.email };
    // The organization was deleted since: the account is made without one is not what was asked; refuse as gone.
    if (error instanceof MissingReferenceError) return { type: 'gone' };
    throw error;
  }
  if (user === undefined) return { type: 'gone' };
  deps.audit.emit({ event: 'invitation.accepted', invitationId: live.id, userId: user.id, username: user.username, ip: input.ip });
  return { type: 'done', user };
}

/** The account an invitation makes, with id `id`: enabled, the address as username and e-mail, the names and organization it carries. */
export function accountOf(invitation: Invitation, id: string, now: number): User {
  return {
    id,
    username: invitation.email,
    status: 'enabled',
    givenName: invitation.givenName,
    familyName: invitation.familyName,
    email: invitation.email,
    // The link arrived at this address and was followed: it is proven (docs/email-verification.md).
    emailVerified: true,
    organizationId: invitation.organizationId,
    attributes: {},
    createdAt: now,
    updatedAt: now,
  };
}
