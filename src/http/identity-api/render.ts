/**
 * Renders the identity API's answers — an entity, a collection of ids, an error — as JSON or as
 * CustomerID's XML, whichever the client prefers (negotiate.ts).
 *
 * Two dialects: the versioned API (`/services/2.0/`, `/2.1/`) answers in the 2.x schema with the
 * `http://schema.ubisecure.com/customerid/api` namespace and `inResponseTo`/`method` attributes;
 * the legacy API (schema 1.2) answers `<idlist>` and entity elements led by their `<Id>`. Legacy
 * routes default to XML, since the 1.2 API never had anything else; the 2.x routes default to JSON.
 *
 * JSON shapes: entity `{"id","type","attributes":{name:[values]}}`; collection `{"users":[ids]}`
 * (or organizations / groups); error `{"error":{"code","message"}}`.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ApiError } from './errors.ts';
import { preferredFormat, type Format } from './negotiate.ts';
import type { Entity } from './representation.ts';
import { collectionXml, CUSTOMERID_NAMESPACE, entityXml, errorXml } from './xml.ts';

export type Collection = 'Users' | 'Organizations' | 'Groups' | 'Invitations';

export type ApiBody = { kind: 'entity'; entity: Entity } | { kind: 'collection'; collection: Collection; ids: string[] };

export interface ApiResult {
  status?: number;
  /** For 201 Created: the new entity's path. */
  location?: string;
  body: ApiBody;
}

export type Dialect = '2' | '1.2';

const ENTITY_ELEMENTS = { user: 'User', organization: 'Organization', invitation: 'Invitation' } as const;
const LEGACY_ENTITY_ELEMENTS = { user: 'user', organization: 'organization', invitation: 'invitation' } as const;
const JSON_COLLECTION_KEYS = { Users: 'users', Organizations: 'organizations', Groups: 'groups', Invitations: 'invitations' } as const;

/** The request path, never its query: the query may hold the API password. */
export function requestPath(request: FastifyRequest): string {
  return request.url.split('?')[0]!;
}

export function dialectOf(request: FastifyRequest): Dialect {
  return /\/services\/2\.[01]\//.test(requestPath(request)) ? '2' : '1.2';
}

export function formatOf(request: FastifyRequest): Format {
  // Legacy clients only know XML; the 2.x API and the OpenAPI document default to JSON.
  const legacy = dialectOf(request) === '1.2' && !requestPath(request).endsWith('/openapi.json');
  return preferredFormat(request.headers.accept, legacy ? 'xml' : 'json');
}

export function jsonBody(body: ApiBody): Record<string, unknown> {
  if (body.kind === 'collection') return { [JSON_COLLECTION_KEYS[body.collection]]: body.ids };
  const { entity } = body;
  return { id: entity.id, type: entity.type, attributes: Object.fromEntries(entity.attributes) };
}

function xmlBody(body: ApiBody, request: FastifyRequest): string {
  const dialect = dialectOf(request);
  if (dialect === '1.2') {
    if (body.kind === 'collection') return collectionXml('idlist', {}, body.ids);
    return entityXml(LEGACY_ENTITY_ELEMENTS[body.entity.type], {}, body.entity.attributes, body.entity.id);
  }
  const common = { xmlns: CUSTOMERID_NAMESPACE, inResponseTo: requestPath(request), method: request.method };
  if (body.kind === 'collection') return collectionXml(body.collection, common, body.ids);
  const { entity } = body;
  return entityXml(ENTITY_ELEMENTS[entity.type], { ...common, type: entity.type }, [['id', [entity.id]], ...entity.attributes]);
}

function headers(reply: FastifyReply, format: Format): FastifyReply {
  // Identity data is personal data: never cached by anything between (RFC 9111 §5.2.2.5).
  return reply
    .header('cache-control', 'no-store')
    .header('vary', 'Accept')
    .type(format === 'xml' ? 'application/xml; charset=utf-8' : 'application/json; charset=utf-8');
}

export function sendResult(reply: FastifyReply, request: FastifyRequest, result: ApiResult): FastifyReply {
  const format = formatOf(request);
  reply.code(result.status ?? 200);
  if (result.location) reply.header('location', result.location);
  headers(reply, format);
  return reply.send(format === 'xml' ? xmlBody(result.body, request) : jsonBody(result.body));
}

export function sendError(reply: FastifyReply, request: FastifyRequest, error: ApiError): FastifyReply {
  const format = formatOf(request);
  reply.code(error.status);
  if (error.challenges.length > 0) reply.header('www-authenticate', error.challenges);
  if (error.allow) reply.header('allow', error.allow);
  if (error.retryAfter !== undefined) reply.header('retry-after', String(error.retryAfter));
  else if (error.status === 503) reply.header('retry-after', '5');
  headers(reply, format);
  return reply.send(format === 'xml' ? errorXml(error.code, error.message) : { error: { code: error.code, message: error.message } });
}
