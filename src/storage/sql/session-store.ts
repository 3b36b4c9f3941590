import type { ExpressionBuilder, Kysely, Selectable } from 'kysely';
import type { SsoSession } from '../../domain/session.ts';
import type { PageQuery, SessionPageKey, SessionStore } from '../ports.ts';
import { prepared } from './prepared.ts';
import type { Database, SessionsTable } from './schema.ts';

export class SqlSessionStore implements SessionStore {
  readonly #db: Kysely<Database>;
  readonly #q: ReturnType<typeof statements>;

  /** `sharing`: a store whose compiled statements to reuse (the same store inside a unit of work). */
  constructor(db: Kysely<Database>, sharing?: SqlSessionStore) {
    this.#db = db;
    this.#q = sharing ? sharing.#q : statements(db);
  }

  async insert(s: SsoSession): Promise<void> {
    await this.#db
      .insertInto('sessions')
      .values({
        id_hash: s.idHash,
        session_index: s.sessionIndex,
        user_id: s.userId,
        auth_time: s.authTime,
        amr: JSON.stringify(s.amr),
        acr: s.acr ?? null,
        created_at: s.createdAt,
        expires_at: s.expiresAt,
        max_expires_at: s.maxExpiresAt,
        user_agent: s.userAgent ?? null,
        client_ip: s.ip ?? null,
      })
      .execute();
  }

  async findLive(idHash: string, now: number): Promise<SsoSession | undefined> {
    const row = await this.#q.findLive.first({ idHash, now }, this.#db);
    return row && fromRow(row);
  }

  async findUsable(idHash: string, now: number): Promise<SsoSession | undefined> {
    const row = await this.#q.findUsable.first({ idHash, now }, this.#db);
    return row && fromRow(row);
  }

  async findLiveByIndex(sessionIndex: string, now: number): Promise<SsoSession | undefined> {
    const row = await this.#db.selectFrom('sessions').selectAll().where('session_index', '=', sessionIndex).where('expires_at', '>', now).where('max_expires_at', '>', now).executeTakeFirst();
    return row && fromRow(row);
  }

  async touch(idHash: string, expiresAt: number): Promise<void> {
    await this.#q.touch.execute({ idHash, expiresAt }, this.#db);
  }

  async end(idHash: string): Promise<SsoSession | undefined> {
    const row = await this.#db.deleteFrom('sessions').where('id_hash', '=', idHash).returningAll().executeTakeFirst();
    return row && fromRow(row);
  }

  async endAllOfUser(userId: string): Promise<string[]> {
    const rows = await this.#db.deleteFrom('sessions').where('user_id', '=', userId).returning('session_index').execute();
    return rows.map((r) => r.session_index);
  }

  async pageOfUser(userId: string, now: number, query: PageQuery<SessionPageKey>): Promise<SsoSession[]> {
    let q = this.#db.selectFrom('sessions').selectAll().where('user_id', '=', userId).where('expires_at', '>', now).where('max_expires_at', '>', now);
    const after = query.after;
    if (after !== undefined)
      q = q.where((eb) => eb.or([eb('created_at', '<', after.createdAt), eb.and([eb('created_at', '=', after.createdAt), eb('session_index', '<', after.sessionIndex)])]));
    const rows = await q.orderBy('created_at', 'desc').orderBy('session_index', 'desc').limit(query.limit).execute();
    return rows.map(fromRow);
  }

  async endOfUser(userId: string, sessionIndex: string): Promise<SsoSession | undefined> {
    // One conditional statement: a session of another user is never ended through this user.
    const row = await this.#db.deleteFrom('sessions').where('session_index', '=', sessionIndex).where('user_id', '=', userId).returningAll().executeTakeFirst();
    return row && fromRow(row);
  }

  async endOthersOfUser(userId: string, keepIdHash: string): Promise<SsoSession[]> {
    // One statement: a session started while this runs is either ended here or started after it.
    const rows = await this.#db.deleteFrom('sessions').where('user_id', '=', userId).where('id_hash', '<>', keepIdHash).returningAll().execute();
    return rows.map(fromRow);
  }

  async describe(idHash: string, device: { userAgent: string | undefined; ip: string | undefined }): Promise<void> {
    await this.#db.updateTable('sessions').set({ user_agent: device.userAgent ?? null, client_ip: device.ip ?? null }).where('id_hash', '=', idHash).execute();
  }

  async countLive(now: number, limit: number): Promise<number> {
    // Counted over the expires_at index, and no further than `limit` rows: a scrape stays cheap
    // however many sessions there are.
    const live = this.#db.selectFrom('sessions').select('id_hash').where('expires_at', '>', now).where('max_expires_at', '>', now).limit(limit).as('live');
    const row = await this.#db.selectFrom(live).select((eb) => eb.fn.countAll<number | string | bigint>().as('n')).executeTakeFirstOrThrow();
    return Number(row.n);
  }

  async deleteExpired(before: number, limit: number): Promise<number> {
    const result = await this.#expired(before, limit).executeTakeFirst();
    return Number(result.numDeletedRows);
  }

  async endExpired(before: number, limit: number): Promise<Pick<SsoSession, 'sessionIndex' | 'userId'>[]> {
    // RETURNING names only the rows this statement deleted: a concurrent logout or another
    // instance's pass that deleted a session first leaves it out (LO10).
    const rows = await this.#expired(before, limit).returning(['session_index', 'user_id']).execute();
    return rows.map((r) => ({ sessionIndex: r.session_index, userId: r.user_id }));
  }

  #expired(before: number, limit: number) {
    // The condition is repeated outside the subquery: on PostgreSQL a session touched meanwhile is
    // checked again in its new version, and kept.
    const expired = (eb: ExpressionBuilder<Database, 'sessions'>) => eb.or([eb('expires_at', '<', before), eb('max_expires_at', '<', before)]);
    return this.#db
      .deleteFrom('sessions')
      .where('id_hash', 'in', this.#db.selectFrom('sessions').select('id_hash').where(expired).limit(limit))
      .where(expired);
  }
}

/** Compiled once (src/storage/sql/prepared.ts): every single sign-on reads its session and may move its idle deadline. */
function statements(db: Kysely<Database>) {
  return {
    findLive: prepared<{ idHash: string; now: number }, Selectable<SessionsTable>>(db, (p) =>
      db.selectFrom('sessions').selectAll().where('id_hash', '=', p('idHash')).where('expires_at', '>', p('now')).where('max_expires_at', '>', p('now')),
    ),
    findUsable: prepared<{ idHash: string; now: number }, Selectable<SessionsTable>>(db, (p) =>
      db
        .selectFrom('sessions')
        .innerJoin('users', 'users.id', 'sessions.user_id')
        .selectAll('sessions')
        .where('sessions.id_hash', '=', p('idHash'))
        .where('sessions.expires_at', '>', p('now'))
        .where('sessions.max_expires_at', '>', p('now'))
        .where('users.status', '=', 'enabled'),
    ),
    // Capped at max_expires_at, as the port promises (the caller need not know the absolute deadline).
    touch: prepared<{ idHash: string; expiresAt: number }, unknown>(db, (p) =>
      db
        .updateTable('sessions')
        .set((eb) => ({ expires_at: eb.case().when('max_expires_at', '<', p('expiresAt')).then(eb.ref('max_expires_at')).else(p('expiresAt')).end() }))
        .where('id_hash', '=', p('idHash'))
        .where('expires_at', '<', p('expiresAt')),
    ),
  };
}

function fromRow(r: Selectable<SessionsTable>): SsoSession {
  return {
    idHash: r.id_hash,
    sessionIndex: r.session_index,
    userId: r.user_id,
    authTime: r.auth_time,
    amr: JSON.parse(r.amr) as string[],
    acr: r.acr ?? undefined,
    createdAt: r.created_at,
    expiresAt: r.expires_at,
    maxExpiresAt: r.max_expires_at,
    ...(r.user_agent === null ? {} : { userAgent: r.user_agent }),
    ...(r.client_ip === null ? {} : { ip: r.client_ip }),
  };
}
