/**
 * A route of the identity API as data: method, path, schemas, documentation and a handler that
 * calls a use case and returns what to render. plugin.ts registers the table with Fastify and
 * openapi.ts publishes it, both through the engine the REST APIs share (../rest/route-table.ts,
 * ../openapi.ts), so the served routes and the document cannot drift apart.
 */
import type { Acting } from '../../manage/acting.ts';
import type { RestRouteDeps } from '../deps.ts';
import { invalidArguments, sizeLimitExceeded } from './errors.ts';
import type { ApiResult } from './render.ts';
import type { EntityType, WireAttributes } from './representation.ts';
import type { JsonSchema } from './schemas.ts';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';

export interface ApiCall {
  deps: RestRouteDeps;
  params: Record<string, string>;
  query: Record<string, unknown>;
  body: unknown;
  /** The request path without its query, e.g. for Location headers. */
  path: string;
  /** Who acts, as the application layer's use cases take it (src/manage/acting.ts): the audit `actor` (auth.ts `actorOf`) and the caller's authority (auth.ts `callerAuthority`, read only when a use case needs it). */
  acting(): Promise<Acting>;
}

export interface ApiResponseDoc {
  description: string;
  schema: JsonSchema;
}

export interface ApiRoute {
  method: HttpMethod;
  /** Below `/{prefix}/services`, in Fastify's syntax: `/2.0/users/:id`. */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  tag: 'Users' | 'Organizations' | 'Group membership' | 'Invitations' | 'Legacy (schema 1.2)';
  params?: JsonSchema;
  querystring?: JsonSchema;
  body?: JsonSchema;
  /** The success answers; error answers are common to every route. */
  responses: Record<number, ApiResponseDoc>;
  handle(call: ApiCall): Promise<ApiResult>;
}

/** The id in the path, as stored: lower case. The route schema has already checked it is a UUID. */
export function pathId(call: ApiCall): string {
  return call.params.id!.toLowerCase();
}

/** The query parameters that are the URL-parameter credentials, never attributes. */
const CREDENTIALS = new Set(['username', 'password']);

/**
 * The attributes of a create or update: the query string's (CustomerID takes them there, e.g.
 * `POST organizations/?technicalName=acme&vatnumber=12345`) and the body's, JSON or XML. A name
 * given in both is refused rather than silently merged.
 */
export function requestAttributes(call: ApiCall, type: EntityType): WireAttributes {
  const out: WireAttributes = Object.create(null) as WireAttributes;
  for (const [name, value] of Object.entries(call.query)) {
    if (CREDENTIALS.has(name)) continue;
    out[name] = Array.isArray(value) ? value.map(String) : [String(value)];
  }
  const body = (call.body ?? {}) as { id?: string; type?: string; attributes?: Record<string, string[]> };
  if (body.type !== undefined && body.type !== type) throw invalidArguments(`the body must describe a ${type}`);
  const fromBody = { ...(body.attributes ?? {}), ...(body.id === undefined ? {} : { id: [body.id] }) };
  for (const [name, values] of Object.entries(fromBody)) {
    if (name in out) throw invalidArguments(`${name} is given both in the query and in the body`);
    out[name] = values;
  }
  return out;
}

/**
 * The store limit for a listing. CustomerID has no paging, only `maxResults` (0 = all) and the
 * "Size limit exceeded" error; gatehouse caps every listing at GATEHOUSE_API_MAX_RESULTS so one
 * request cannot make it load the whole store.
 */
export function listing(call: ApiCall): { limit: number; check<T>(results: T[]): T[] } {
  const cap = call.deps.config.apiMaxResults;
  const wanted = (call.query.maxResults as number | undefined) ?? 0;
  if (wanted > cap) throw sizeLimitExceeded(`maxResults may be at most ${cap}`);
  return {
    limit: wanted > 0 ? wanted : cap + 1,
    check(results) {
      if (results.length > cap) throw sizeLimitExceeded(`more than ${cap} results; narrow the filters or set maxResults`);
      return results;
    },
  };
}
