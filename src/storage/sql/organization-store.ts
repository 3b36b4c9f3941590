import { sql, type Kysely, type Selectable } from 'kysely';
import type { Organization } from '../../domain/organization.ts';
import type { OrganizationStore } from '../ports.ts';
import { loadAttributes, writeAttributes } from './attributes.ts';
import { translated } from './errors.ts';
import { matches } from './filters.ts';
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

export class SqlOrganizationStore implements OrganizationStore {
  readonly #db: Kysely<Database>;
  constructor(db: Kysely<Database>) {
    this.#db = db;
  }

  async insert(org: Organization): Promise<void> {
    await translated('organization', () =>
      atomically(this.#db, async (trx) => {
        await trx.insertInto('organizations').values(toRow(org)).execute();
        await writeAttributes(trx, 'organization_attributes', org.id, org.attributes);
      }),
    );
  }

  async get(id: string): Promise<Organization | undefined> {
    const row = await this.#db.selectFrom('organizations').selectAll().where('id', '=', id).executeTakeFirst();
    return row && (await this.#withAttributes([row]))[0];
  }

  async list(query: { filters?: Record<string, string>; exactMatch?: boolean; limit?: number } = {}): Promise<Organization[]> {
    const exact = query.exactMatch ?? false;
    let q = this.#db.selectFrom('organizations').selectAll();
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
    return this.#withAttributes(await q.execute());
  }

  async subtreeIds(id: string): Promise<string[]> {
    const rows = await this.#db
      .withRecursive('subtree(id)', (db) =>
        db
          .selectFrom('organizations')
          .select('id')
          .where('id', '=', id)
          .unionAll(db.selectFrom('organizations as o').innerJoin('subtree as s', 's.id', 'o.parent_id').select('o.id')),
      )
      .selectFrom('subtree')
      .select('id')
      .execute();
    return rows.map((r) => r.id);
  }

  async update(org: Organization): Promise<boolean> {
    return translated('organization', () =>
      atomically(this.#db, async (trx) => {
        const { id: _id, created_at: _created, ...row } = toRow(org);
        const result = await trx.updateTable('organizations').set(row).where('id', '=', org.id).executeTakeFirst();
        if (result.numUpdatedRows === 0n) return false;
        await writeAttributes(trx, 'organization_attributes', org.id, org.attributes);
        return true;
      }),
    );
  }

  async delete(id: string): Promise<boolean> {
    return translated('organization', async () => {
      const result = await this.#db.deleteFrom('organizations').where('id', '=', id).executeTakeFirst();
      return result.numDeletedRows > 0n;
    });
  }

  async #withAttributes(rows: Selectable<OrganizationsTable>[]): Promise<Organization[]> {
    const attributes = await loadAttributes(this.#db, 'organization_attributes', rows.map((r) => r.id));
    return rows.map((r) => fromRow(r, attributes.get(r.id) ?? {}));
  }
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
