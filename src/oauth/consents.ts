/**
 * The consent use cases (issue 13, item 4): remembering what a user let a third-party client
 * receive, and withdrawing it. Each change is one unit of work (Store.transaction).
 */
import { covers, scopeSet, type Consent } from '../domain/consent.ts';
import type { Store } from '../storage/ports.ts';

/** The consent of `userId` to `clientId`, if any. */
export function findConsent(store: Pick<Store, 'consents'>, userId: string, clientId: string): Promise<Consent | undefined> {
  return store.consents.find(userId, clientId);
}

/** Whether a stored consent covers every requested scope value (audiences included: they are scope values). */
export function consentCovers(consent: Consent | undefined, scope: readonly string[]): boolean {
  return consent !== undefined && covers(consent.scope, scope);
}

/**
 * Records that the user consented to `scope`: the union with what they consented to before (a
 * narrower request later does not narrow the consent). Read and write are one unit of work, so
 * two grants of different values at once both survive (the store serialises or retries them).
 * Returns the consent as stored.
 */
export async function grantConsent(store: Pick<Store, 'transaction'>, grant: { userId: string; clientId: string; scope: readonly string[] }, now: number): Promise<Consent> {
  return store.transaction(async (tx) => {
    const previous = await tx.consents.find(grant.userId, grant.clientId);
    const consent: Consent = {
      userId: grant.userId,
      clientId: grant.clientId,
      scope: scopeSet([...(previous?.scope ?? []), ...grant.scope]),
      grantedAt: previous?.grantedAt ?? now,
      updatedAt: now,
    };
    await tx.consents.put(consent);
    return consent;
  });
}

/**
 * Withdraws a consent: deletes it, spends the client's unredeemed codes for the user and revokes
 * every token the client holds for the user (access and refresh), all in one unit of work — a
 * withdrawn consent leaves the client nothing to use. Returns whether there was a consent and
 * how many tokens were revoked.
 */
export async function withdrawConsent(store: Pick<Store, 'transaction'>, userId: string, clientId: string, now: number): Promise<{ withdrawn: boolean; revoked: number }> {
  return store.transaction(async (tx) => {
    const withdrawn = await tx.consents.delete(userId, clientId);
    await tx.codes.consumeByUserAndClient(userId, clientId, now);
    const revoked = await tx.tokens.revokeByUserAndClient(userId, clientId, now);
    return { withdrawn, revoked };
  });
}
