/**
 * The route-table engine of both REST APIs (identity-api/plugin.ts, manage-api/plugin.ts): a
 * table of routes as data is registered with Fastify — its validation schemas, body limit, the
 * call each handler receives and the rendering of what it returns — together with the 405 answers
 * of its known paths and the refusal of NUL characters. The OpenAPI document is generated from
 * the same table (../openapi.ts), so what is served and what is documented cannot drift apart.
 *
 * Each API keeps what is its own around this: body parsers, authentication, error rendering,
 * and how a call is built and a result rendered (the options below).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { JsonSchema, OperationRoute } from '../openapi.ts';

/** A route as the engine registers it and documents it: the call `C` it handles and the result `T` it answers. */
export interface TableRoute<C, T> extends OperationRoute {
  handle(call: C): Promise<T>;
}

export interface RouteTableOptions<R extends TableRoute<C, T>, C, T> {
  /** Where a route is served, below the context's prefix, in Fastify's syntax; default its `path`. */
  url?(route: R): string;
  /** The largest body a route reads, in bytes. */
  bodyLimit: number;
  /** The route's `config` (what the API's hooks read, e.g. the role it needs). */
  config?(route: R): Record<string, unknown>;
  /**
   * When set, Fastify serializes the answers with the route's success schemas and `errors` for
   * every 4xx and 5xx; when not, the response schemas are documentation only.
   */
  serialize?: { errors: JsonSchema };
  /** The call the route's handler receives. */
  call(request: FastifyRequest): C;
  /** Renders what the handler returned. */
  send(reply: FastifyReply, request: FastifyRequest, result: T): FastifyReply;
  /**
   * The methods a 405 route answers: every one of them that a known path does not have (HEAD
   * counts as had where GET is: Fastify serves it).
   */
  methods: readonly string[];
  /** The error a known path asked with another method answers (405; `allow` for the Allow header). */
  methodNotAllowed(url: string, allow: string): Error;
  /** Other paths of the context the API serves itself, with their methods, for the 405 answers. */
  otherPaths?: Record<string, string[]>;
}

/** Registers every route of `routes` in `api`, then a 405 route for each of their paths. */
export function registerRouteTable<R extends TableRoute<C, T>, C, T>(api: FastifyInstance, routes: readonly R[], options: RouteTableOptions<R, C, T>): void {
  const methodsByPath = new Map<string, string[]>(Object.entries(options.otherPaths ?? {}));
  for (const route of routes) {
    const url = options.url ? options.url(route) : route.path;
    methodsByPath.set(url, [...(methodsByPath.get(url) ?? []), route.method]);
    api.route({
      method: route.method,
      url,
      ...(options.config ? { config: options.config(route) } : {}),
      bodyLimit: options.bodyLimit,
      ...(route.bodyOptional
        ? {
            preValidation: async (request: FastifyRequest) => {
              if (request.body === undefined || request.body === null) request.body = {};
            },
          }
        : {}),
      schema: {
        ...(route.params ? { params: route.params } : {}),
        ...(route.querystring ? { querystring: route.querystring } : {}),
        ...(route.body ? { body: route.body } : {}),
        ...(options.serialize ? { response: responseSchemas(route, options.serialize.errors) } : {}),
      },
      handler: async (request, reply) => options.send(reply, request, await route.handle(options.call(request))),
    });
  }
  // RFC 9110 §15.5.6: a known resource asked with another method is 405 with Allow, not 404.
  for (const [url, allowed] of methodsByPath) {
    const withHead = allowed.includes('GET') ? [...allowed, 'HEAD'] : allowed;
    const allow = withHead.join(', ');
    api.route({
      method: options.methods.filter((method) => !withHead.includes(method)),
      url,
      // Marks the 405 routes for whoever lists the routes served (the OpenAPI tests skip them).
      config: { methodNotAllowed: true },
      handler: async () => {
        throw options.methodNotAllowed(url, allow);
      },
    });
  }
}

function responseSchemas(route: TableRoute<unknown, unknown>, errorSchema: JsonSchema): Record<string, unknown> {
  const response: Record<string, unknown> = { '4xx': errorSchema, '5xx': errorSchema };
  for (const [status, doc] of Object.entries(route.responses)) response[status] = doc.schema;
  return response;
}

/** Where a NUL character is in a value, as a field path (`attributes.name[0]`); undefined when there is none. */
export function nulField(value: unknown, path: string, maxDepth: number, depth = 0): string | undefined {
  if (typeof value === 'string') return value.includes('\u0000') ? path : undefined;
  if (depth > maxDepth || typeof value !== 'object' || value === null) return undefined;
  for (const [key, item] of Object.entries(value)) {
    const here = Array.isArray(value) ? `${path}[${key}]` : path === '' ? key : `${path}.${key}`;
    if (key.includes('\u0000')) return here;
    const found = nulField(item, here, maxDepth, depth + 1);
    if (found !== undefined) return found;
  }
  return undefined;
}

/**
 * Refuses, before validation, a request with a NUL character in a path parameter, query
 * parameter or body value or member name (looked for `maxDepth` levels deep): a NUL has no
 * business in any identifier or attribute, PostgreSQL text cannot hold one, and some drivers and
 * tools stop at one. `refuse` gets the part (`path`, `query`, `body`) and the field at fault.
 */
export function refuseNul(api: FastifyInstance, maxDepth: number, refuse: (part: 'path' | 'query' | 'body', field: string) => Error): void {
  api.addHook('preValidation', async (request) => {
    for (const [part, value] of [['path', request.params], ['query', request.query], ['body', request.body]] as const) {
      const field = nulField(value, '', maxDepth);
      if (field !== undefined) throw refuse(part, field || part);
    }
  });
}
