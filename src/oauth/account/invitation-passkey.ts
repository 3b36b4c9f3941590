/**
 * Accepting an invitation with a passkey instead of a password (issue 25 item 4; docs/invitations.md,
 * "With a passkey"; decisions AM100–AM104). Two requests, as every passkey ceremony here:
 *
 * - `invitationPasskeyOptions`: for a live link, registration options for the account the
 *   invitation will make. That account does not exist yet, so its id and WebAuthn user handle are
 *   drawn now, from the ceremony's fresh 32-byte challenge (AM101): both are SHA-256 of it under
 *   their own labels, so nothing but the challenge must be kept, and the challenge's binding is
 *   the invitation's token hash with that id: a challenge made for one invitation (or for another
 *   account) answers no other.
 * - `acceptInvitationWithPasskey`: the attestation is checked (our origin and RP ID, user
 *   verification; the challenge taken once), then ONE unit of work spends the invitation by its
 *   conditional UPDATE, makes the account (no password; the address proven, as by the password
 *   path) with the drawn id, gives it the drawn user handle and stores the passkey. Of concurrent
 *   submissions exactly one account is made (AM102).
 */
import type { PublicKeyCredentialCreationOptionsJSON } from '@simplewebauthn/server';
import { createHash } from 'node:crypto';
import type { User } from '../../domain/user.ts';
import { hashSecret } from '../../lib/hash.ts';
import { ConflictError, MissingReferenceError } from '../../storage/ports.ts';
import type { OAuthDeps } from '../deps.ts';
import { DEFAULT_PASSKEY_NAME, passkeyMethod, registrationChallenge, startNewAccountPasskeyRegistration, verifyPasskeyRegistration } from '../factors/passkey.ts';
import { MFA_AMR } from '../factors/verify.ts';
import { accountOf, invitationLinkStatus } from './invitation.ts';

export type InvitationPasskeyDeps = Pick<OAuthDeps, 'config' | 'store' | 'clock' | 'random' | 'audit'>;

/**
 * The account id and user handle a ceremony's challenge draws (AM101): a version-4-shaped UUID
 * from one SHA-256 of the challenge, and 32 bytes (base64url) from another. The challenge is 32
 * random bytes, so both are as random as drawn directly; neither reveals the other.
 */
export function pendingAccount(challenge: string): { userId: string; handle: string } {
  const bytes = createHash('sha256').update(`gatehouse invitation account id\n${challenge}`).digest().subarray(0, 16);
  // RFC 9562 §5.4: version 4 in the high nibble of octet 6, the variant 10 in the top bits of octet 8.
  bytes[6] = (bytes[6]! & 0x0f) | 0x40;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  const userId = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  const handle = createHash('sha256').update(`gatehouse invitation user handle\n${challenge}`).digest('base64url');
  return { userId, handle };
}

/** What an invitation's ceremony answers: this invitation's link (its token's hash) for this account id, never another. */
function invitationBinding(tokenHash: string, userId: string): string {
  return hashSecret(`passkey invitation\n${tokenHash}\n${userId}`);
}

/** The options of the invitee's passkey, or undefined when the link is not live (used, revoked, expired, resent, unknown). */
export async function invitationPasskeyOptions(deps: InvitationPasskeyDeps, token: unknown): Promise<PublicKeyCredentialCreationOptionsJSON | undefined> {
  const invitation = await invitationLinkStatus(deps, token);
  if (invitation === undefined) return undefined;
  const tokenHash = invitation.tokenHash;
  const names = [invitation.givenName, invitation.familyName].filter((n) => n !== undefined && n !== '');
  const who = { name: invitation.email, displayName: names.length > 0 ? names.join(' ') : invitation.email };
  return startNewAccountPasskeyRegistration(deps, 'invitation', who, (challenge) => {
    const account = pendingAccount(challenge);
    return { binding: invitationBinding(tokenHash, account.userId), handle: account.handle };
  });
}

export type PasskeyAcceptOutcome =
  /** `amr`: what a sign-in with this passkey gives (passkeyMethod.amrOf and `mfa`, as passkey-sign-in.ts). */
  | { type: 'done'; user: User; amr: string[] }
  | { type: 'gone' }
  /** The attestation was not right, or answered no live challenge of this invitation: nothing spent, the link stays usable. */
  | { type: 'refused' }
  /** An account with the address as its username exists: the link stays usable. */
  | { type: 'taken'; username: string };

/** The page's passkey POST: the browser's registration response for a challenge of `invitationPasskeyOptions`. */
export async function acceptInvitationWithPasskey(deps: InvitationPasskeyDeps, input: { token: unknown; response: unknown; ip: string | undefined }): Promise<PasskeyAcceptOutcome> {
  const live = await invitationLinkStatus(deps, input.token);
  if (live === undefined) return { type: 'gone' };
  const challenge = registrationChallenge(input.response);
  if (challenge === undefined) return { type: 'refused' };
  const { userId, handle } = pendingAccount(challenge);
  const passkey = await verifyPasskeyRegistration(deps, input.response, { purpose: 'invitation', binding: invitationBinding(live.tokenHash, userId), challengeUserId: undefined, userId, name: DEFAULT_PASSKEY_NAME });
  if (passkey === undefined) return { type: 'refused' };
  let user: User | undefined;
  try {
    user = await deps.store.transaction(async (tx) => {
      const now = deps.clock.now();
      // The one conditional write that decides: of racing submissions only one spends the link.
      const invitation = await tx.invitations.accept(live.tokenHash, now);
      if (invitation === undefined) return undefined;
      // As newUserId: a user's id is never a client's client_id (the drawn id colliding is as likely as a UUID repeating).
      if ((await tx.clients.get(userId)) !== undefined) throw new ConflictError('the drawn account id is a client_id');
      const created = accountOf(invitation, userId, now);
      await tx.users.insert(created, undefined);
      if ((await tx.factors.userHandle(userId, handle)) !== handle) throw new ConflictError('user handle');
      await tx.factors.insertPasskey(passkey);
      await tx.invitations.recordUser(invitation.id, userId);
      return created;
    });
  } catch (error) {
    // The username (or, as unlikely as a UUID repeating, the id, the handle or the credential ID) is
    // taken: the unit rolled back, the invitation is still pending.
    if (error instanceof ConflictError) {
      return (await deps.store.users.getByUsername(live.email)) === undefined ? { type: 'refused' } : { type: 'taken', username: live.email };
    }
    // The organization was deleted since: refused as gone, as the password path does.
    if (error instanceof MissingReferenceError) return { type: 'gone' };
    throw error;
  }
  if (user === undefined) return { type: 'gone' };
  deps.audit.emit({ event: 'invitation.accepted', invitationId: live.id, userId: user.id, username: user.username, ip: input.ip });
  deps.audit.emit({ event: 'factor.enrolled', userId: user.id, kind: 'passkey', factorId: passkey.factor.id, name: passkey.factor.name });
  return { type: 'done', user, amr: [...passkeyMethod.amrOf(passkey.factor), MFA_AMR] };
}
