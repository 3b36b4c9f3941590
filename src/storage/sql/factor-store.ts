import type { Kysely, Selectable } from 'kysely';
import type { Factor, FactorKind, PasskeyFactor, TotpAlgorithm, TotpFactor } from '../../domain/factor.ts';
import type { FactorStore } from '../ports.ts';
import { translated } from './errors.ts';
import type { DialectName } from './database.ts';
import type { Database, UserFactorsTable } from './schema.ts';
import { atomically } from './unit-of-work.ts';

/** Users' second factors (migration 022, `user_factors` and `recovery_codes`). Race rules: FactorStore. */
export class SqlFactorStore implements FactorStore {
  readonly #db: Kysely<Database>;
  readonly #dialect: DialectName;

  constructor(db: Kysely<Database>, dialect: DialectName) {
    this.#db = db;
    this.#dialect = dialect;
  }

  async list(userId: string): Promise<Factor[]> {
    const rows = await this.#db.selectFrom('user_factors').selectAll().where('user_id', '=', userId).orderBy('created_at').orderBy('id').execute();
    return rows.map(factorOf);
  }

  async totpFactors(userId: string): Promise<TotpFactor[]> {
    const rows = await this.#db.selectFrom('user_factors').selectAll().where('user_id', '=', userId).where('kind', '=', 'totp').orderBy('created_at').orderBy('id').execute();
    return rows.map((row) => ({
      factor: factorOf(row),
      secret: { form: row.sealed === 1 ? 'sealed' : 'clear', value: row.secret ?? '' },
      algorithm: (row.algorithm ?? 'SHA1') as TotpAlgorithm,
      digits: row.digits ?? 6,
      period: row.period ?? 30,
      lastStep: row.last_step === null ? undefined : Number(row.last_step),
    }));
  }

  async insertTotp(totp: TotpFactor): Promise<void> {
    const { factor } = totp;
    await translated('factor', () =>
      this.#db
        .insertInto('user_factors')
        .values({
          ...rowOf(factor),
          secret: totp.secret.value,
          sealed: totp.secret.form === 'sealed' ? 1 : 0,
          algorithm: totp.algorithm,
          digits: totp.digits,
          period: totp.period,
          last_step: totp.lastStep ?? null,
        })
        .execute(),
    );
  }

  async useTotpStep(factorId: string, step: number, now: number): Promise<boolean> {
    // RFC 6238 §5.2: the one statement that decides; never a read of last_step before it.
    const result = await this.#db
      .updateTable('user_factors')
      .set({ last_step: step, last_used_at: now })
      .where('id', '=', factorId)
      .where('kind', '=', 'totp')
      .where((eb) => eb.or([eb('last_step', 'is', null), eb('last_step', '<', step)]))
      .executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }

  async replaceRecoveryCodes(factor: Factor, codeHashes: readonly string[]): Promise<void> {
    await translated('recovery codes', () =>
      atomically(this.#db, async (trx) => {
        // Replacements of one user's set take turns. PostgreSQL: the user's row locked first, so
        // under READ COMMITTED the next replacement's DELETE sees the set this one inserts. SQLite:
        // the transaction's write lock already does it.
        if (this.#dialect === 'postgres') await trx.selectFrom('users').select('id').where('id', '=', factor.userId).forNoKeyUpdate().execute();
        await trx.deleteFrom('user_factors').where('user_id', '=', factor.userId).where('kind', '=', 'recovery_codes').execute();
        await trx.insertInto('user_factors').values({ ...rowOf(factor), sealed: 0 }).execute();
        if (codeHashes.length > 0) await trx.insertInto('recovery_codes').values(codeHashes.map((code_hash) => ({ factor_id: factor.id, code_hash, used_at: null }))).execute();
      }),
    );
  }

  async useRecoveryCode(userId: string, codeHash: string, now: number): Promise<string | undefined> {
    // One conditional UPDATE: of concurrent uses of one code exactly one gets a row back.
    const row = await this.#db
      .updateTable('recovery_codes')
      .set({ used_at: now })
      .where('code_hash', '=', codeHash)
      .where('used_at', 'is', null)
      .where('factor_id', 'in', (eb) => eb.selectFrom('user_factors').select('id').where('user_id', '=', userId).where('kind', '=', 'recovery_codes'))
      .returning('factor_id')
      .executeTakeFirst();
    if (row === undefined) return undefined;
    await this.#db.updateTable('user_factors').set({ last_used_at: now }).where('id', '=', row.factor_id).execute();
    return row.factor_id;
  }

  async recoveryCodesLeft(factorId: string): Promise<number> {
    const row = await this.#db.selectFrom('recovery_codes').select((eb) => eb.fn.countAll<string | number>().as('n')).where('factor_id', '=', factorId).where('used_at', 'is', null).executeTakeFirstOrThrow();
    return Number(row.n);
  }

  async delete(userId: string, factorId: string): Promise<boolean> {
    const result = await this.#db.deleteFrom('user_factors').where('user_id', '=', userId).where('id', '=', factorId).executeTakeFirst();
    return result.numDeletedRows > 0n;
  }

  async deleteAll(userId: string): Promise<number> {
    const result = await this.#db.deleteFrom('user_factors').where('user_id', '=', userId).executeTakeFirst();
    return Number(result.numDeletedRows);
  }

  async rename(userId: string, factorId: string, name: string): Promise<boolean> {
    const result = await this.#db.updateTable('user_factors').set({ name }).where('user_id', '=', userId).where('id', '=', factorId).executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }

  async clearTotpSecrets(): Promise<{ factorId: string; secret: string }[]> {
    const rows = await this.#db.selectFrom('user_factors').select(['id', 'secret']).where('kind', '=', 'totp').where('sealed', '=', 0).orderBy('id').execute();
    return rows.filter((row) => row.secret !== null).map((row) => ({ factorId: row.id, secret: row.secret ?? '' }));
  }

  async sealTotpSecret(factorId: string, clear: string, sealed: string): Promise<boolean> {
    const result = await this.#db
      .updateTable('user_factors')
      .set({ secret: sealed, sealed: 1 })
      .where('id', '=', factorId)
      .where('kind', '=', 'totp')
      .where('sealed', '=', 0)
      .where('secret', '=', clear)
      .executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }
  async insertPasskey(passkey: PasskeyFactor): Promise<void> {
    await translated('passkey', () =>
      this.#db
        .insertInto('user_factors')
        .values({
          ...rowOf(passkey.factor),
          sealed: 0,
          credential_id: passkey.credentialId,
          public_key: passkey.publicKey,
          sign_count: passkey.signCount,
          transports: JSON.stringify(passkey.transports),
          backup_eligible: passkey.factor.backupEligible ? 1 : 0,
          backed_up: passkey.backedUp ? 1 : 0,
          aaguid: passkey.aaguid,
        })
        .execute(),
    );
  }

  async passkeys(userId: string): Promise<PasskeyFactor[]> {
    const rows = await this.#db.selectFrom('user_factors').selectAll().where('user_id', '=', userId).where('kind', '=', 'passkey').orderBy('created_at').orderBy('id').execute();
    return rows.map(passkeyOf);
  }

  async passkeyByCredentialId(credentialId: string): Promise<PasskeyFactor | undefined> {
    const row = await this.#db.selectFrom('user_factors').selectAll().where('credential_id', '=', credentialId).where('kind', '=', 'passkey').executeTakeFirst();
    return row && passkeyOf(row);
  }

  async usePasskey(factorId: string, signCount: number, backedUp: boolean, now: number): Promise<boolean> {
    // WebAuthn L3 §6.1.1 (SA60): the one statement that decides. A counter must go forward; an
    // authenticator that keeps none sends 0 every time, accepted only while the stored one is 0.
    const result = await this.#db
      .updateTable('user_factors')
      .set({ sign_count: signCount, backed_up: backedUp ? 1 : 0, last_used_at: now })
      .where('id', '=', factorId)
      .where('kind', '=', 'passkey')
      .where((eb) => (signCount === 0 ? eb('sign_count', '=', 0) : eb('sign_count', '<', signCount)))
      .executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }

  async userHandle(userId: string, candidate: string): Promise<string> {
    // Made once: a concurrent second call's insert does nothing, and both read the one handle.
    await translated('user handle', () => this.#db.insertInto('webauthn_user_handles').values({ user_id: userId, handle: candidate }).onConflict((oc) => oc.column('user_id').doNothing()).execute());
    const row = await this.#db.selectFrom('webauthn_user_handles').select('handle').where('user_id', '=', userId).executeTakeFirstOrThrow();
    return row.handle;
  }

  async userOfHandle(handle: string): Promise<string | undefined> {
    const row = await this.#db.selectFrom('webauthn_user_handles').select('user_id').where('handle', '=', handle).executeTakeFirst();
    return row?.user_id;
  }

  async insertEmailFactor(factor: Factor): Promise<void> {
    if (factor.kind !== 'email_otp' || factor.email === undefined) throw new Error('an e-mail factor has kind email_otp and an address');
    await translated('e-mail factor', () => this.#db.insertInto('user_factors').values({ ...rowOf(factor), sealed: 0, email: factor.email }).execute());
  }

  async touch(factorId: string, now: number): Promise<void> {
    await this.#db.updateTable('user_factors').set({ last_used_at: now }).where('id', '=', factorId).execute();
  }
}

function rowOf(factor: Factor) {
  return { id: factor.id, user_id: factor.userId, kind: factor.kind, name: factor.name, created_at: factor.createdAt, last_used_at: factor.lastUsedAt ?? null };
}

function factorOf(row: Selectable<UserFactorsTable>): Factor {
  const factor: Factor = {
    id: row.id,
    userId: row.user_id,
    kind: row.kind as FactorKind,
    name: row.name,
    createdAt: Number(row.created_at),
    lastUsedAt: row.last_used_at === null ? undefined : Number(row.last_used_at),
  };
  if (factor.kind === 'passkey') factor.backupEligible = row.backup_eligible === 1;
  if (factor.kind === 'email_otp' && row.email !== null) factor.email = row.email;
  return factor;
}

function passkeyOf(row: Selectable<UserFactorsTable>): PasskeyFactor {
  return {
    factor: { ...factorOf(row), kind: 'passkey', backupEligible: row.backup_eligible === 1 },
    credentialId: row.credential_id ?? '',
    publicKey: row.public_key ?? '',
    signCount: Number(row.sign_count ?? 0),
    transports: JSON.parse(row.transports ?? '[]') as string[],
    backedUp: row.backed_up === 1,
    aaguid: row.aaguid ?? '',
  };
}
