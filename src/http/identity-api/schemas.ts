/**
 * JSON Schemas of the identity API's requests and JSON responses. Fastify validates requests
 * with them (Ajv, coerceTypes "array": a single query value becomes a one-element list where a
 * list is declared) and serializes responses through them, so a response holds only the
 * declared members; openapi.ts publishes the same schemas.
 */
export type JsonSchema = Record<string, unknown>;

/** Lower- or upper-case hex UUID, nothing else (ajv-formats' `uuid` would also take `urn:uuid:`). */
export const UUID_PATTERN = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';

const uuid: JsonSchema = { type: 'string', pattern: UUID_PATTERN };

/** `additionalProperties: false` would make Fastify's Ajv drop unknown members silently; this refuses them. */
export const NOTHING_ELSE: JsonSchema = { not: {} };

export const idParams: JsonSchema = { type: 'object', required: ['id'], properties: { id: { ...uuid, description: 'The entity id (a UUID).' } }, additionalProperties: NOTHING_ELSE };

export const membershipParams: JsonSchema = {
  type: 'object',
  required: ['id', 'group'],
  properties: {
    id: { ...uuid, description: 'The user id (a UUID).' },
    group: { type: 'string', minLength: 1, maxLength: 255, description: 'The group name (compared case-insensitively).' },
  },
  additionalProperties: NOTHING_ELSE,
};

const filterValue: JsonSchema = { type: 'string', maxLength: 1024 };

const exactMatch: JsonSchema = { type: 'boolean', default: false, description: 'true: filter values must match exactly (case-sensitively); false: prefix match, case-insensitive.' };
const maxResults: JsonSchema = { type: 'integer', minimum: 0, default: 0, description: 'At most this many results; 0 means all. Above GATEHOUSE_API_MAX_RESULTS (default 10000): "Size limit exceeded".' };
const recursive: JsonSchema = { type: 'boolean', default: false, description: 'Include the users of every sub-organization.' };

/** `?anyAttribute=value&exactMatch=…&maxResults=…`: every other parameter filters by an attribute. */
export function listQuery(withRecursive: boolean): JsonSchema {
  return {
    type: 'object',
    properties: { exactMatch, maxResults, ...(withRecursive ? { recursive } : {}) },
    additionalProperties: filterValue,
  };
}

const attributeValues: JsonSchema = { type: 'array', maxItems: 100, items: { type: 'string', maxLength: 1024 } };

/** Query parameters of a create or update: attributes, each one or more values (`?vatnumber=12345`). */
export const attributeQuery: JsonSchema = { type: 'object', additionalProperties: attributeValues };

/** The body of a create or update, in JSON or as the equivalent XML entity: `{"attributes": {name: [values]}}`. */
export function entityBody(type: 'user' | 'organization' | 'invitation'): JsonSchema {
  return {
    // null: no body at all, the attributes are all in the query string.
    type: ['object', 'null'],
    properties: {
      id: { ...uuid, description: 'Optional; when given it must be the entity’s own id.' },
      type: { type: 'string', enum: [type] },
      attributes: { type: 'object', maxProperties: 100, additionalProperties: attributeValues, propertyNames: { maxLength: 64 } },
    },
    additionalProperties: NOTHING_ELSE,
  };
}

export const entityResponse: JsonSchema = {
  type: 'object',
  required: ['id', 'type', 'attributes'],
  properties: {
    id: uuid,
    type: { type: 'string', enum: ['user', 'organization', 'invitation'] },
    attributes: { type: 'object', additionalProperties: { type: 'array', items: { type: 'string' } } },
  },
};

export function collectionResponse(key: 'users' | 'organizations' | 'groups' | 'invitations', itemDescription: string): JsonSchema {
  return { type: 'object', required: [key], properties: { [key]: { type: 'array', items: { type: 'string', description: itemDescription } } } };
}

export const errorResponse: JsonSchema = {
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message'],
      properties: {
        code: { type: 'string', description: 'CustomerID error code, e.g. "Invalid arguments", "Entity not found".' },
        message: { type: 'string' },
      },
    },
  },
};
