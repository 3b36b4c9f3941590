/**
 * The changes to a user's second factors that every front end makes (the account security page,
 * and through src/manage/user-factors.ts the CLI, the management API and the console): rename one,
 * remove one, remove them all. Each is ONE function here, so a rule about such changes is added in
 * one place and holds for every front end alike (decisions SA102).
 *
 * The seam for "a policy requires a second factor" (issue 24, item 6): today no policy does, and
 * removing or resetting the last factor leaves the user signing in with the password alone
 * (docs/second-factors.md, "Removing the last factor"). A rule that refuses that, or marks the
 * user for re-enrolment, belongs in `removeUserFactor` and `resetUserFactors`: both run inside the
 * unit of work of the change (the caller's `store` is its transaction), so the rule can read the
 * user's remaining factors and policies and refuse (throw) before anything is deleted, without a
 * check-then-act gap. Callers map a refusal to their answer; none re-checks the rule itself.
 */
import type { Factor } from '../../domain/factor.ts';
import { sealTotpSecret } from '../../crypto/key-encryption.ts';
import type { StoreTransaction } from '../../storage/ports.ts';
import { validFactorName } from './enrolment.ts';

type FactorsOfStore = Pick<StoreTransaction, 'factors'>;

/**
 * Removes one of the user's factors, found among theirs (an id of another user's factor removes
 * nothing: the store deletes by user and id together); the factor removed, or undefined. Run it in
 * the unit of work of the change, so the factor read is the one deleted. The one removal of every
 * front end: see the seam above.
 */
export async function removeUserFactor(store: FactorsOfStore, userId: string, factorId: string): Promise<Factor | undefined> {
  const factor = (await store.factors.list(userId)).find((f) => f.id === factorId);
  if (factor === undefined || !(await store.factors.delete(userId, factor.id))) return undefined;
  return factor;
}

/** Removes every factor of the user (a reset: lost authenticator and recovery codes); how many. In the unit of work of the change; the seam above. */
export async function resetUserFactors(store: FactorsOfStore, userId: string): Promise<number> {
  return store.factors.deleteAll(userId);
}

/**
 * Renames one of the user's factors (by user and id together, as a removal); the factor as
 * renamed, or undefined when the user has no such factor. FactorInputError `name` for a name
 * validFactorName refuses, before anything is read.
 */
export async function renameUserFactor(store: FactorsOfStore, userId: string, factorId: string, name: string): Promise<Factor | undefined> {
  const valid = validFactorName(name);
  const factor = (await store.factors.list(userId)).find((f) => f.id === factorId);
  if (factor === undefined || !(await store.factors.rename(userId, factor.id, valid))) return undefined;
  return { ...factor, name: valid };
}

/**
 * Seals every TOTP secret stored in the clear (enrolled or imported while GATEHOUSE_KEY_ENCRYPTION_KEY
 * was unset) under `keyEncryptionKey` (SA3, SA100); how many were sealed. Run it in one unit of
 * work: all are sealed or none. Idempotent: a secret already sealed is not read again, and each
 * UPDATE is conditional on the row still holding that clear secret, so a second run, or one racing
 * on another instance, seals nothing twice.
 */
export async function sealClearTotpSecrets(store: FactorsOfStore, keyEncryptionKey: string): Promise<number> {
  let sealed = 0;
  for (const { factorId, secret } of await store.factors.clearTotpSecrets()) {
    if (await store.factors.sealTotpSecret(factorId, secret, sealTotpSecret(secret, keyEncryptionKey))) sealed++;
  }
  return sealed;
}
