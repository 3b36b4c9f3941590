import { sql, type Kysely, type Selectable } from 'kysely';
import type { AuthorizationCode } from '../../domain/grant.ts';
import type { CodeRefusal } from '../../domain/grant.ts';
import type { CodeCleanupPage, CodeCursor, CodeStore, Redemption } from '../ports.ts';
import { prepared } from './prepared.ts';
import type { CodesTable, Database, UsersTable } from './schema.ts';
import { PROFILE_COLUMNS, profileFromRow, type ProfileColumn } from './user-store.ts';

/** The code's user's profile columns, prefixed `user__` (codes have a user_id of their own; null: no such user). */
type UserColumns = { [C in ProfileColumn as `user__${C}`]: UsersTable[C] | null };
const USER_ALIASES = PROFILE_COLUMNS.map((column) => [column, `user__${column}`] as const);

export class SqlCodeStore implements CodeStore {
  readonly #db: Kysely<Database>;
  readonly #q: ReturnType<typeof statements>;

  /** `sharing`: a store whose compiled statements to reuse (the same store inside a unit of work). */
  constructor(db: Kysely<Database>, sharing?: SqlCodeStore) {
    this.#db = db;
    this.#q = sharing ? sharing.#q : statements(db);
  }

  async insert(c: AuthorizationCode): Promise<void> {
    await this.#q.insert.execute(codeRow(c), this.#db);
  }

  async insertForLiveSession(c: AuthorizationCode, sessionIdHash: string, now: number): Promise<boolean> {
    return (await this.#q.insertForLiveSession.affected({ ...codeRow(c), session_id_hash: sessionIdHash, now }, this.#db)) === 1;
  }

  async consumeOnce(codeHash: string, now: number): Promise<Redemption> {
    const won = await this.#q.consume.first({ codeHash, now }, this.#db);
    if (won) {
      const user = won.user__id === null ? undefined : profileFromRow(Object.fromEntries(USER_ALIASES.map(([column, alias]) => [column, won[alias]])) as Pick<UsersTable, ProfileColumn>);
      return user ? { outcome: 'redeemed', code: fromRow(won), user } : { outcome: 'redeemed', code: fromRow(won) };
    }
    const seen = await this.#db
      .updateTable('authorization_codes')
      .set((eb) => ({ replayed_at: eb.fn.coalesce('replayed_at', eb.val(now)) }))
      .where('code_hash', '=', codeHash)
      .returningAll()
      .executeTakeFirst();
    return seen ? { outcome: 'replayed', code: fromRow(seen), refusedFor: (seen.refused_for ?? undefined) as CodeRefusal | undefined } : { outcome: 'unknown' };
  }

  async markRefused(codeHash: string, reason: CodeRefusal): Promise<void> {
    await this.#db.updateTable('authorization_codes').set({ refused_for: reason }).where('code_hash', '=', codeHash).execute();
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

  async consumeByUserAndClient(userId: string, clientId: string, now: number): Promise<number> {
    const result = await this.#db
      .updateTable('authorization_codes')
      .set({ consumed_at: now })
      .where('user_id', '=', userId)
      .where('client_id', '=', clientId)
      .where('consumed_at', 'is', null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows);
  }

  async deleteSpent(page: CodeCleanupPage): Promise<{ deleted: number; next: CodeCursor | undefined }> {
    const { unredeemedBefore, redeemedBefore, tokensLiveAfter, after, limit } = page;
    const before = Math.max(unredeemedBefore, redeemedBefore);
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
          eb.and([eb('consumed_at', 'is', null), eb('expires_at', '<', unredeemedBefore)]),
          eb.and([
            eb('expires_at', '<', redeemedBefore),
            eb.not(
            eb.exists(
              eb
                .selectFrom('tokens')
                .select(sql.lit(1).as('live'))
                .whereRef('tokens.family_id', '=', 'authorization_codes.code_hash')
                .where('tokens.revoked_at', 'is', null)
                  .where((t) => t.or([t('tokens.expires_at', 'is', null), t('tokens.expires_at', '>', tokensLiveAfter)])),
              ),
            ),
          ]),
        ]),
      )
      .executeTakeFirst();
    const last = candidates[candidates.length - 1]!;
    return { deleted: Number(result.numDeletedRows), next: candidates.length < limit ? undefined : { expiresAt: last.expires_at, codeHash: last.code_hash } };
  }
}

const CODE_COLUMNS = [
  'code_hash',
  'client_id',
  'user_id',
  'redirect_uri',
  'scope',
  'nonce',
  'code_challenge',
  'code_challenge_method',
  'session_index',
  'auth_time',
  'amr',
  'acr',
  'created_at',
  'expires_at',
  'consumed_at',
  'replayed_at',
  'refused_for',
] as const satisfies ReadonlyArray<keyof CodesTable>;

/** Compiled once (src/storage/sql/prepared.ts): every authorization inserts a code and every exchange consumes one. */
function statements(db: Kysely<Database>) {
  return {
    insert: prepared<CodesTable, unknown>(db, (p) =>
      db.insertInto('authorization_codes').values(Object.fromEntries(CODE_COLUMNS.map((column) => [column, p(column)])) as unknown as CodesTable),
    ),
    // The code stored only while its session is live, in one statement (PR12): the unit of work's
    // read of the session and the INSERT folded, so the session's row is read where it is written.
    insertForLiveSession: prepared<CodesTable & { session_id_hash: string; now: number }, unknown>(db, (p) =>
      db
        .insertInto('authorization_codes')
        .columns([...CODE_COLUMNS])
        .expression(
          db
            .selectFrom('sessions')
            .select((eb) => CODE_COLUMNS.map((column) => eb.val(p(column)).as(column)))
            .where('id_hash', '=', p('session_id_hash'))
            .where('expires_at', '>', p('now'))
            .where('max_expires_at', '>', p('now')),
        ),
    ),
    // One guarded UPDATE: the database lets exactly one caller flip consumed_at.
    // Its RETURNING reads the code's user too, a column at a time (SQLite's RETURNING may not name
    // a joined table, but may hold subqueries): the exchange's read of the user folded in (PR13).
    consume: prepared<{ codeHash: string; now: number }, Selectable<CodesTable> & UserColumns>(db, (p) =>
      db
        .updateTable('authorization_codes')
        .set({ consumed_at: p('now') })
        .where('code_hash', '=', p('codeHash'))
        .where('consumed_at', 'is', null)
        .returningAll()
        .returning((eb) => USER_ALIASES.map(([column, alias]) => eb.selectFrom('users').select(column).whereRef('users.id', '=', 'authorization_codes.user_id').as(alias))) as never,
    ),
  };
}

/** The code as its row, for both INSERTs (insert, insertForLiveSession); moved out of insert unchanged. */
function codeRow(c: AuthorizationCode): CodesTable {
  return {
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
    refused_for: null,
  };
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
