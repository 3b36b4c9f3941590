/**
 * Reading users and organizations from a request's attributes (representation.ts names them):
 * which wire names are built-in fields, which are read-only, which are custom attributes, and
 * what an empty value means — nothing on create, "delete it" on update (CustomerID's PUT rule).
 */
import { checkedAttributeName, checkedAttributes, type AttributeChanges } from '../../identity/attributes.ts';
import type { OrganizationChanges } from '../../identity/organization-changes.ts';
import type { NewOrganization } from '../../identity/organizations.ts';
import type { UserChanges } from '../../identity/user-changes.ts';
import type { NewUser } from '../../identity/users.ts';
import { invalidArguments } from './errors.ts';
import { RESERVED_NAMES, statusFromWire, type WireAttributes } from './representation.ts';

/** The one value of a single-valued attribute; '' when it was sent empty (which clears it). */
function single(attributes: WireAttributes, name: string): string | undefined {
  const values = attributes[name];
  if (values === undefined) return undefined;
  const nonEmpty = values.filter((v) => v !== '');
  if (nonEmpty.length > 1) throw invalidArguments(`${name} takes one value`);
  return nonEmpty[0] ?? '';
}

/** An optional field: undefined = not given (keep), null = given empty (clear). */
function clearable(attributes: WireAttributes, name: string): string | null | undefined {
  const value = single(attributes, name);
  return value === '' ? null : value;
}

/** Two spellings of one field (organizationType / organizationClass) must agree. */
function eitherOf(attributes: WireAttributes, a: string, b: string): string | undefined {
  const first = single(attributes, a);
  const second = single(attributes, b);
  if (first !== undefined && second !== undefined && first !== second) throw invalidArguments(`${a} and ${b} are the same field and must not differ`);
  return first ?? second;
}

function readOnly(attributes: WireAttributes, names: string[], id?: string): void {
  for (const name of names) if (attributes[name] !== undefined) throw invalidArguments(`${name} is read-only`);
  const sentId = single(attributes, 'id');
  if (sentId !== undefined && sentId.toLowerCase() !== id) throw invalidArguments(id === undefined ? 'id is assigned by the server' : 'id does not match the entity');
}

function customChanges(attributes: WireAttributes, builtIn: Set<string>): AttributeChanges {
  const changes: AttributeChanges = {};
  for (const [name, values] of Object.entries(attributes)) {
    if (builtIn.has(name)) continue;
    if (name === 'username') throw invalidArguments('the username attribute is called login');
    if (RESERVED_NAMES.has(name)) throw invalidArguments(`${name} is not an attribute of this entity`);
    checkedAttributeName(name);
    const kept = values.filter((v) => v !== '');
    changes[name] = kept.length === 0 ? null : kept;
  }
  return changes;
}

function booleanFromWire(name: string, value: string): boolean {
  const lower = value.toLowerCase();
  if (lower === 'true') return true;
  if (lower === 'false') return false;
  throw invalidArguments(`${name} must be true or false`);
}

const USER_FIELDS = new Set(['id', 'login', 'password', 'status', 'firstname', 'surname', 'email', 'organization']);

export function newUser(attributes: WireAttributes): NewUser {
  readOnly(attributes, ['cn']);
  const status = single(attributes, 'status');
  const password = single(attributes, 'password');
  const custom = customChanges(attributes, USER_FIELDS);
  return {
    username: single(attributes, 'login') ?? '',
    password: password === '' ? undefined : password,
    status: status === undefined || status === '' ? undefined : statusFromWire(status),
    givenName: single(attributes, 'firstname'),
    familyName: single(attributes, 'surname'),
    email: single(attributes, 'email'),
    organizationId: single(attributes, 'organization'),
    attributes: checkedAttributes(Object.fromEntries(Object.entries(custom).filter((entry): entry is [string, string[]] => entry[1] !== null))),
  };
}

export function userChanges(attributes: WireAttributes, id: string): UserChanges {
  readOnly(attributes, ['cn'], id);
  const status = single(attributes, 'status');
  const custom = customChanges(attributes, USER_FIELDS);
  return {
    username: single(attributes, 'login'),
    password: single(attributes, 'password'),
    status: status === undefined ? undefined : statusFromWire(status),
    givenName: clearable(attributes, 'firstname'),
    familyName: clearable(attributes, 'surname'),
    email: clearable(attributes, 'email'),
    organizationId: clearable(attributes, 'organization'),
    attributes: Object.keys(custom).length === 0 ? undefined : custom,
  };
}

const ORGANIZATION_FIELDS = new Set(['id', 'technicalName', 'friendlyName', 'organizationType', 'organizationClass', 'parentOrganizationId', 'virtual']);

export function newOrganization(attributes: WireAttributes): NewOrganization {
  readOnly(attributes, ['entityName']);
  const virtual = single(attributes, 'virtual');
  const custom = customChanges(attributes, ORGANIZATION_FIELDS);
  return {
    technicalName: single(attributes, 'technicalName'),
    friendlyName: single(attributes, 'friendlyName'),
    type: eitherOf(attributes, 'organizationType', 'organizationClass'),
    parentId: single(attributes, 'parentOrganizationId'),
    virtual: virtual === undefined || virtual === '' ? false : booleanFromWire('virtual', virtual),
    attributes: checkedAttributes(Object.fromEntries(Object.entries(custom).filter((entry): entry is [string, string[]] => entry[1] !== null))),
  };
}

export function organizationChanges(attributes: WireAttributes, id: string): OrganizationChanges {
  readOnly(attributes, ['entityName'], id);
  const virtual = single(attributes, 'virtual');
  const type = eitherOf(attributes, 'organizationType', 'organizationClass');
  const custom = customChanges(attributes, ORGANIZATION_FIELDS);
  return {
    technicalName: single(attributes, 'technicalName'),
    friendlyName: clearable(attributes, 'friendlyName'),
    type: type === '' ? null : type,
    parentId: clearable(attributes, 'parentOrganizationId'),
    virtual: virtual === undefined ? undefined : booleanFromWire('virtual', virtual),
    attributes: Object.keys(custom).length === 0 ? undefined : custom,
  };
}

