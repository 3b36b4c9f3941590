/**
 * The identity REST API (CustomerID-compatible): `/{identity_rest}/services/2.0|2.1/…`, the
 * legacy reads at `/{legacy_service}/services/…` (and, as the product does, at
 * `/{identity_rest}/services/…`), and the OpenAPI document at `/{identity_rest}/openapi.json`.
 *
 * Each prefix is one encapsulated Fastify context with its own body parsers (JSON and XML only),
 * authentication hook (auth.ts), error and not-found rendering (render.ts); the routes come from
 * the tables in *-routes.ts.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { HttpDeps } from '../deps.ts';
import { actorOf, authenticate, callerAuthority } from './auth.ts';
import { ApiError, invalidArguments, toApiError } from './errors.ts';
import { legacyRoutes } from './legacy-routes.ts';
import { openApiDocument, type RouteScope } from './openapi.ts';
import { organizationRoutes } from './organization-routes.ts';
import { requestPath, sendError, sendResult } from './render.ts';
import type { ApiRoute, HttpMethod } from './route.ts';
import { errorResponse } from './schemas.ts';
import { userRoutes } from './user-routes.ts';
import { parseEntityXml } from './xml.ts';

const BODY_LIMIT = 64 * 1024;
const METHODS: HttpMethod[] = ['GET', 'POST', 'PUT', 'DELETE'];

/** The route tables per prefix; a prefix configured for both APIs serves both tables once. */
export function identityApiScopes(deps: HttpDeps): RouteScope[] {
  const { identityRestPrefix, legacyRestPrefix } = deps.config;
  const versioned = [...userRoutes('2.0'), ...organizationRoutes('2.0'), ...userRoutes('2.1'), ...organizationRoutes('2.1')];
  const scopes: RouteScope[] = [{ prefix: identityRestPrefix, routes: [...versioned, ...legacyRoutes()] }];
  if (legacyRestPrefix !== identityRestPrefix) scopes.push({ prefix: legacyRestPrefix, routes: legacyRoutes() });
  return scopes;
}

/** A NUL byte has no business in any identifier or attribute, and some drivers and tools stop at one. */
function containsNul(value: unknown, depth = 0): boolean {
  if (typeof value === 'string') return value.includes('\u0000');
  if (depth > 8 || typeof value !== 'object' || value === null) return false;
  return Object.entries(value).some(([key, item]) => key.includes('\u0000') || containsNul(item, depth + 1));
}

async function scope(api: FastifyInstance, deps: HttpDeps, routes: ApiRoute[]): Promise<void> {
  // Bodies are JSON or XML; a form body is refused (415), so credentials in one are never read.
  api.removeContentTypeParser(['application/x-www-form-urlencoded', 'text/plain']);
  api.addContentTypeParser(['application/xml', 'text/xml'], { parseAs: 'string', bodyLimit: BODY_LIMIT }, (_request: FastifyRequest, body: string | Buffer, done: (error: Error | null, body?: unknown) => void) => {
    try {
      const { element, attributes } = parseEntityXml(String(body));
      done(null, { type: element.toLowerCase(), attributes });
    } catch (error) {
      done(error as Error);
    }
  });
  api.setErrorHandler((error, request, reply) => sendError(reply, request, toApiError(error, request)));
  api.setNotFoundHandler((request, reply) => sendError(reply, request, new ApiError(404, 'Entity not found', `No resource at ${requestPath(request)}`)));
  api.addHook('onRequest', async (request) => {
    const caller = await authenticate(deps, request);
    // Who changes identity data: the method, and a bearer token's user and client. Never the
    // API account's name, which the logs treat as half a credential (observability/logger.ts).
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      request.log.info({ apiCaller: caller.method === 'bearer' ? caller : { method: caller.method } }, 'identity API change');
    }
  });
  api.addHook('preValidation', async (request) => {
    if (containsNul(request.query) || containsNul(request.params) || containsNul(request.body)) throw invalidArguments('Values must not contain NUL characters.');
  });

  const methodsByPath = new Map<string, HttpMethod[]>();
  for (const route of routes) {
    const url = `/services${route.path}`;
    methodsByPath.set(url, [...(methodsByPath.get(url) ?? []), route.method]);
    const response: Record<string, unknown> = { '4xx': errorResponse, '5xx': errorResponse };
    for (const [status, doc] of Object.entries(route.responses)) response[status] = doc.schema;
    api.route({
      method: route.method,
      url,
      schema: {
        ...(route.params ? { params: route.params } : {}),
        ...(route.querystring ? { querystring: route.querystring } : {}),
        ...(route.body ? { body: route.body } : {}),
        response,
      },
      bodyLimit: BODY_LIMIT,
      handler: async (request, reply) => {
        const result = await route.handle({
          deps,
          params: request.params as Record<string, string>,
          query: request.query as Record<string, unknown>,
          body: request.body,
          path: requestPath(request),
          actor: actorOf(request),
          authority: () => callerAuthority(deps, request),
          acting: async () => ({ actor: actorOf(request), authority: await callerAuthority(deps, request) }),
        });
        return sendResult(reply, request, result);
      },
    });
  }
  // RFC 9110 §15.5.6: a known resource asked with another method is 405 with Allow, not 404.
  for (const [url, allowed] of methodsByPath) {
    const others = [...METHODS.filter((m) => !allowed.includes(m)), 'PATCH'];
    const allow = [...allowed, ...(allowed.includes('GET') ? ['HEAD'] : [])].join(', ');
    api.route({ method: others, url, config: { methodNotAllowed: true }, handler: async () => {
      throw new ApiError(405, 'Method not allowed', `${url.split('/').pop() === '' ? 'This collection' : 'This resource'} allows ${allow}.`, { allow });
    } });
  }
}

export async function identityApiRoutes(app: FastifyInstance, deps: HttpDeps): Promise<void> {
  const scopes = identityApiScopes(deps);
  // Built before the routes are registered: Fastify may annotate the schema objects it compiles.
  const document = JSON.stringify(openApiDocument(deps.config, scopes));
  await app.register(async (docs) => {
    // Malformed requests for the document answer in the API's error shape, like every API route.
    docs.setErrorHandler((error, request, reply) => sendError(reply, request, toApiError(error, request)));
    docs.get(`/${deps.config.identityRestPrefix}/openapi.json`, async (_request, reply) => reply.header('cache-control', 'no-cache').type('application/json; charset=utf-8').send(document));
  });
  for (const { prefix, routes } of scopes) await app.register(async (api) => scope(api, deps, routes), { prefix: `/${prefix}` });
}
