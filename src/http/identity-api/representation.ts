/**
 * The domain as the identity API shows it. On the wire a user or an organization is a list of
 * named, multi-valued attributes (CustomerID's `<Attribute name><Value>`); this module turns
 * domain objects into those lists, which render.ts writes as JSON or XML. The other direction
 * is wire-input.ts (request attributes → use-case input) and wire-filters.ts (listing filters).
 * The built-in names are wire-names.ts's; every other name is one of the installation's custom
 * attributes.
 */
import type { Organization } from '../../domain/organization.ts';
import { USER_STATUSES, type User, type UserStatus } from '../../domain/user.ts';
import { ORGANIZATION_ENTITY_NAME, ORGANIZATION_TYPE_ALIAS, ORGANIZATION_WIRE_NAMES as ORGANIZATION, USER_CN, USER_WIRE_NAMES as USER } from './wire-names.ts';

export type EntityType = 'user' | 'organization' | 'invitation';

/** One user or organization as the API shows it: its id and its attributes in a stable order. */
export interface Entity {
  type: EntityType;
  id: string;
  attributes: [string, string[]][];
}

/** Wire attributes as received: name → values (query parameters, a JSON body or an XML body). */
export type WireAttributes = Record<string, string[]>;

function customAttributes(attributes: User['attributes']): [string, string[]][] {
  return Object.keys(attributes)
    .sort()
    .map((name) => [name, attributes[name]!]);
}

function present(pairs: [string, string | undefined][]): [string, string[]][] {
  return pairs.filter((pair): pair is [string, string] => pair[1] !== undefined && pair[1] !== '').map(([name, value]) => [name, [value]]);
}

export function userEntity(user: User): Entity {
  const cn = [user.givenName, user.familyName].filter((part) => part !== undefined).join(' ');
  return {
    type: 'user',
    id: user.id,
    attributes: [
      ...present([
        [USER.givenName, user.givenName],
        [USER.familyName, user.familyName],
        [USER_CN, cn],
        [USER.username, user.username],
        [USER.email, user.email],
        [USER.emailVerified, user.email === undefined ? undefined : String(user.emailVerified)],
        [USER.organizationId, user.organizationId],
        [USER.status, user.status],
      ]),
      ...customAttributes(user.attributes),
    ],
  };
}

/** `entityName` is the path of technical names from the root (`Org/Dept`), computed by the caller. */
export function organizationEntity(organization: Organization, entityName: string): Entity {
  return {
    type: 'organization',
    id: organization.id,
    attributes: [
      ...present([
        [ORGANIZATION.technicalName, organization.technicalName],
        [ORGANIZATION.friendlyName, organization.friendlyName],
        [ORGANIZATION_ENTITY_NAME, entityName],
        [ORGANIZATION.type, organization.type],
        [ORGANIZATION_TYPE_ALIAS, organization.type],
        [ORGANIZATION.parentId, organization.parentId],
        [ORGANIZATION.virtual, String(organization.virtual)],
      ]),
      ...customAttributes(organization.attributes),
    ],
  };
}

/** Status by technical name (any case) or by CustomerID's code: 0 pending, 1 enabled, 2 disabled, 3 locked. */
export function statusFromWire(value: string): UserStatus {
  const byCode = /^[0-3]$/.test(value) ? USER_STATUSES[Number(value)] : undefined;
  return (byCode ?? value.toLowerCase()) as UserStatus;
}
