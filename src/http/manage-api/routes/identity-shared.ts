/**
 * What the identity resources of the management API (users, sessions, consents, groups,
 * organizations) share: the translation of the identity use cases' errors into problem details
 * with snake_case field names, path lookups that answer 404, and the page arguments.
 */
import type { User } from '../../../domain/user.ts';
import { IdentityError, type IdentityErrorCode } from '../../../identity/errors.ts';
import { isUuid } from '../../../lib/uuid.ts';
import { ManageProblem, notFound } from '../errors.ts';
import { decodeCursor, DEFAULT_LIMIT, MAX_LIMIT } from '../pagination.ts';
import type { JsonSchema, ManageCall } from '../route.ts';

/** docs/identity errors.ts's table, as HTTP statuses. */
const STATUS: Record<IdentityErrorCode, number> = {
  invalid_argument: 400,
  invalid_reference: 400,
  not_found: 404,
  already_exists: 409,
  in_use: 409,
  inconsistent: 409,
};

const TITLE: Record<number, string> = { 400: 'Bad Request', 404: 'Not Found', 409: 'Conflict' };

/** The use cases name fields as the domain does; the wire names them as the request did (snake_case). */
const WIRE_FIELDS: Record<string, string> = {
  username: 'username',
  password: 'password',
  email: 'email',
  status: 'status',
  givenName: 'given_name',
  familyName: 'family_name',
  organizationId: 'organization_id',
  groups: 'groups',
  name: 'name',
  description: 'description',
  technicalName: 'technical_name',
  friendlyName: 'name',
  parentId: 'parent_id',
  type: 'type',
  virtual: 'virtual',
};

/** The problem an identity use case's error is on the wire. */
export function identityProblem(error: IdentityError): ManageProblem {
  const status = STATUS[error.code];
  // Any other field an identity error names is a custom attribute (src/identity/attributes.ts).
  const field = error.field === undefined ? undefined : Object.hasOwn(WIRE_FIELDS, error.field) ? WIRE_FIELDS[error.field]! : `attributes.${error.field}`;
  return new ManageProblem(status, TITLE[status] ?? 'Error', error.message, field === undefined ? {} : { errors: [{ field, message: error.message }] });
}

/** Runs a use case, answering its IdentityError as a problem. */
export async function identityCall<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof IdentityError) throw identityProblem(error);
    throw error;
  }
}

/** The user a path's `:id` names: ids only (never a username, which could look like another user's id). */
export async function pathUser(call: ManageCall, param = 'id'): Promise<User> {
  const id = call.params[param] ?? '';
  const user = isUuid(id) ? await call.deps.store.users.get(id.toLowerCase()) : undefined;
  if (!user) throw notFound(`no user has the id ${JSON.stringify(id.slice(0, 80))}`);
  return user;
}

/** `?limit=` as the schema allowed it (the default when absent). */
export function pageLimit(call: ManageCall): number {
  const limit = Number(call.query.limit ?? DEFAULT_LIMIT);
  return Number.isInteger(limit) && limit >= 1 && limit <= MAX_LIMIT ? limit : DEFAULT_LIMIT;
}

/** `?q=`, trimmed; undefined when blank. */
export function pageSearch(call: ManageCall): string | undefined {
  const q = typeof call.query.q === 'string' ? call.query.q.trim() : '';
  return q === '' ? undefined : q;
}

/** A cursor carrying one string key (a username or group name key). */
export function stringCursor(call: ManageCall): string | undefined {
  return decodeCursor(call.query.cursor, (key): key is string => typeof key === 'string' && key.length <= 1024);
}

export const uuidSchema: JsonSchema = { type: 'string', maxLength: 64, description: 'An id (UUID).' };

/** ISO-8601 text of a stored time (ms). */
export function isoTime(ms: number): string {
  return new Date(ms).toISOString();
}

/** Custom attributes on the wire: `{ name: [values] }`. */
export const attributesSchema: JsonSchema = {
  type: 'object',
  maxProperties: 100,
  additionalProperties: { type: 'array', maxItems: 100, items: { type: 'string', maxLength: 255 } },
  description: 'Custom attributes, each with one or more values.',
};

/** Changes to custom attributes: a list replaces the values, null (or []) deletes the attribute. */
export const attributeChangesSchema: JsonSchema = {
  type: 'object',
  maxProperties: 100,
  additionalProperties: { type: ['array', 'null'], maxItems: 100, items: { type: 'string', maxLength: 255 } },
  description: 'Attributes to replace (a list of values) or delete (null); the others stay.',
};

/** An optional text that null clears. */
export const nullableText: JsonSchema = { type: ['string', 'null'], maxLength: 255 };
export const text: JsonSchema = { type: 'string', maxLength: 255 };
