/**
 * The identity REST API (CustomerID-compatible): `/{identity_rest}/services/2.0|2.1/…`, the
 * legacy reads at `/{legacy_service}/services/…` (and, as the product does, at
 * `/{identity_rest}/services/…`), and the OpenAPI document at `/{identity_rest}/openapi.json`.
 *
 * Each prefix is one encapsulated Fastify context with its own body parsers (JSON and XML only),
 * authentication hook (auth.ts), error and not-found rendering (render.ts); the routes come from
 * the tables in *-routes.ts, registered by the engine both REST APIs share (../rest/route-table.ts).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { HttpDeps } from '../deps.ts';
import { registerRouteTable, refuseNul } from '../rest/route-table.ts';
import { actorOf, authenticate, callerAuthority } from './auth.ts';
import { ApiError, invalidArguments, toApiError } from './errors.ts';
import { legacyRoutes } from './legacy-routes.ts';
import { openApiDocument, type RouteScope } from './openapi.ts';
import { organizationRoutes } from './organization-routes.ts';
import { invitationRoutes } from './invitation-routes.ts';
import { requestPath, sendError, sendResult, type ApiResult } from './render.ts';
import type { ApiCall, ApiRoute } from './route.ts';
import { errorResponse } from './schemas.ts';
import { userRoutes } from './user-routes.ts';
import { parseEntityXml } from './xml.ts';

const BODY_LIMIT = 64 * 1024;

/** The route tables per prefix; a prefix configured for both APIs serves both tables once. */
export function identityApiScopes(deps: HttpDeps): RouteScope[] {
  const { identityRestPrefix, legacyRestPrefix } = deps.config;
  const versioned = [...userRoutes('2.0'), ...organizationRoutes('2.0'), ...invitationRoutes('2.0'), ...userRoutes('2.1'), ...organizationRoutes('2.1'), ...invitationRoutes('2.1')];
  const scopes: RouteScope[] = [{ prefix: identityRestPrefix, routes: [...versioned, ...legacyRoutes()] }];
  if (legacyRestPrefix !== identityRestPrefix) scopes.push({ prefix: legacyRestPrefix, routes: legacyRoutes() });
  return scopes;
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
  // CustomerID's error names no field: one message wherever the NUL is.
  refuseNul(api, 8, () => invalidArguments('Values must not contain NUL characters.'));

  registerRouteTable<ApiRoute, ApiCall, ApiResult>(api, routes, {
    url: (route) => `/services${route.path}`,
    bodyLimit: BODY_LIMIT,
    // JSON answers go through the routes' schemas (schemas.ts): a response holds only the declared members.
    serialize: { errors: errorResponse },
    call: (request) => ({
      deps,
      params: request.params as Record<string, string>,
      query: request.query as Record<string, unknown>,
      body: request.body,
      path: requestPath(request),
      acting: async () => ({ actor: actorOf(request), authority: await callerAuthority(deps, request) }),
    }),
    send: sendResult,
    // A known path answers every other of these with 405; OPTIONS is 404 here. Fastify adds HEAD
    // beside every GET, so a 405 route that answers GET answers HEAD too.
    methods: ['GET', 'POST', 'PUT', 'DELETE', 'PATCH'],
    methodNotAllowed: (url, allow) => new ApiError(405, 'Method not allowed', `${url.split('/').pop() === '' ? 'This collection' : 'This resource'} allows ${allow}.`, { allow }),
  });
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
