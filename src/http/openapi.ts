/**
 * What the two REST APIs' OpenAPI 3.1 documents share (identity-api/openapi.ts and
 * manage-api/openapi.ts): paths in OpenAPI's template syntax, schemas as JSON Schema 2020-12, the
 * parameters a route's own validation schemas declare, and which error answers a route can give.
 * Each API keeps its own document around these: its media types, error shapes and security.
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
