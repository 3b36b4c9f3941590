/**
 * An invitation (issue 25 items 4 and 7; docs/invitations.md; decisions AM74–AM79): an
 * administrator asks someone, by e-mail address, to make an account. The mail carries a link
 * with a 256-bit random token (only its SHA-256 is stored); following it, the invitee chooses a
 * password and the account is made, with the address as its username, in the same unit of work
 * that spends the invitation.
 */

/**
 * `pending` until accepted or revoked. A pending invitation past `expiresAt` is shown as
 * `expired` (invitationStatus); it is stored as `expired` only when a new invitation to the same
 * address retires it (at most one pending invitation per address).
 */
export const INVITATION_STATUSES = ['pending', 'accepted', 'revoked', 'expired'] as const;
export type InvitationStatus = (typeof INVITATION_STATUSES)[number];

export interface Invitation {
  id: string;
  /** The SHA-256 of the link's token (hashSecret); the token itself is only in the mail. */
  tokenHash: string;
  /** The address the mail goes to, as the administrator typed it (trimmed); the account's username and address. */
  email: string;
  givenName: string | undefined;
  familyName: string | undefined;
  /** The organization the account is made in, if any. */
  organizationId: string | undefined;
  /** Who invited (or last resent): the audit actor's display form (`user:<username>`, `client:<id>`, `cli:<os user>`). */
  invitedBy: string;
  /** The language of the mail and of its page (en, fi, sv). */
  locale: string;
  status: InvitationStatus;
  createdAt: number;
  /** When the current link stops working (a resend moves it). */
  expiresAt: number;
  /** When it was accepted or revoked. */
  endedAt: number | undefined;
  /** The account it made. */
  userId: string | undefined;
}

/** The status an administrator sees at `now`: a pending invitation past its expiry is `expired`. */
export function invitationStatus(invitation: Pick<Invitation, 'status' | 'expiresAt'>, now: number): InvitationStatus {
  return invitation.status === 'pending' && invitation.expiresAt <= now ? 'expired' : invitation.status;
}
