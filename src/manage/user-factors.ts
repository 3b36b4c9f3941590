/**
 * The use cases of users' second factors for administrators (docs/second-factors.md): list them,
 * remove one, reset them all (a user who lost the authenticator and the recovery codes), import a
 * TOTP secret from another server, rename one, seal the secrets stored in the clear. Each change checks the administrators' rules in the unit of
 * work that makes it (src/identity/administrators.ts: an administrator's factors are changed by
 * administrators only) and emits its audit event, never a secret.
 */
import type { Factor } from '../domain/factor.ts';
import { getUser } from '../identity/users.ts';
import { requireReachOfUser } from '../identity/administrators.ts';
import { IdentityError } from '../identity/errors.ts';
import { FactorInputError, FactorUserMissingError, importTotpFactor, type TotpImport } from '../oauth/factors/enrolment.ts';
import { removeUserFactor, renameUserFactor, resetUserFactors, sealClearTotpSecrets } from '../oauth/factors/changes.ts';
import { factorSummaries, type FactorSummary } from '../oauth/factors/verify.ts';
import type { Acting } from './acting.ts';

export type { FactorSummary };
import type { AdministrationPorts, AdministrationSettings } from './ports.ts';


/**
 * A factor as the JSON front ends show it, the same record in the CLI's `--json` and the
 * management API's answers: snake_case, times in ISO 8601, no secret (a `Factor` has none).
 */
export function factorRecord(factor: FactorSummary): Record<string, unknown> {
  return {
    id: factor.id,
    kind: factor.kind,
    name: factor.name,
    created_at: new Date(factor.createdAt).toISOString(),
    last_used_at: factor.lastUsedAt === undefined ? null : new Date(factor.lastUsedAt).toISOString(),
    ...(factor.codesLeft === undefined ? {} : { codes_left: factor.codesLeft }),
    ...(factor.backupEligible === undefined ? {} : { backup_eligible: factor.backupEligible }),
    ...(factor.email === undefined ? {} : { email: factor.email }),
  };
}

export interface UserFactorAdministration {
  /** The user's factors (by id or username), oldest first. */
  factors(idOrUsername: string): Promise<FactorSummary[]>;
  /** Removes every factor of the user: they sign in with the password alone until they enrol again. Returns how many were removed. */
  resetFactors(acting: Acting, idOrUsername: string): Promise<number>;
  /** Removes one factor of the user (IdentityError `not_found` when the user has no such factor). */
  removeFactor(acting: Acting, idOrUsername: string, factorId: string): Promise<Factor>;
  /** Stores a TOTP factor of a secret exported from another server (IdentityError `invalid_argument` naming the bad field). */
  importTotp(acting: Acting, idOrUsername: string, input: TotpImport): Promise<Factor>;
  /** Renames one factor of the user (IdentityError `invalid_argument` naming `name`, `not_found` when the user has no such factor). */
  renameFactor(acting: Acting, idOrUsername: string, factorId: string, name: string): Promise<Factor>;
  /**
   * Seals every TOTP secret stored in the clear under GATEHOUSE_KEY_ENCRYPTION_KEY, in one unit of
   * work (decisions SA100); how many were sealed (0 on a second run). IdentityError
   * `invalid_argument` when no key is set.
   */
  sealTotpSecrets(acting: Acting): Promise<number>;
}

export type UserFactorPorts = Pick<AdministrationPorts, 'store' | 'clock' | 'random' | 'audit'> & { settings: Pick<AdministrationSettings, 'keyEncryptionKey'> };

export function userFactorAdministration(ports: UserFactorPorts): UserFactorAdministration {
  const { store, clock, random, audit } = ports;
  return {
    async factors(idOrUsername) {
      return factorSummaries(store, (await getUser(store, idOrUsername)).id);
    },
    async resetFactors(acting, idOrUsername) {
      const user = await getUser(store, idOrUsername);
      const removed = await store.transaction(async (tx) => {
        await requireReachOfUser(tx, acting.authority, user.id, `resetting the second factors of ${user.username}`);
        return resetUserFactors(tx, user.id);
      });
      audit.emit({ event: 'factor.reset', userId: user.id, removed, actor: acting.actor });
      return removed;
    },
    async removeFactor(acting, idOrUsername, factorId) {
      const user = await getUser(store, idOrUsername);
      const removed = await store.transaction(async (tx) => {
        await requireReachOfUser(tx, acting.authority, user.id, `removing a second factor of ${user.username}`);
        return removeUserFactor(tx, user.id, factorId);
      });
      if (removed === undefined) throw new IdentityError('not_found', `${user.username} has no second factor ${JSON.stringify(factorId)}`);
      audit.emit({ event: 'factor.removed', userId: user.id, kind: removed.kind, factorId: removed.id, actor: acting.actor });
      return removed;
    },
    async importTotp(acting, idOrUsername, input) {
      const user = await getUser(store, idOrUsername);
      const config = { keyEncryptionKey: ports.settings.keyEncryptionKey };
      const factor = await store.transaction(async (tx) => {
        await requireReachOfUser(tx, acting.authority, user.id, `importing a TOTP factor for ${user.username}`);
        return identityErrors(() => importTotpFactor({ config, store: tx, clock, random }, user.id, input));
      });
      audit.emit({ event: 'factor.enrolled', userId: user.id, kind: 'totp', factorId: factor.id, name: factor.name, actor: acting.actor });
      return factor;
    },
    async renameFactor(acting, idOrUsername, factorId, name) {
      const user = await getUser(store, idOrUsername);
      const renamed = await store.transaction(async (tx) => {
        await requireReachOfUser(tx, acting.authority, user.id, `renaming a second factor of ${user.username}`);
        return identityErrors(() => renameUserFactor(tx, user.id, factorId, name));
      });
      if (renamed === undefined) throw new IdentityError('not_found', `${user.username} has no second factor ${JSON.stringify(factorId)}`);
      audit.emit({ event: 'factor.renamed', userId: user.id, kind: renamed.kind, factorId: renamed.id, name: renamed.name, actor: acting.actor });
      return renamed;
    },
    async sealTotpSecrets(acting) {
      const key = ports.settings.keyEncryptionKey;
      if (key === undefined) throw new IdentityError('invalid_argument', 'GATEHOUSE_KEY_ENCRYPTION_KEY is not set: set it to the key to seal the TOTP secrets with');
      const sealed = await store.transaction((tx) => sealClearTotpSecrets(tx, key));
      audit.emit({ event: 'factor.secrets_sealed', sealed, actor: acting.actor });
      return sealed;
    },
  };
}

/** The enrolment's input errors as the application layer's (src/identity/errors.ts), which every front end maps. */
async function identityErrors<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof FactorInputError) throw new IdentityError('invalid_argument', error.message, error.field);
    if (error instanceof FactorUserMissingError) throw new IdentityError('not_found', error.message);
    throw error;
  }
}
