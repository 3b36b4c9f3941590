/**
 * The domain as the identity API shows it. On the wire a user or an organization is a list of
 * named, multi-valued attributes (CustomerID's `<Attribute name><Value>`); this module turns
 * domain objects into those lists, which render.ts writes as JSON or XML. The other direction
 * is wire-input.ts (request attributes → use-case input) and wire-filters.ts (listing filters).
 *
 * Built-in names follow the product: users `id firstname surname cn login email organization
 * status` (Lab 2.3 "Using the CustomerID REST API"); organizations `technicalName friendlyName
 * organizationType/organizationClass parentOrganizationId virtual entityName` (REST API 2.0).
 * Every other name is one of the installation's custom attributes.
 */
import type { Organization } from '../../domain/organization.ts';
import { USER_STATUSES, type User, type UserStatus } from '../../domain/user.ts';

export type EntityType = 'user' | 'organization';

/** One user or organization as the API shows it: its id and its attributes in a stable order. */
export interface Entity {
  type: EntityType;
  id: string;
  attributes: [string, string[]][];
}

/** Wire attributes as received: name → values (query parameters, a JSON body or an XML body). */
export type WireAttributes = Record<string, string[]>;

/**
 * Names that are never custom attributes: the built-in ones, the store's own spellings of them
 * (a filter on `givenName` would otherwise hit the column), the credentials of the URL-parameter
 * method and the listing controls.
 */
export const RESERVED_NAMES = new Set([
  'id', 'type', 'username', 'password', 'exactMatch', 'maxResults', 'recursive',
  'login', 'firstname', 'surname', 'cn', 'email', 'organization', 'status', 'givenName', 'familyName', 'organizationId',
  'technicalName', 'friendlyName', 'entityName', 'organizationType', 'organizationClass', 'parentOrganizationId', 'parentId', 'virtual',
]);

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
        ['firstname', user.givenName],
        ['surname', user.familyName],
        ['cn', cn],
        ['login', user.username],
        ['email', user.email],
        ['organization', user.organizationId],
        ['status', user.status],
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
        ['technicalName', organization.technicalName],
        ['friendlyName', organization.friendlyName],
        ['entityName', entityName],
        // The product's list filter says organizationType and its entities say organizationClass.
        ['organizationType', organization.type],
        ['organizationClass', organization.type],
        ['parentOrganizationId', organization.parentId],
        ['virtual', String(organization.virtual)],
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
