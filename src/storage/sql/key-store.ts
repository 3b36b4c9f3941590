import { sql, type Kysely, type Selectable } from 'kysely';
import type { SigningAlg } from '../../protocol/constants.ts';
import type { SigningKey } from '../../domain/signing-key.ts';
import type { KeyStore } from '../ports.ts';
import type { DialectName } from './database.ts';
import type { Database, SigningKeysTable } from './schema.ts';
import { atomically } from './unit-of-work.ts';

export class SqlKeyStore implements KeyStore {
  readonly #db: Kysely<Database>;
  readonly #dialect: DialectName;
  constructor(db: Kysely<Database>, dialect: DialectName) {
    this.#db = db;
    this.#dialect = dialect;
  }

  async list(now: number): Promise<SigningKey[]> {
    const rows = await this.#db
      .selectFrom('signing_keys')
      .selectAll()
      .where((eb) => eb.or([eb('retired_at', 'is', null), eb('publish_until', '>', now)]))
      .orderBy('created_at', 'desc')
      .orderBy('kid', 'desc')
      .execute();
    return rows.map(fromRow);
  }

  async insert(key: SigningKey): Promise<void> {
    await this.#db.insertInto('signing_keys').values(toRow(key)).execute();
  }

  async insertFirst(key: SigningKey): Promise<boolean> {
    return atomically(this.#db, async (trx) => {
      await this.#serialise(trx);
      const active = await trx.selectFrom('signing_keys').select('kid').where('alg', '=', key.alg).where('retired_at', 'is', null).limit(1).executeTakeFirst();
      if (active) return false;
      await trx.insertInto('signing_keys').values(toRow(key)).execute();
      return true;
    });
  }

  async rotate(key: SigningKey, publishUntil: number): Promise<void> {
    await atomically(this.#db, async (trx) => {
      await this.#serialise(trx);
      await trx.updateTable('signing_keys').set({ retired_at: key.createdAt, publish_until: publishUntil }).where('alg', '=', key.alg).where('retired_at', 'is', null).execute();
      await trx.insertInto('signing_keys').values(toRow(key)).execute();
    });
  }

  /**
   * Key changes take turns. PostgreSQL: a transaction-scoped advisory lock, held until commit, so
   * the next change reads what this one wrote (under READ COMMITTED an UPDATE never sees a row
   * another transaction inserts meanwhile: two rotations would each leave their key active).
   * SQLite: the transaction's write lock (BEGIN IMMEDIATE) already does it.
   */
  async #serialise(trx: Kysely<Database>): Promise<void> {
    if (this.#dialect === 'postgres') await sql`select pg_advisory_xact_lock(${sql.lit(KEY_CHANGES_LOCK)})`.execute(trx);
  }

  async listUnsealed(): Promise<SigningKey[]> {
    const rows = await this.#db.selectFrom('signing_keys').selectAll().where('encrypted', '=', 0).orderBy('created_at').orderBy('kid').execute();
    return rows.map(fromRow);
  }

  async seal(kid: string, sealedPrivateJwk: string): Promise<boolean> {
    const result = await this.#db.updateTable('signing_keys').set({ private_jwk: sealedPrivateJwk, encrypted: 1 }).where('kid', '=', kid).where('encrypted', '=', 0).executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }
}

/** The advisory lock id of signing-key changes (any fixed value, unlike the other locks'; "gatkey" in ASCII). */
const KEY_CHANGES_LOCK = 0x6761746b6579;

function toRow(k: SigningKey): SigningKeysTable {
  return {
    kid: k.kid,
    alg: k.alg,
    public_jwk: JSON.stringify(k.publicJwk),
    private_jwk: k.privateJwk,
    encrypted: k.encrypted ? 1 : 0,
    created_at: k.createdAt,
    retired_at: k.retiredAt ?? null,
    publish_until: k.publishUntil ?? null,
  };
}

function fromRow(r: Selectable<SigningKeysTable>): SigningKey {
  return {
    kid: r.kid,
    alg: r.alg as SigningAlg,
    publicJwk: JSON.parse(r.public_jwk) as Record<string, unknown>,
    privateJwk: r.private_jwk,
    encrypted: r.encrypted === 1,
    createdAt: r.created_at,
    retiredAt: r.retired_at ?? undefined,
    publishUntil: r.publish_until ?? undefined,
  };
}
