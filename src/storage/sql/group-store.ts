import { sql, type Insertable, type Kysely, type Selectable } from 'kysely';
import type { Group } from '../../domain/group.ts';
import { normalizeUsername, type UserProfile } from '../../domain/user.ts';
import type { GroupStore, PageQuery } from '../ports.ts';
import { containsFolded } from './filters.ts';
import { PROFILE_COLUMNS, profileFromRow } from './user-store.ts';
import { translated } from './errors.ts';
import type { Database, GroupsTable } from './schema.ts';

/** Group names compare like usernames: case-insensitively. */
const nameKey = normalizeUsername;

function groupRow(g: Group): Insertable<GroupsTable> {
  return { id: g.id, name: g.name, name_key: nameKey(g.name), description: g.description ?? null, created_at: g.createdAt, administrator: g.administrator ? 1 : 0 };
}

function groupFromRow(row: Selectable<GroupsTable>): Group {
  return { id: row.id, name: row.name, description: row.description ?? undefined, createdAt: row.created_at, administrator: row.administrator === 1 };
}

export class SqlGroupStore implements GroupStore {
  readonly #db: Kysely<Database>;
  constructor(db: Kysely<Database>) {
    this.#db = db;
  }

  async insert(g: Group): Promise<void> {
    await translated('group', () =>
      this.#db.insertInto('groups').values(groupRow(g)).execute(),
    );
  }

  async insertIfAbsent(g: Group): Promise<boolean> {
    return translated('group', async () => {
      const result = await this.#db
        .insertInto('groups')
        .values(groupRow(g))
        .onConflict((oc) => oc.column('name_key').doNothing())
        .executeTakeFirst();
      return (result.numInsertedOrUpdatedRows ?? 0n) > 0n;
    });
  }

  async getByName(name: string): Promise<Group | undefined> {
    const row = await this.#db.selectFrom('groups').selectAll().where('name_key', '=', nameKey(name)).executeTakeFirst();
    return row && groupFromRow(row);
  }

  async list(): Promise<Group[]> {
    const rows = await this.#db.selectFrom('groups').selectAll().orderBy('name_key').execute();
    return rows.map(groupFromRow);
  }

  async markAdministrator(names: readonly string[]): Promise<string[]> {
    if (names.length === 0) return [];
    // One conditional UPDATE: atomic on its own, and a mark already there is left alone.
    const rows = await this.#db
      .updateTable('groups')
      .set({ administrator: 1 })
      .where('name_key', 'in', names.map(nameKey))
      .where('administrator', '=', 0)
      .returning('name')
      .execute();
    return rows.map((r) => r.name).sort();
  }

  async unmarkAdministrator(groupId: string): Promise<boolean> {
    const result = await this.#db.updateTable('groups').set({ administrator: 0 }).where('id', '=', groupId).where('administrator', '=', 1).executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }

  async addMember(groupId: string, userId: string): Promise<boolean> {
    return translated('group member', async () => {
      const result = await this.#db.insertInto('group_members').values({ group_id: groupId, user_id: userId }).onConflict((oc) => oc.doNothing()).executeTakeFirst();
      return (result.numInsertedOrUpdatedRows ?? 0n) > 0n;
    });
  }

  async removeMember(groupId: string, userId: string): Promise<boolean> {
    const result = await this.#db.deleteFrom('group_members').where('group_id', '=', groupId).where('user_id', '=', userId).executeTakeFirst();
    return result.numDeletedRows > 0n;
  }

  async delete(groupId: string): Promise<boolean> {
    // group_members rows go with it: ON DELETE CASCADE (migration 001).
    const result = await this.#db.deleteFrom('groups').where('id', '=', groupId).executeTakeFirst();
    return result.numDeletedRows > 0n;
  }

  async members(groupId: string): Promise<string[]> {
    const rows = await this.#db.selectFrom('group_members').select('user_id').where('group_id', '=', groupId).orderBy('user_id').execute();
    return rows.map((r) => r.user_id);
  }

  async groupsOf(userId: string): Promise<Group[]> {
    const rows = await this.#db
      .selectFrom('groups')
      .innerJoin('group_members', 'group_members.group_id', 'groups.id')
      .selectAll('groups')
      .where('group_members.user_id', '=', userId)
      .orderBy('groups.name_key')
      .execute();
    return rows.map(groupFromRow);
  }

  async isMember(userId: string, groupName: string): Promise<boolean> {
    const row = await this.#db
      .selectFrom('group_members')
      .innerJoin('groups', 'groups.id', 'group_members.group_id')
      .select('group_members.user_id')
      .where('group_members.user_id', '=', userId)
      .where('groups.name_key', '=', nameKey(groupName))
      .executeTakeFirst();
    return row !== undefined;
  }

  async page(query: PageQuery<string>): Promise<Group[]> {
    let q = this.#db.selectFrom('groups').selectAll();
    if (query.after !== undefined) q = q.where('name_key', '>', query.after);
    if (query.q !== undefined && query.q !== '') q = q.where(containsFolded(sql.ref('name_key'), nameKey(query.q), { columnFolded: true }));
    const rows = await q.orderBy('name_key').limit(query.limit).execute();
    return rows.map(groupFromRow);
  }

  async memberPage(groupId: string, query: PageQuery<string>): Promise<UserProfile[]> {
    let q = this.#db
      .selectFrom('users')
      .innerJoin('group_members', 'group_members.user_id', 'users.id')
      .select(PROFILE_COLUMNS.map((c) => `users.${c}` as const))
      .where('group_members.group_id', '=', groupId);
    if (query.after !== undefined) q = q.where('users.username_key', '>', query.after);
    if (query.q !== undefined && query.q !== '') q = q.where(containsFolded(sql.ref('users.username_key'), normalizeUsername(query.q), { columnFolded: true }));
    const rows = await q.orderBy('users.username_key').limit(query.limit).execute();
    return rows.map(profileFromRow);
  }
}
