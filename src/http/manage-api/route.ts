/**
 * A route of the management API (`/manage/api/v1`) as data: method, path, schemas, documentation,
 * the role it needs and a handler that calls a use case. The plugin registers the table
 * (routes/index.ts) with Fastify and openapi.ts publishes the same table, both through the engine
 * the REST APIs share (../rest/route-table.ts, ../openapi.ts), so the served routes and the
 * document cannot drift apart. docs/management-api.md.
 */
import type { Acting } from '../../manage/acting.ts';
import type { RestRouteDeps } from '../deps.ts';

export type ManageMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/**
 * A JSON Schema (draft-07 keywords, as Ajv reads them; plugin.ts). `format` is not validated
 * (validateFormats: false): check such values in the handler or the use case, which names the field.
 */
export type JsonSchema = Record<string, unknown>;

/**
 * Who calls: an administrator (may change things), a reader (GATEHOUSE_ADMIN_READONLY_GROUP: sees
 * everything, changes nothing). `userId` is absent for a client's own token (client_credentials).
 */
export interface ManageCaller {
  role: 'admin' | 'reader';
  userId?: string;
  clientId: string;
}

export interface ManageCall {
  deps: RestRouteDeps;
  params: Record<string, string>;
  query: Record<string, unknown>;
  body: unknown;
  caller: ManageCaller;
  /** Who acts, as the application layer's use cases take it (src/manage/acting.ts): the audit `actor` (`via: 'manage-api'`, auth.ts `actorOf`) and the caller's authority (an administrator when `caller.role` is `admin`). */
  acting: Acting;
}

export interface ManageResult {
  /** 200 unless said; 204 sends no body. */
  status?: number;
  body?: unknown;
  headers?: Record<string, string>;
}

export interface ManageResponseDoc {
  description: string;
  schema?: JsonSchema;
}

export interface ManageRoute {
  method: ManageMethod;
  /** Below `/manage/api/v1`, in Fastify's syntax: `/clients/:id`. */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  /** The OpenAPI tag: the resource, e.g. `Clients`. */
  tag: string;
  /** `read`: any manager; `write`: administrators only. GET is read, everything else write. */
  access: 'read' | 'write';
  params?: JsonSchema;
  querystring?: JsonSchema;
  body?: JsonSchema;
  /** The body may be left out altogether (then it is validated and handled as `{}`). */
  bodyOptional?: boolean;
  /** The success answers; error answers (problem details) are common to every route. */
  responses: Record<number, ManageResponseDoc>;
  handle(call: ManageCall): Promise<ManageResult>;
}
