import { sql, type Kysely, type Selectable } from 'kysely';
import type { AuthorizationCode } from '../../domain/grant.ts';
import type { CodeCursor, CodeStore, Redemption } from '../ports.ts';
import type { CodesTable, Database } from './schema.ts';

export class SqlCodeStore implements CodeStore {
  readonly #db: Kysely<Database>;
  constructor(db: Kysely<Database>) {
    this.#db = db;
  }

  async insert(c: AuthorizationCode): Promise<void> {
    await this.#db
      .insertInto('authorization_codes')
      .values({
        code_hash: c.codeHash,
        client_id: c.clientId,
        user_id: c.userId,
        redirect_uri: c.redirectUri,
        scope: c.scope,
        nonce: c.nonce ?? null,
        code_challenge: c.codeChallenge ?? null,
        code_challenge_method: c.codeChallengeMethod ?? null,
        session_index: c.sessionIndex,
        auth_time: c.authTime,
        amr: JSON.stringify(c.amr),
        acr: c.acr ?? null,
        created_at: c.createdAt,
        expires_at: c.expiresAt,
        consumed_at: null,
        replayed_at: null,
      })
      .execute();
  }

  async consumeOnce(codeHash: string, now: number): Promise<Redemption> {
    // One guarded UPDATE: the database lets exactly one caller flip consumed_at.
    const won = await this.#db
      .updateTable('authorization_codes')
      .set({ consumed_at: now })
      .where('code_hash', '=', codeHash)
      .where('consumed_at', 'is', null)
      .returningAll()
      .executeTakeFirst();
    if (won) return { outcome: 'redeemed', code: fromRow(won) };
    const seen = await this.#db
      .updateTable('authorization_codes')
      .set((eb) => ({ replayed_at: eb.fn.coalesce('replayed_at', eb.val(now)) }))
      .where('code_hash', '=', codeHash)
      .returningAll()
      .executeTakeFirst();
    return seen ? { outcome: 'replayed', code: fromRow(seen) } : { outcome: 'unknown' };
  }

  async consumeBySession(sessionIndex: string, now: number): Promise<number> {
    const result = await this.#db
      .updateTable('authorization_codes')
      .set({ consumed_at: now })
      .where('session_index', '=', sessionIndex)
      .where('consumed_at', 'is', null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows);
  }

  async wasReplayed(codeHash: string): Promise<boolean> {
    const row = await this.#db.selectFrom('authorization_codes').select('replayed_at').where('code_hash', '=', codeHash).executeTakeFirst();
    return row?.replayed_at != null;
  }

  async deleteSpent(page: { before: number; tokensLiveAfter: number; after: CodeCursor | undefined; limit: number }): Promise<{ deleted: number; next: CodeCursor | undefined }> {
    const { before, tokensLiveAfter, after, limit } = page;
    // A page of candidates in index order, so each pass looks at every expired code once, however
    // many are kept because their tokens still live (a plain LIMIT would scan those again and again).
    const candidates = await this.#db
      .selectFrom('authorization_codes')
      .select(['code_hash', 'expires_at'])
      .where('expires_at', '<', before)
      .$if(after !== undefined, (qb) =>
        qb.where((eb) => eb.or([eb('expires_at', '>', after!.expiresAt), eb.and([eb('expires_at', '=', after!.expiresAt), eb('code_hash', '>', after!.codeHash)])])),
      )
      .orderBy('expires_at')
      .orderBy('code_hash')
      .limit(limit)
      .execute();
    if (candidates.length === 0) return { deleted: 0, next: undefined };
    const result = await this.#db
      .deleteFrom('authorization_codes')
      .where(
        'code_hash',
        'in',
        candidates.map((c) => c.code_hash),
      )
      .where('expires_at', '<', before)
      .where((eb) =>
        eb.or([
          eb('consumed_at', 'is', null),
          eb.not(
            eb.exists(
              eb
                .selectFrom('tokens')
                .select(sql.lit(1).as('live'))
                .whereRef('tokens.code_hash', '=', 'authorization_codes.code_hash')
                .where('tokens.revoked_at', 'is', null)
                .where((t) => t.or([t('tokens.expires_at', 'is', null), t('tokens.expires_at', '>', tokensLiveAfter)])),
            ),
          ),
        ]),
      )
      .executeTakeFirst();
    const last = candidates[candidates.length - 1]!;
    return { deleted: Number(result.numDeletedRows), next: candidates.length < limit ? undefined : { expiresAt: last.expires_at, codeHash: last.code_hash } };
  }
}

function fromRow(r: Selectable<CodesTable>): AuthorizationCode {
  return {
    codeHash: r.code_hash,
    clientId: r.client_id,
    userId: r.user_id,
    redirectUri: r.redirect_uri,
    scope: r.scope,
    nonce: r.nonce ?? undefined,
    codeChallenge: r.code_challenge ?? undefined,
    codeChallengeMethod: (r.code_challenge_method ?? undefined) as AuthorizationCode['codeChallengeMethod'],
    sessionIndex: r.session_index,
    authTime: r.auth_time,
    amr: JSON.parse(r.amr) as string[],
    acr: r.acr ?? undefined,
    createdAt: r.created_at,
    expiresAt: r.expires_at,
    consumedAt: r.consumed_at ?? undefined,
  };
}
