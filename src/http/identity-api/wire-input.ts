/**
 * Reading users and organizations from a request's attributes (wire-names.ts names them):
 * which wire names are built-in fields, which are read-only, which are custom attributes, and
 * what an empty value means — nothing on create, "delete it" on update (CustomerID's PUT rule).
 */
import { checkedAttributeName, checkedAttributes, type AttributeChanges } from '../../identity/attributes.ts';
import type { OrganizationChanges } from '../../identity/organization-changes.ts';
import type { NewOrganization } from '../../identity/organizations.ts';
import type { UserChanges } from '../../identity/user-changes.ts';
import type { NewUser } from '../../identity/users.ts';
import { invalidArguments } from './errors.ts';
import { statusFromWire, type WireAttributes } from './representation.ts';
import {
  ORGANIZATION_ENTITY_NAME,
  ORGANIZATION_INPUT_NAMES,
  ORGANIZATION_TYPE_ALIAS,
  ORGANIZATION_WIRE_NAMES as ORGANIZATION,
  RESERVED_NAMES,
  USER_CN,
  USER_INPUT_NAMES,
  USER_WIRE_NAMES as USER,
} from './wire-names.ts';

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
  const sentId = single(attributes, USER.id);
  if (sentId !== undefined && sentId.toLowerCase() !== id) throw invalidArguments(id === undefined ? 'id is assigned by the server' : 'id does not match the entity');
}

function customChanges(attributes: WireAttributes, builtIn: ReadonlySet<string>): AttributeChanges {
  const changes: AttributeChanges = {};
  for (const [name, values] of Object.entries(attributes)) {
    if (builtIn.has(name)) continue;
    // The field's own name, which is also the URL-parameter credential's: a likely mistake.
    if (name === 'username') throw invalidArguments(`the username attribute is called ${USER.username}`);
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

/** A boolean field that may be left out (undefined; also when sent empty). */
function optionalBoolean(attributes: WireAttributes, name: string): boolean | undefined {
  const value = single(attributes, name);
  return value === undefined || value === '' ? undefined : booleanFromWire(name, value);
}

export function newUser(attributes: WireAttributes): NewUser {
  readOnly(attributes, [USER_CN]);
  const status = single(attributes, USER.status);
  const password = single(attributes, USER.password);
  const custom = customChanges(attributes, USER_INPUT_NAMES);
  return {
    username: single(attributes, USER.username) ?? '',
    password: password === '' ? undefined : password,
    status: status === undefined || status === '' ? undefined : statusFromWire(status),
    givenName: single(attributes, USER.givenName),
    familyName: single(attributes, USER.familyName),
    email: single(attributes, USER.email),
    emailVerified: optionalBoolean(attributes, USER.emailVerified),
    organizationId: single(attributes, USER.organizationId),
    attributes: checkedAttributes(Object.fromEntries(Object.entries(custom).filter((entry): entry is [string, string[]] => entry[1] !== null))),
  };
}

export function userChanges(attributes: WireAttributes, id: string): UserChanges {
  readOnly(attributes, [USER_CN], id);
  const status = single(attributes, USER.status);
  const custom = customChanges(attributes, USER_INPUT_NAMES);
  return {
    username: single(attributes, USER.username),
    password: single(attributes, USER.password),
    status: status === undefined ? undefined : statusFromWire(status),
    givenName: clearable(attributes, USER.givenName),
    familyName: clearable(attributes, USER.familyName),
    email: clearable(attributes, USER.email),
    emailVerified: optionalBoolean(attributes, USER.emailVerified),
    organizationId: clearable(attributes, USER.organizationId),
    attributes: Object.keys(custom).length === 0 ? undefined : custom,
  };
}

export function newOrganization(attributes: WireAttributes): NewOrganization {
  readOnly(attributes, [ORGANIZATION_ENTITY_NAME]);
  const virtual = single(attributes, ORGANIZATION.virtual);
  const custom = customChanges(attributes, ORGANIZATION_INPUT_NAMES);
  return {
    technicalName: single(attributes, ORGANIZATION.technicalName),
    friendlyName: single(attributes, ORGANIZATION.friendlyName),
    type: eitherOf(attributes, ORGANIZATION.type, ORGANIZATION_TYPE_ALIAS),
    parentId: single(attributes, ORGANIZATION.parentId),
    virtual: virtual === undefined || virtual === '' ? false : booleanFromWire(ORGANIZATION.virtual, virtual),
    attributes: checkedAttributes(Object.fromEntries(Object.entries(custom).filter((entry): entry is [string, string[]] => entry[1] !== null))),
  };
}

export function organizationChanges(attributes: WireAttributes, id: string): OrganizationChanges {
  readOnly(attributes, [ORGANIZATION_ENTITY_NAME], id);
  const virtual = single(attributes, ORGANIZATION.virtual);
  const type = eitherOf(attributes, ORGANIZATION.type, ORGANIZATION_TYPE_ALIAS);
  const custom = customChanges(attributes, ORGANIZATION_INPUT_NAMES);
  return {
    technicalName: single(attributes, ORGANIZATION.technicalName),
    friendlyName: clearable(attributes, ORGANIZATION.friendlyName),
    type: type === '' ? null : type,
    parentId: clearable(attributes, ORGANIZATION.parentId),
    virtual: virtual === undefined ? undefined : booleanFromWire(ORGANIZATION.virtual, virtual),
    attributes: Object.keys(custom).length === 0 ? undefined : custom,
  };
}

