import { sql, type Kysely, type Selectable } from 'kysely';
import { MAX_ORGANIZATION_DEPTH, type Organization } from '../../domain/organization.ts';
import { OrganizationInUseError, TreeShapeError, type OrganizationPageKey, type OrganizationQuery, type OrganizationStore, type PageQuery } from '../ports.ts';
import { loadAttributes, writeAttributes } from './attributes.ts';
import type { DialectName } from './database.ts';
import { translated } from './errors.ts';
import { containsFolded, matches } from './filters.ts';
import type { Database, OrganizationsTable } from './schema.ts';
import { atomically } from './unit-of-work.ts';

const COLUMNS: Record<string, keyof OrganizationsTable> = {
  id: 'id',
  technicalName: 'technical_name',
  friendlyName: 'friendly_name',
  organizationType: 'type',
  type: 'type',
  parentOrganizationId: 'parent_id',
};

/**
 * The PostgreSQL advisory lock that serialises the writes that shape the tree (any 64-bit number
 * works; this one spells "gateho" in ASCII, unlikely to be picked by another application sharing
 * the database). Advisory locks are per database: instances on several schemas of one database
 * share it, which only serialises a little more.
 */
const ORGANIZATION_TREE_LOCK = 0x67617465686f;

export class SqlOrganizationStore implements OrganizationStore {
  readonly #db: Kysely<Database>;
  readonly #dialect: DialectName;
  constructor(db: Kysely<Database>, dialect: DialectName) {
    this.#db = db;
    this.#dialect = dialect;
  }

  async insert(org: Organization): Promise<void> {
    await translated('organization', () =>
      atomically(this.#db, async (trx) => {
        if (org.parentId !== undefined) {
          await this.#serialise(trx);
          if (org.parentId === org.id) throw cycle();
          // The new organization has nothing below it: only the depth of its parent matters.
          if ((await ancestors(trx, org.parentId)).length >= MAX_ORGANIZATION_DEPTH) throw tooDeep();
        }
        await trx.insertInto('organizations').values(toRow(org)).execute();
        await writeAttributes(trx, 'organization_attributes', org.id, org.attributes);
      }),
    );
  }

  async get(id: string): Promise<Organization | undefined> {
    const row = await this.#db.selectFrom('organizations').selectAll().where('id', '=', id).executeTakeFirst();
    return row && (await this.#withAttributes([row]))[0];
  }

  async list(query: OrganizationQuery = {}): Promise<Organization[]> {
    return this.#withAttributes(await this.#matching(query).selectAll().execute());
  }

  async listIds(query: OrganizationQuery = {}): Promise<string[]> {
    const rows = await this.#matching(query).select('organizations.id').execute();
    return rows.map((r) => r.id);
  }

  /** The organizations matching `query` (without its columns picked), in technical-name order, limited. */
  #matching(query: OrganizationQuery) {
    const exact = query.exactMatch ?? false;
    let q = this.#db.selectFrom('organizations');
    for (const [name, value] of Object.entries(query.filters ?? {})) {
      // Own keys only: a filter named `toString` or `constructor` is a custom attribute, not Object.prototype's member (found by the fuzzer).
      const column = Object.hasOwn(COLUMNS, name) ? COLUMNS[name] : undefined;
      if (column) q = q.where(matches(sql.ref(`organizations.${column}`), value, exact));
      else
        q = q.where(({ exists, selectFrom }) =>
          exists(
            selectFrom('organization_attributes as a')
              .select('a.owner_id')
              .whereRef('a.owner_id', '=', 'organizations.id')
              .where('a.name', '=', name)
              .where(matches(sql.ref('a.value'), value, exact)),
          ),
        );
    }
    q = q.orderBy('technical_name').orderBy('id');
    if (query.limit) q = q.limit(query.limit);
    return q;
  }

  async subtreeIds(id: string): Promise<string[]> {
    const rows = await subtree(this.#db, id);
    if (rows.some((r) => r.depth > MAX_ORGANIZATION_DEPTH)) {
      throw new TreeShapeError('too_deep', `the organization tree below ${JSON.stringify(id)} is deeper than ${MAX_ORGANIZATION_DEPTH} levels or has a cycle`);
    }
    return [...new Set(rows.map((r) => r.id))];
  }

  async update(org: Organization): Promise<boolean> {
    return translated('organization', () =>
      atomically(this.#db, async (trx) => {
        await this.#serialise(trx);
        // Read after the lock: every move committed before it is seen, none can commit meanwhile.
        const current = await trx.selectFrom('organizations').select('parent_id').where('id', '=', org.id).executeTakeFirst();
        if (!current) return false;
        if (org.parentId !== undefined && org.parentId !== current.parent_id) await checkMove(trx, org.id, org.parentId);
        const { id: _id, created_at: _created, ...row } = toRow(org);
        const result = await trx.updateTable('organizations').set(row).where('id', '=', org.id).executeTakeFirst();
        if (result.numUpdatedRows === 0n) return false;
        await writeAttributes(trx, 'organization_attributes', org.id, org.attributes);
        return true;
      }),
    );
  }

  /**
   * Waits until no other transaction that shapes the tree runs, on any instance, and holds that
   * until this one ends. SQLite needs nothing: its transactions begin immediate
   * (node-sqlite-dialect.ts), so writers run one at a time already.
   */
  async #serialise(trx: Kysely<Database>): Promise<void> {
    if (this.#dialect === 'postgres') await sql`select pg_advisory_xact_lock(${sql.lit(ORGANIZATION_TREE_LOCK)})`.execute(trx);
  }

  async delete(id: string): Promise<boolean> {
    return translated('organization', () =>
      atomically(this.#db, async (trx) => {
        // PostgreSQL: lock the row. A user being added to it (or moved into it) holds a key-share
        // lock on it until it commits, so this waits for it and the check below sees the user; a
        // user added later waits for this transaction and then finds no organization. SQLite's
        // writers are serialised already. Without this, ON DELETE SET NULL moved such a user to
        // no organization without a word.
        let row = trx.selectFrom('organizations').select('id').where('id', '=', id);
        if (this.#dialect === 'postgres') row = row.forUpdate();
        if (!(await row.executeTakeFirst())) return false;
        const member = await trx.selectFrom('users').select('id').where('organization_id', '=', id).limit(1).executeTakeFirst();
        if (member) throw new OrganizationInUseError('the organization has users');
        const result = await trx.deleteFrom('organizations').where('id', '=', id).executeTakeFirst();
        return result.numDeletedRows > 0n;
      }),
    );
  }

  async page(query: PageQuery<OrganizationPageKey>): Promise<Organization[]> {
    let q = this.#db.selectFrom('organizations').selectAll();
    const after = query.after;
    if (after !== undefined)
      q = q.where((eb) => eb.or([eb('technical_name', '>', after.technicalName), eb.and([eb('technical_name', '=', after.technicalName), eb('id', '>', after.id)])]));
    if (query.q !== undefined && query.q !== '') {
      const text = query.q.toLowerCase();
      q = q.where((eb) => eb.or([containsFolded(sql.ref('technical_name'), text), containsFolded(sql.ref('friendly_name'), text)]));
    }
    return this.#withAttributes(await q.orderBy('technical_name').orderBy('id').limit(query.limit).execute());
  }

  async #withAttributes(rows: Selectable<OrganizationsTable>[]): Promise<Organization[]> {
    const attributes = await loadAttributes(this.#db, 'organization_attributes', rows.map((r) => r.id));
    return rows.map((r) => fromRow(r, attributes.get(r.id) ?? {}));
  }
}

/**
 * `id` and every organization below it with its level (`id` is 1), one query. The walk stops one
 * level past MAX_ORGANIZATION_DEPTH, so rows that form a cycle end it too: each organization has
 * one parent, so a level holds each organization at most once and the walk reads at most
 * (MAX_ORGANIZATION_DEPTH + 1) rows per organization. A row past the bound tells the caller.
 */
async function subtree(db: Kysely<Database>, id: string): Promise<{ id: string; depth: number }[]> {
  const rows = await db
    .withRecursive('subtree(id, depth)', (q) =>
      q
        .selectFrom('organizations')
        .select(['id', sql<number>`1`.as('depth')])
        .where('id', '=', id)
        .unionAll(
          q
            .selectFrom('organizations as o')
            .innerJoin('subtree as s', 's.id', 'o.parent_id')
            .select(['o.id', sql<number>`s.depth + 1`.as('depth')])
            .where('s.depth', '<=', sql.lit(MAX_ORGANIZATION_DEPTH)),
        ),
    )
    .selectFrom('subtree')
    .select(['id', 'depth'])
    .execute();
  return rows.map((r) => ({ id: r.id, depth: Number(r.depth) }));
}

/**
 * `id` and its ancestors up to the root, nearest first, one query; like `subtree`, bounded to one
 * more than MAX_ORGANIZATION_DEPTH rows whatever the stored rows are. Empty for an unknown id.
 */
async function ancestors(db: Kysely<Database>, id: string): Promise<string[]> {
  const rows = await db
    .withRecursive('chain(id, parent_id, depth)', (q) =>
      q
        .selectFrom('organizations')
        .select(['id', 'parent_id', sql<number>`1`.as('depth')])
        .where('id', '=', id)
        .unionAll(
          q
            .selectFrom('organizations as o')
            .innerJoin('chain as c', 'c.parent_id', 'o.id')
            .select(['o.id', 'o.parent_id', sql<number>`c.depth + 1`.as('depth')])
            .where('c.depth', '<=', sql.lit(MAX_ORGANIZATION_DEPTH)),
        ),
    )
    .selectFrom('chain')
    .select(['id', 'depth'])
    .orderBy('depth')
    .execute();
  return rows.map((r) => r.id);
}

/** Moving `id` under `parentId` keeps the tree acyclic and no deeper than the bound; else TreeShapeError. */
async function checkMove(trx: Kysely<Database>, id: string, parentId: string): Promise<void> {
  const above = await ancestors(trx, parentId);
  if (above.includes(id)) throw cycle();
  const below = await subtree(trx, id);
  const height = Math.max(...below.map((r) => r.depth));
  // An unknown parent has no ancestors; the foreign key refuses it when the row is written.
  if (above.length + height > MAX_ORGANIZATION_DEPTH) throw tooDeep();
}

function cycle(): TreeShapeError {
  return new TreeShapeError('cycle', 'an organization cannot be moved under itself or one of its sub-organizations');
}

function tooDeep(): TreeShapeError {
  return new TreeShapeError('too_deep', `the organization tree would be deeper than ${MAX_ORGANIZATION_DEPTH} levels`);
}

function toRow(o: Organization): OrganizationsTable {
  return {
    id: o.id,
    parent_id: o.parentId ?? null,
    technical_name: o.technicalName,
    friendly_name: o.friendlyName,
    type: o.type ?? null,
    virtual: o.virtual ? 1 : 0,
    created_at: o.createdAt,
    updated_at: o.updatedAt,
  };
}

function fromRow(r: Selectable<OrganizationsTable>, attributes: Organization['attributes']): Organization {
  return {
    id: r.id,
    parentId: r.parent_id ?? undefined,
    technicalName: r.technical_name,
    friendlyName: r.friendly_name,
    type: r.type ?? undefined,
    virtual: r.virtual === 1,
    attributes,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}
