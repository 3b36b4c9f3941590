import type { Kysely } from 'kysely';
import type { Attributes } from '../../domain/user.ts';
import type { Database } from './schema.ts';

type AttributeTable = 'user_attributes' | 'organization_attributes';

/** Loads the multi-valued custom attributes of many owners in one query. */
export async function loadAttributes(db: Kysely<Database>, table: AttributeTable, ownerIds: string[]): Promise<Map<string, Attributes>> {
  const byOwner = new Map<string, Attributes>();
  if (ownerIds.length === 0) return byOwner;
  // Chunked so a long list never exceeds a driver's bound-parameter limit.
  for (let i = 0; i < ownerIds.length; i += 500) {
    const rows = await db
      .selectFrom(table)
      .select(['owner_id', 'name', 'value'])
      .where('owner_id', 'in', ownerIds.slice(i, i + 500))
      .orderBy('owner_id')
      .orderBy('name')
      .orderBy('position')
      .execute();
    for (const row of rows) {
      const attributes = byOwner.get(row.owner_id) ?? {};
      // Own properties only (found by the fuzzer): an attribute named `toString` or `constructor`
      // found Object.prototype's member, and push() on it threw, so one such user made every
      // read and listing that included them a 500. defineProperty keeps even `__proto__` a plain key.
      if (Object.hasOwn(attributes, row.name)) attributes[row.name]!.push(row.value);
      else Object.defineProperty(attributes, row.name, { value: [row.value], enumerable: true, writable: true, configurable: true });
      byOwner.set(row.owner_id, attributes);
    }
  }
  return byOwner;
}

/** Replaces all custom attributes of one owner. */
export async function writeAttributes(trx: Kysely<Database>, table: AttributeTable, ownerId: string, attributes: Attributes): Promise<void> {
  await trx.deleteFrom(table).where('owner_id', '=', ownerId).execute();
  const rows = Object.entries(attributes).flatMap(([name, values]) => values.map((value, position) => ({ owner_id: ownerId, name, position, value })));
  if (rows.length > 0) await trx.insertInto(table).values(rows).execute();
}

export function escapeLike(value: string): string {
  return value.replace(/[\\%_]/g, (c) => `\\${c}`);
}
