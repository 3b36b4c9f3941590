/**
 * A pending invitation as the administrators' acts write it (src/oauth/account/invitation.ts), for
 * the tests that need an account made by one (with a passkey, AM100) without going through mail.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { hashSecret } from '../../src/lib/hash.ts';
import type { Store } from '../../src/storage/ports.ts';

/** Inserts a pending invitation to `email`, valid for an hour from `now`; its id and token (the link's `token`). */
export async function pendingInvitation(store: Store, email: string, now: number): Promise<{ id: string; token: string }> {
  const token = randomBytes(32).toString('base64url');
  const id = randomUUID();
  await store.invitations.insert({
    id,
    tokenHash: hashSecret(token),
    email,
    givenName: undefined,
    familyName: undefined,
    organizationId: undefined,
    invitedBy: 'cli:test',
    locale: 'en',
    status: 'pending',
    createdAt: now,
    expiresAt: now + 3_600_000,
    endedAt: undefined,
    userId: undefined,
  });
  return { id, token };
}
