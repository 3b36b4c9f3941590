import type { Kysely, Selectable } from 'kysely';
import type { SigningKey } from '../../domain/signing-key.ts';
import type { KeyStore } from '../ports.ts';
import type { Database, SigningKeysTable } from './schema.ts';
import { atomically } from './unit-of-work.ts';

export class SqlKeyStore implements KeyStore {
  readonly #db: Kysely<Database>;
  constructor(db: Kysely<Database>) {
    this.#db = db;
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

  async rotate(key: SigningKey, publishUntil: number): Promise<void> {
    await atomically(this.#db, async (trx) => {
      await trx.updateTable('signing_keys').set({ retired_at: key.createdAt, publish_until: publishUntil }).where('retired_at', 'is', null).execute();
      await trx.insertInto('signing_keys').values(toRow(key)).execute();
    });
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
    alg: r.alg as 'RS256',
    publicJwk: JSON.parse(r.public_jwk) as Record<string, unknown>,
    privateJwk: r.private_jwk,
    encrypted: r.encrypted === 1,
    createdAt: r.created_at,
    retiredAt: r.retired_at ?? undefined,
    publishUntil: r.publish_until ?? undefined,
  };
}
