import { sql, type RawBuilder } from 'kysely';
import type { Attributes } from '../../domain/user.ts';
import type { PolicySubject } from '../ports.ts';
import type { DialectName } from './database.ts';

/** The three JSON texts of the facts columns: `[[name, value], …]`, `[group, …]`, `[id, technical_name, friendly_name]` or null. */
export interface FactsColumns {
  attributes: string;
  groups: string;
  organization: string | null;
}

/**
 * The user's facts a policy's claims read (attributes, groups, own organization), as three JSON
 * columns of a statement that has the user's row: aggregated values instead of a union's rows, so
 * they can ride along in another statement (the token's lookup, bench S10) at the cost of three
 * columns. Three columns, not one array of them: SQLite would re-parse each part to nest it.
 * `userId` and `organizationId` are SQL expressions of that statement.
 */
export function policyFactsColumns(dialect: DialectName, userId: RawBuilder<unknown>, organizationId: RawBuilder<unknown>): { [K in keyof FactsColumns]: RawBuilder<FactsColumns[K]> } {
  if (dialect === 'postgres') {
    // json_agg of no rows is null, not an empty array; ::text so both dialects hand back strings.
    return {
      attributes: sql<string>`coalesce((select json_agg(json_build_array(a.name, a.value) order by a.name, a.position) from user_attributes a where a.owner_id = ${userId})::text, '[]')`,
      groups: sql<string>`coalesce((select json_agg(g.name) from groups g join group_members m on m.group_id = g.id where m.user_id = ${userId})::text, '[]')`,
      organization: sql<string | null>`(select json_build_array(o.id, o.technical_name, o.friendly_name)::text from organizations o where o.id = ${organizationId})`,
    };
  }
  return {
    attributes: sql<string>`(select json_group_array(json_array(a.name, a.value) order by a.name, a.position) from user_attributes a where a.owner_id = ${userId})`,
    groups: sql<string>`(select json_group_array(g.name) from groups g join group_members m on m.group_id = g.id where m.user_id = ${userId})`,
    organization: sql<string | null>`(select json_array(o.id, o.technical_name, o.friendly_name) from organizations o where o.id = ${organizationId})`,
  };
}

/** The PolicySubject of a stored policy (or none) and the facts columns' values. */
export function subjectFromFacts(policy: PolicySubject['policy'], facts: FactsColumns): PolicySubject {
  const attributes: Attributes = {};
  for (const [name, value] of JSON.parse(facts.attributes) as [string, string][]) addAttributeValue(attributes, name, value);
  const organization = facts.organization === null ? null : (JSON.parse(facts.organization) as [string, string | null, string | null]);
  return {
    policy,
    attributes,
    groups: (JSON.parse(facts.groups) as string[]).sort(),
    organizations: organization === null ? [] : [{ id: organization[0], technicalName: organization[1] ?? '', friendlyName: organization[2] ?? '' }],
  };
}

/**
 * Appends a value to an attribute, as own properties only: an attribute named `toString` or
 * `__proto__` must not find Object.prototype's member (see loadAttributes in attributes.ts).
 */
export function addAttributeValue(attributes: Attributes, name: string, value: string): void {
  if (Object.hasOwn(attributes, name)) attributes[name]!.push(value);
  else Object.defineProperty(attributes, name, { value: [value], enumerable: true, writable: true, configurable: true });
}
