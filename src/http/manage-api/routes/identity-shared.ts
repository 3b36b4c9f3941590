/**
 * What the identity resources of the management API (users, sessions, consents, groups,
 * organizations) share: path lookups that answer 404 and the page arguments. Their use cases'
 * errors are answered by the one mapping in ../errors.ts.
 */
import type { User } from '../../../domain/user.ts';
import { isUuid } from '../../../lib/uuid.ts';
import { notFound } from '../errors.ts';
import { decodeCursor, DEFAULT_LIMIT, MAX_LIMIT } from '../pagination.ts';
import type { JsonSchema, ManageCall } from '../route.ts';

/** The user a path's `:id` names: ids only (never a username, which could look like another user's id). */
export async function pathUser(call: ManageCall, param = 'id'): Promise<User> {
  const id = call.params[param] ?? '';
  const user = isUuid(id) ? await call.deps.admin.users.byId(id.toLowerCase()) : undefined;
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
