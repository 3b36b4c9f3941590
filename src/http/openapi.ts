/**
 * The OpenAPI 3.1 document of both REST APIs, generated from the route table that
 * rest/route-table.ts registers (the same schemas Fastify validates with), so it lists exactly the
 * routes served: paths in OpenAPI's template syntax, schemas as JSON Schema 2020-12, the
 * parameters a route's own validation schemas declare, and which error answers a route can give.
 * Each API gives what is its own (identity-api/openapi.ts, manage-api/openapi.ts): its media
 * types, error shapes, security schemes and tags.
 */

export type JsonSchema = Record<string, unknown>;

/** A route as its document needs it: the same schemas Fastify validates the request with. */
export interface DocumentedRoute {
  method: string;
  /** In Fastify's syntax: `/clients/:id`. */
  path: string;
  params?: JsonSchema;
  querystring?: JsonSchema;
  body?: JsonSchema;
}

/** `/clients/:id` below `base` → `{base}/clients/{id}` (OpenAPI 3.1 §4.8.8 path templating). */
export function openApiPath(base: string, path: string): string {
  return `${base}${path.replace(/:([A-Za-z_]+)/g, '{$1}')}`;
}

const isNothing = (schema: object): boolean => {
  const keys = Object.keys(schema);
  const not = (schema as { not?: unknown }).not;
  return keys.length === 1 && keys[0] === 'not' && typeof not === 'object' && not !== null && !Array.isArray(not) && Object.keys(not).length === 0;
};

/**
 * A validation schema (draft-07 keywords, as Ajv reads them) as OpenAPI 3.1 shows it: a copy, in
 * JSON Schema 2020-12, where `{not: {}}` (which draft-07 needs for "no value") is spelled `false`.
 */
export function openApiSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(openApiSchema);
  if (typeof schema !== 'object' || schema === null) return schema;
  if (isNothing(schema)) return false;
  return Object.fromEntries(Object.entries(schema).map(([key, value]) => [key, openApiSchema(value)]));
}

/** The path and query parameters the route's schemas declare, each with its description (OpenAPI 3.1 §4.8.12). */
export function declaredParameters(route: DocumentedRoute): unknown[] {
  const out: unknown[] = [];
  const params = route.params as { properties?: Record<string, JsonSchema> } | undefined;
  for (const [name, schema] of Object.entries(params?.properties ?? {})) {
    const { description, ...rest } = schema;
    out.push({ name, in: 'path', required: true, ...(description ? { description } : {}), schema: openApiSchema(rest) });
  }
  const query = route.querystring as { properties?: Record<string, JsonSchema>; required?: string[] } | undefined;
  for (const [name, schema] of Object.entries(query?.properties ?? {})) {
    const { description, ...rest } = schema;
    out.push({ name, in: 'query', required: query?.required?.includes(name) ?? false, ...(description ? { description } : {}), schema: openApiSchema(rest) });
  }
  return out;
}

/** Each API's names for its shared error answers (`#/components/responses/…`). */
export interface ErrorAnswerNames {
  badRequest: string;
  unauthenticated: string;
  forbidden: string;
  notFound: string;
  conflict: string;
  tooLarge: string;
  unsupportedMediaType: string;
  /** Listed on every route when the API documents it. */
  serverError?: string;
}

/** The error answers a route can give, by what it takes and what it may do. */
export function errorAnswers(route: DocumentedRoute, names: ErrorAnswerNames): Record<string, unknown> {
  const ref = (name: string) => ({ $ref: `#/components/responses/${name}` });
  const out: Record<string, unknown> = { 400: ref(names.badRequest), 401: ref(names.unauthenticated), 403: ref(names.forbidden) };
  if (route.params) out[404] = ref(names.notFound);
  if (route.method !== 'GET') out[409] = ref(names.conflict);
  if (route.body) {
    out[413] = ref(names.tooLarge);
    out[415] = ref(names.unsupportedMediaType);
  }
  if (names.serverError !== undefined) out[500] = ref(names.serverError);
  return out;
}

/** A route with its documentation, as its operation shows it. */
export interface OperationRoute extends DocumentedRoute {
  operationId: string;
  summary: string;
  description?: string;
  tag: string;
  /** The body may be left out altogether (then it is validated and handled as `{}`). */
  bodyOptional?: boolean;
  /** The success answers, by status; the error answers are common to every route of an API. */
  responses: Record<number, { description: string; schema?: JsonSchema }>;
}

/** Routes served below one base path (`/customerid-rest/services`), and the name that tells a repeated operationId apart. */
export interface DocumentedScope<R extends OperationRoute> {
  base: string;
  name: string;
  routes: readonly R[];
}

/** What one API's document says beyond its routes. */
export interface ApiDocumentSpec<R extends OperationRoute> {
  info: { title: string; version: string; description: string };
  /** Where the document itself is served (it lists itself, without security), and its operationId. */
  document: { path: string; operationId: string; description: string };
  /** The operation's description; default the route's. */
  description?(route: R): string | undefined;
  /** The operation's parameters; default those the route's schemas declare. */
  parameters?(route: R): unknown[];
  /** Whether a route's body is required; default unless the route says `bodyOptional`. */
  bodyRequired?(route: R): boolean;
  /** Other media types of bodies and success answers, listed after JSON (`application/xml`). */
  otherMedia?: { request: Record<string, unknown>; response: Record<string, unknown> };
  /** The tags, in order; default those of the routes, in order of appearance. `Documentation` follows. */
  tags?: string[];
  security: Record<string, string[]>[];
  securitySchemes: Record<string, unknown>;
  /** Schemas the error answers refer to (`#/components/schemas/…`). */
  schemas?: Record<string, unknown>;
  /** The names of the shared error answers, and the description of each; `errorContent` is what every one carries. */
  errorAnswers: ErrorAnswerNames;
  errorDescriptions: Record<string, string>;
  errorContent: Record<string, unknown>;
}

function operation<R extends OperationRoute>(spec: ApiDocumentSpec<R>, route: R, operationId: string): Record<string, unknown> {
  const responses: Record<string, unknown> = {};
  for (const [status, doc] of Object.entries(route.responses)) {
    responses[status] = { description: doc.description, ...(doc.schema ? { content: { 'application/json': { schema: openApiSchema(doc.schema) }, ...spec.otherMedia?.response } } : {}) };
  }
  const description = spec.description ? spec.description(route) : route.description;
  const required = spec.bodyRequired ? spec.bodyRequired(route) : route.bodyOptional !== true;
  return {
    operationId,
    summary: route.summary,
    ...(description ? { description } : {}),
    tags: [route.tag],
    parameters: spec.parameters ? spec.parameters(route) : declaredParameters(route),
    ...(route.body ? { requestBody: { required, content: { 'application/json': { schema: openApiSchema(route.body) }, ...spec.otherMedia?.request } } } : {}),
    responses: { ...responses, ...errorAnswers(route, spec.errorAnswers) },
  };
}

/**
 * The OpenAPI 3.1 document of an API: an operation for each route of each scope (an operationId
 * already taken gets the scope's name as a suffix, since OpenAPI 3.1 §4.8.10 wants them unique),
 * then the document itself, the API's security and its shared error answers.
 */
export function openApiDocument<R extends OperationRoute>(spec: ApiDocumentSpec<R>, origin: string, scopes: readonly DocumentedScope<R>[]): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  const operationIds = new Set<string>();
  for (const { base, name, routes } of scopes) {
    for (const route of routes) {
      let operationId = route.operationId;
      if (operationIds.has(operationId)) operationId = `${operationId}_${name.replace(/[^A-Za-z0-9]/g, '_')}`;
      operationIds.add(operationId);
      (paths[openApiPath(base, route.path)] ??= {})[route.method.toLowerCase()] = operation(spec, route, operationId);
    }
  }
  paths[spec.document.path] = {
    get: {
      operationId: spec.document.operationId,
      summary: 'This document',
      tags: ['Documentation'],
      security: [],
      responses: { 200: { description: spec.document.description, content: { 'application/json': { schema: { type: 'object' } } } } },
    },
  };
  const tags = [...(spec.tags ?? new Set(scopes.flatMap((scope) => scope.routes.map((route) => route.tag)))), 'Documentation'];
  const responses = Object.fromEntries(Object.entries(spec.errorDescriptions).map(([name, description]) => [name, { description, content: spec.errorContent }]));
  return {
    openapi: '3.1.0',
    info: spec.info,
    servers: [{ url: origin }],
    security: spec.security,
    tags: tags.map((name) => ({ name })),
    paths,
    components: { ...(spec.schemas ? { schemas: spec.schemas } : {}), securitySchemes: spec.securitySchemes, responses },
  };
}
