/**
 * Listing filters: CustomerID lists filter by any attribute given as a query parameter
 * (`users/?email=ada@&status=1`), all of which must match.
 */
import { checkedAttributeName } from '../../identity/attributes.ts';
import { invalidArguments } from './errors.ts';
import { statusFromWire } from './representation.ts';
import { ORGANIZATION_FILTERS, ORGANIZATION_LIST_CONTROLS, RESERVED_NAMES, USER_FILTERS, USER_LIST_CONTROLS, USER_WIRE_NAMES } from './wire-names.ts';

/**
 * Listing filters (`?email=ada@&status=1`) in the store's names. Each is a plain value, compared
 * exactly or as a prefix by the store with LIKE wildcards escaped, so `%`, `_` and quotes match
 * literally. `controls` are the listing's own parameters, which are not filters.
 */
function filters(query: Record<string, unknown>, known: Readonly<Record<string, string>>, controls: ReadonlySet<string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(query)) {
    if (controls.has(name) || value === undefined) continue;
    if (typeof value !== 'string') throw invalidArguments(`${name} may be given once`);
    // Own names only: `__proto__` or `constructor` must not find Object.prototype's.
    const storeName = Object.hasOwn(known, name) ? known[name] : undefined;
    if (storeName !== undefined) {
      if (storeName in out) throw invalidArguments(`${name} is given twice`);
      if (name === USER_WIRE_NAMES.emailVerified && value !== 'true' && value !== 'false') throw invalidArguments(`${name} must be true or false`);
      out[storeName] = name === USER_WIRE_NAMES.status ? statusFromWire(value) : value;
      continue;
    }
    if (RESERVED_NAMES.has(name)) throw invalidArguments(`cannot filter by ${name}`);
    out[checkedAttributeName(name)] = value;
  }
  return out;
}

export function userFilters(query: Record<string, unknown>): Record<string, string> {
  return filters(query, USER_FILTERS, USER_LIST_CONTROLS);
}

export function organizationFilters(query: Record<string, unknown>): Record<string, string> {
  return filters(query, ORGANIZATION_FILTERS, ORGANIZATION_LIST_CONTROLS);
}
