import { sql, type Kysely, type Selectable } from 'kysely';
import { normalizeUsername, type User, type UserCredentials, type UserProfile, type UserStatus } from '../../domain/user.ts';
import type { UserPageQuery, UserQuery, UserStore } from '../ports.ts';
import { loadAttributes, writeAttributes } from './attributes.ts';
import { translated } from './errors.ts';
import { containsFolded, matches } from './filters.ts';
import { prepared } from './prepared.ts';
import type { Database, UsersTable } from './schema.ts';
import { atomically } from './unit-of-work.ts';

/** The columns a profile is built from. */
export const PROFILE_COLUMNS = ['id', 'username', 'status', 'given_name', 'family_name', 'email', 'email_verified', 'organization_id', 'created_at', 'updated_at'] as const satisfies ReadonlyArray<keyof UsersTable>;
export type ProfileColumn = (typeof PROFILE_COLUMNS)[number];

/**
 * Filter names that are columns, by the domain's names (UserQuery); any other name is a custom
 * attribute. The identity API's wire names (`login`, `firstname`, …) are turned into these by
 * its own table (src/http/identity-api/wire-names.ts), not here.
 */
const COLUMNS: Record<string, keyof UsersTable> = {
  id: 'id',
  username: 'username',
  status: 'status',
  givenName: 'given_name',
  familyName: 'family_name',
  email: 'email',
  organizationId: 'organization_id',
};

export class SqlUserStore implements UserStore {
  readonly #db: Kysely<Database>;
  readonly #q: ReturnType<typeof statements>;

  /** `sharing`: a store whose compiled statements to reuse (the same store inside a unit of work). */
  constructor(db: Kysely<Database>, sharing?: SqlUserStore) {
    this.#db = db;
    this.#q = sharing ? sharing.#q : statements(db);
  }

  async insert(user: User, passwordHash: string | undefined): Promise<void> {
    await translated('user', () =>
      atomically(this.#db, async (trx) => {
        await trx
          .insertInto('users')
          .values({ ...toRow(user), password_hash: passwordHash ?? null, created_at: user.createdAt })
          .execute();
        await writeAttributes(trx, 'user_attributes', user.id, user.attributes);
      }),
    );
  }

  async get(id: string): Promise<User | undefined> {
    const row = await this.#db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
    return row && (await this.#withAttributes([row]))[0];
  }

  async getProfile(id: string): Promise<UserProfile | undefined> {
    const row = await this.#q.getProfile.first({ id }, this.#db);
    return row && profileFromRow(row);
  }

  async usernames(ids: readonly string[]): Promise<Map<string, string>> {
    if (ids.length === 0) return new Map();
    const rows = await this.#db.selectFrom('users').select(['id', 'username']).where('id', 'in', [...new Set(ids)]).execute();
    return new Map(rows.map((r) => [r.id, r.username]));
  }

  async getByUsername(username: string): Promise<User | undefined> {
    const row = await this.#q.byUsername.first({ usernameKey: normalizeUsername(username) }, this.#db);
    return row && (await this.#withAttributes([row]))[0];
  }

  async getCredentials(username: string): Promise<UserCredentials | undefined> {
    const row = await this.#q.byUsername.first({ usernameKey: normalizeUsername(username) }, this.#db);
    return row && { user: profileFromRow(row), passwordHash: row.password_hash ?? undefined };
  }

  async list(query: UserQuery = {}): Promise<UserProfile[]> {
    if (query.organizationIds?.length === 0) return [];
    const rows = await this.#matching(query).select(PROFILE_COLUMNS).execute();
    return rows.map(profileFromRow);
  }

  async listIds(query: UserQuery = {}): Promise<string[]> {
    if (query.organizationIds?.length === 0) return [];
    const rows = await this.#matching(query).select('users.id').execute();
    return rows.map((r) => r.id);
  }

  /** The users matching `query` (without its columns picked), in username order, limited. */
  #matching(query: UserQuery) {
    const exact = query.exactMatch ?? false;
    let q = this.#db.selectFrom('users');
    for (const [name, value] of Object.entries(query.filters ?? {})) {
      // Own keys only: a filter named `toString` or `constructor` is a custom attribute, not Object.prototype's member (found by the fuzzer).
      const column = Object.hasOwn(COLUMNS, name) ? COLUMNS[name] : undefined;
      // A flag, not text: `true` or `false` (the identity API refuses anything else), never a prefix.
      if (name === 'emailVerified') q = q.where('users.email_verified', '=', value === 'true' ? 1 : 0);
      else if (column) q = q.where(matches(sql.ref(`users.${column}`), value, exact));
      else
        q = q.where(({ exists, selectFrom }) =>
          exists(
            selectFrom('user_attributes as a')
              .select('a.owner_id')
              .whereRef('a.owner_id', '=', 'users.id')
              .where('a.name', '=', name)
              .where(matches(sql.ref('a.value'), value, exact)),
          ),
        );
    }
    if (query.organizationIds) q = q.where('organization_id', 'in', query.organizationIds);
    q = q.orderBy('username_key');
    if (query.limit) q = q.limit(query.limit);
    return q;
  }

  async update(user: User): Promise<boolean> {
    return translated('user', () =>
      atomically(this.#db, async (trx) => {
        const result = await trx.updateTable('users').set(toRow(user)).where('id', '=', user.id).executeTakeFirst();
        if (result.numUpdatedRows === 0n) return false;
        await writeAttributes(trx, 'user_attributes', user.id, user.attributes);
        return true;
      }),
    );
  }

  async setPasswordHash(id: string, passwordHash: string, now: number): Promise<boolean> {
    const result = await this.#db.updateTable('users').set({ password_hash: passwordHash, updated_at: now }).where('id', '=', id).executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }

  async replacePasswordHash(id: string, expected: string | undefined, passwordHash: string, now: number): Promise<boolean> {
    const result = await this.#db
      .updateTable('users')
      .set({ password_hash: passwordHash, updated_at: now })
      .where('id', '=', id)
      .where((eb) => (expected === undefined ? eb('password_hash', 'is', null) : eb('password_hash', '=', expected)))
      .executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }

  async changeStatus(id: string, from: UserStatus, to: UserStatus, now: number): Promise<boolean> {
    const result = await this.#db.updateTable('users').set({ status: to, updated_at: now }).where('id', '=', id).where('status', '=', from).executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }

  async deleteWithStatus(id: string, status: UserStatus): Promise<boolean> {
    const result = await this.#db.deleteFrom('users').where('id', '=', id).where('status', '=', status).executeTakeFirst();
    return result.numDeletedRows > 0n;
  }

  async setRegistrationLocale(id: string, locale: string): Promise<void> {
    await this.#db.updateTable('users').set({ registration_locale: locale }).where('id', '=', id).execute();
  }

  async registrationLocale(id: string): Promise<string | undefined> {
    const row = await this.#db.selectFrom('users').select('registration_locale').where('id', '=', id).executeTakeFirst();
    return row?.registration_locale ?? undefined;
  }

  async confirmEmail(id: string, expected: string | undefined, email: string, now: number): Promise<boolean> {
    const result = await this.#db
      .updateTable('users')
      .set({ email, email_verified: 1, updated_at: now })
      .where('id', '=', id)
      .where((eb) => (expected === undefined ? eb('email', 'is', null) : eb('email', '=', expected)))
      .executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }

  async delete(id: string): Promise<boolean> {
    const result = await this.#db.deleteFrom('users').where('id', '=', id).executeTakeFirst();
    return result.numDeletedRows > 0n;
  }

  async page(query: UserPageQuery): Promise<UserProfile[]> {
    let q = this.#db.selectFrom('users').select(PROFILE_COLUMNS);
    if (query.after !== undefined) q = q.where('username_key', '>', query.after);
    if (query.q !== undefined && query.q !== '') {
      const text = query.q;
      q = q.where((eb) =>
        eb.or([
          containsFolded(sql.ref('username_key'), normalizeUsername(text), { columnFolded: true }),
          containsFolded(sql.ref('email'), text.toLowerCase()),
          containsFolded(sql.ref('given_name'), text.toLowerCase()),
          containsFolded(sql.ref('family_name'), text.toLowerCase()),
        ]),
      );
    }
    if (query.status !== undefined) q = q.where('status', '=', query.status);
    if (query.organizationId !== undefined) q = q.where('organization_id', '=', query.organizationId);
    const groupId = query.groupId;
    if (groupId !== undefined)
      q = q.where(({ exists, selectFrom }) => exists(selectFrom('group_members as m').select('m.user_id').whereRef('m.user_id', '=', 'users.id').where('m.group_id', '=', groupId)));
    const rows = await q.orderBy('username_key').limit(query.limit).execute();
    return rows.map(profileFromRow);
  }

  async #withAttributes(rows: Selectable<UsersTable>[]): Promise<User[]> {
    const attributes = await loadAttributes(this.#db, 'user_attributes', rows.map((r) => r.id));
    return rows.map((r) => fromRow(r, attributes.get(r.id) ?? {}));
  }
}

/** Compiled once (src/storage/sql/prepared.ts): every token request, introspection and userinfo reads its user, every login its credentials. */
function statements(db: Kysely<Database>) {
  return {
    getProfile: prepared<{ id: string }, Selectable<UsersTable>>(db, (p) => db.selectFrom('users').selectAll().where('id', '=', p('id'))),
    byUsername: prepared<{ usernameKey: string }, Selectable<UsersTable>>(db, (p) => db.selectFrom('users').selectAll().where('username_key', '=', p('usernameKey'))),
  };
}

function toRow(u: User): Omit<UsersTable, 'password_hash' | 'created_at'> {
  return {
    id: u.id,
    username: u.username,
    username_key: normalizeUsername(u.username),
    status: u.status,
    given_name: u.givenName ?? null,
    family_name: u.familyName ?? null,
    email: u.email ?? null,
    // A verified flag without an address would be a claim about nothing (AM51).
    email_verified: u.email !== undefined && u.emailVerified ? 1 : 0,
    organization_id: u.organizationId ?? null,
    updated_at: u.updatedAt,
  };
}

function fromRow(r: Selectable<UsersTable>, attributes: User['attributes']): User {
  return { ...profileFromRow(r), attributes };
}

/** The profile of a `users` row (every column but the password hash and the lookup key). */
export function profileFromRow(r: Pick<Selectable<UsersTable>, ProfileColumn>): UserProfile {
  return {
    id: r.id,
    username: r.username,
    status: r.status as UserStatus,
    givenName: r.given_name ?? undefined,
    familyName: r.family_name ?? undefined,
    email: r.email ?? undefined,
    emailVerified: r.email !== null && Number(r.email_verified) === 1,
    organizationId: r.organization_id ?? undefined,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}
