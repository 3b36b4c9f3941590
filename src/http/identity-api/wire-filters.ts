/**
 * Listing filters: CustomerID lists filter by any attribute given as a query parameter
 * (`users/?email=ada@&status=1`), all of which must match.
 */
import { checkedAttributeName } from '../../identity/attributes.ts';
import { invalidArguments } from './errors.ts';
import { RESERVED_NAMES, statusFromWire } from './representation.ts';

const USER_FILTERS: Record<string, string> = { id: 'id', login: 'username', firstname: 'givenName', surname: 'familyName', email: 'email', organization: 'organizationId', status: 'status' };
const ORGANIZATION_FILTERS: Record<string, string> = {
  id: 'id',
  technicalName: 'technicalName',
  friendlyName: 'friendlyName',
  organizationType: 'organizationType',
  organizationClass: 'organizationType',
  parentOrganizationId: 'parentOrganizationId',
};

/**
 * Listing filters (`?email=ada@&status=1`) in the store's names. Each is a plain value, compared
 * exactly or as a prefix by the store with LIKE wildcards escaped, so `%`, `_` and quotes match
 * literally. `controls` are the listing's own parameters, which are not filters.
 */
function filters(query: Record<string, unknown>, known: Record<string, string>, controls: Set<string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(query)) {
    if (controls.has(name) || value === undefined) continue;
    if (typeof value !== 'string') throw invalidArguments(`${name} may be given once`);
    // Own names only: `__proto__` or `constructor` must not find Object.prototype's.
    const storeName = Object.hasOwn(known, name) ? known[name] : undefined;
    if (storeName !== undefined) {
      if (storeName in out) throw invalidArguments(`${name} is given twice`);
      out[storeName] = name === 'status' ? statusFromWire(value) : value;
      continue;
    }
    if (RESERVED_NAMES.has(name)) throw invalidArguments(`cannot filter by ${name}`);
    out[checkedAttributeName(name)] = value;
  }
  return out;
}

/** The listing parameters that are not filters, and the URL-parameter credentials. */
const USER_LIST_CONTROLS = new Set(['exactMatch', 'maxResults', 'recursive', 'username', 'password']);
const ORGANIZATION_LIST_CONTROLS = new Set(['exactMatch', 'maxResults', 'username', 'password']);

export function userFilters(query: Record<string, unknown>): Record<string, string> {
  return filters(query, USER_FILTERS, USER_LIST_CONTROLS);
}

export function organizationFilters(query: Record<string, unknown>): Record<string, string> {
  return filters(query, ORGANIZATION_FILTERS, ORGANIZATION_LIST_CONTROLS);
}
