import { sql, type RawBuilder } from 'kysely';
import type { Attributes } from '../../domain/user.ts';
import type { PolicySubject } from '../ports.ts';
import type { DialectName } from './database.ts';

/**
 * The user's facts a policy's claims read (attributes, groups, own organization), as one JSON
 * column of a statement that has the user's row: `[[[name, value], …], [group, …], [id,
 * technical_name, friendly_name] | null]`. One aggregated value instead of a union's rows, so it
 * can ride along in another statement (the token's lookup, bench S10) at the cost of a column.
 * `userId` and `organizationId` are SQL expressions of that statement.
 */
export function policyFactsColumn(dialect: DialectName, userId: RawBuilder<unknown>, organizationId: RawBuilder<unknown>): RawBuilder<string | null> {
  if (dialect === 'postgres') {
    // json_agg of no rows is null, not an empty array; ::text so both dialects hand back a string.
    return sql<string | null>`json_build_array(
  coalesce((select json_agg(json_build_array(a.name, a.value) order by a.name, a.position) from user_attributes a where a.owner_id = ${userId}), '[]'::json),
  coalesce((select json_agg(g.name) from groups g join group_members m on m.group_id = g.id where m.user_id = ${userId}), '[]'::json),
  (select json_build_array(o.id, o.technical_name, o.friendly_name) from organizations o where o.id = ${organizationId}))::text`;
  }
  // A subquery's value loses SQLite's JSON subtype; json() gives it back, so it nests as JSON, not as a string.
  return sql<string | null>`json_array(
  json((select json_group_array(json_array(a.name, a.value) order by a.name, a.position) from user_attributes a where a.owner_id = ${userId})),
  json((select json_group_array(g.name) from groups g join group_members m on m.group_id = g.id where m.user_id = ${userId})),
  json((select json_array(o.id, o.technical_name, o.friendly_name) from organizations o where o.id = ${organizationId})))`;
}

type FactsJson = [[string, string][], string[], [string, string | null, string | null] | null];

/** The PolicySubject of a stored policy (or none) and the facts column's value. */
export function subjectFromFacts(policy: PolicySubject['policy'], facts: string): PolicySubject {
  const [pairs, groups, organization] = JSON.parse(facts) as FactsJson;
  const attributes: Attributes = {};
  for (const [name, value] of pairs) addAttributeValue(attributes, name, value);
  return {
    policy,
    attributes,
    groups: groups.sort(),
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
