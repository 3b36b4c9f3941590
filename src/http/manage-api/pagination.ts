/**
 * Keyset pagination for every list of the management API: `?limit=` (1..MAX_LIMIT, default
 * DEFAULT_LIMIT) and `?cursor=`, answered as `{ items, next_cursor }`. A cursor is the last item's
 * sort key (base64url JSON), never an offset, so a page does not shift when rows are inserted or
 * deleted before it while someone pages (stable under concurrent inserts).
 */
import { isLookupKey } from '../../oauth/lookup-key.ts';
import { invalidField } from './errors.ts';
import type { JsonSchema } from './route.ts';

export const DEFAULT_LIMIT = 50;
export const MAX_LIMIT = 200;
const MAX_CURSOR_LENGTH = 1024;

/** The query members every list accepts; merge into a route's querystring schema. */
export const pageQueryProperties: Record<string, JsonSchema> = {
  limit: { type: 'integer', minimum: 1, maximum: MAX_LIMIT, default: DEFAULT_LIMIT, description: `Items per page (1–${MAX_LIMIT}).` },
  cursor: { type: 'string', minLength: 1, maxLength: MAX_CURSOR_LENGTH, pattern: '^[A-Za-z0-9_-]+$', description: 'The `next_cursor` of the previous page.' },
};

/** The response schema of a list of `item`. */
export function pageSchema(item: JsonSchema): JsonSchema {
  return {
    type: 'object',
    required: ['items', 'next_cursor'],
    properties: { items: { type: 'array', items: item }, next_cursor: { type: ['string', 'null'], description: 'Pass as `cursor` for the next page; null on the last page.' } },
  };
}

export function encodeCursor(key: unknown): string {
  return Buffer.from(JSON.stringify(key), 'utf8').toString('base64url');
}

/**
 * The sort key a cursor carries, checked by `valid` (the list's own key shape); a cursor that is
 * not one of ours is a 400 naming `cursor`, never a 500.
 */
export function decodeCursor<K>(cursor: unknown, valid: (key: unknown) => key is K): K | undefined {
  if (cursor === undefined) return undefined;
  let key: unknown;
  try {
    key = JSON.parse(Buffer.from(String(cursor), 'base64url').toString('utf8'));
  } catch {
    throw invalidField('cursor', 'is not a cursor this list gave out');
  }
  if (!valid(key)) throw invalidField('cursor', 'is not a cursor this list gave out');
  return key;
}

/**
 * A page from `rows`, fetched as `limit + 1` so the extra row tells whether a next page exists;
 * the cursor is the key of the last row shown.
 */
export function toPage<R, I>(rows: readonly R[], limit: number, keyOf: (row: R) => unknown, view: (row: R) => I): { items: I[]; next_cursor: string | null } {
  const shown = rows.slice(0, limit);
  const more = rows.length > limit;
  return { items: shown.map(view), next_cursor: more && shown.length > 0 ? encodeCursor(keyOf(shown[shown.length - 1]!)) : null };
}

/** Most characters of a `q` search. */
export const MAX_SEARCH_LENGTH = 200;

/** The querystring schema of a list: `limit`, `cursor`, and `q` when the list is searchable; nothing else. */
export function listQuerySchema(search: string | undefined, extra: Record<string, JsonSchema> = {}): JsonSchema {
  return {
    type: 'object',
    additionalProperties: false,
    properties: {
      ...pageQueryProperties,
      ...(search ? { q: { type: 'string', maxLength: MAX_SEARCH_LENGTH, description: `Case-insensitive substring of ${search}.` } } : {}),
      ...extra,
    },
  };
}

/** A cursor whose key is one string (a name or id), as most lists sort; never a control character (PostgreSQL refuses NUL in text). */
export const isStringKey = (key: unknown): key is string => typeof key === 'string' && key.length > 0 && isLookupKey(key, 1024);

/** The page request of a list call sorted by one string key: `after`, `limit + 1` (to see whether more follow), `q`. */
export function stringKeyPage(query: Record<string, unknown>): { after: string | undefined; limit: number; fetch: number; q: string | undefined } {
  const limit = (query.limit as number | undefined) ?? DEFAULT_LIMIT;
  const q = typeof query.q === 'string' && query.q !== '' ? query.q : undefined;
  return { after: decodeCursor(query.cursor, isStringKey), limit, fetch: limit + 1, q };
}
