/**
 * The management REST API at `/manage/api/v1` (docs/management-api.md): one encapsulated Fastify
 * context with its own body parsing (JSON only), validation (Ajv, reporting every field), bearer
 * authentication and roles (auth.ts), problem rendering (errors.ts) and the route table
 * (routes/index.ts), registered by the engine both REST APIs share (../rest/route-table.ts), plus
 * the OpenAPI document generated from that table.
 */
import { Ajv, type Options as AjvOptions } from 'ajv';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { administratorGroups } from '../../identity/administrators.ts';
import { MANAGE_API_PATH } from '../../manage/management-clients.ts';
import type { HttpDeps } from '../deps.ts';
import { registerRouteTable, refuseNul } from '../rest/route-table.ts';
import { actorOf, authenticateManager } from './auth.ts';
import { badRequest, forbidden, MANAGE_BODY_LIMIT, ManageProblem, toProblem } from './errors.ts';
import { openApiDocument } from './openapi.ts';
import type { ManageCall, ManageCaller, ManageResult, ManageRoute } from './route.ts';
import { MANAGE_ROUTES } from './routes/index.ts';

/** What a route needs, on the route's config: `access` (the role it needs), or `public` (no authentication). */
interface RouteConfig {
  access?: ManageRoute['access'];
  public?: boolean;
}

/**
 * Ajv as the API validates with. Unlike Fastify's defaults: every error is reported (so each
 * field is named), unknown members are refused rather than silently dropped (removeAdditional
 * false), and a body's types are never coerced ("1" is not a number). Query strings and path
 * parameters arrive as text, so they are coerced (`limit=5`).
 */
const AJV_OPTIONS: AjvOptions = { allErrors: true, removeAdditional: false, useDefaults: true, strict: false, validateFormats: false };
const bodyAjv = new Ajv({ ...AJV_OPTIONS, coerceTypes: false });
const textAjv = new Ajv({ ...AJV_OPTIONS, coerceTypes: 'array' });

const callers = new WeakMap<FastifyRequest, ManageCaller>();

function send(reply: FastifyReply, problem: ManageProblem): FastifyReply {
  reply.code(problem.status).headers(problem.headers).type('application/problem+json');
  return reply.send(JSON.stringify(problem.toJSON()));
}

async function scope(api: FastifyInstance, deps: HttpDeps, routes: readonly ManageRoute[], document: string): Promise<void> {
  // Bodies are JSON only: a form or text body is 415, never read.
  api.removeContentTypeParser(['application/x-www-form-urlencoded', 'text/plain']);
  api.setValidatorCompiler(({ schema, httpPart }) => (httpPart === 'body' ? bodyAjv : textAjv).compile(schema));
  // Unexpected errors are logged in full by toProblem's fallback (toOAuthError) and answered without detail.
  api.setErrorHandler((error, request, reply) => send(reply, toProblem(error, request)));
  api.setNotFoundHandler((request, reply) => send(reply, new ManageProblem(404, 'Not Found', `No resource at ${request.url.split('?')[0]}.`)));
  // Every answer, documents and errors included, is about one caller's view of live data.
  api.addHook('onSend', async (_request, reply, payload) => {
    reply.header('cache-control', 'no-store');
    return payload;
  });
  api.addHook('onRequest', async (request) => {
    const config = request.routeOptions.config as RouteConfig | undefined;
    if (config?.public) return;
    const caller = await authenticateManager(deps, request);
    callers.set(request, caller);
    if (config?.access !== 'write') return;
    // Readers are refused a change before its body is read or validated.
    if (caller.role !== 'admin') throw forbidden("Only an administrator may change anything; this token is a reader's.");
    // Who changes things, in the request log too (the audit events name them as well).
    request.log.info({ manageCaller: caller }, 'management API change');
  });
  refuseNul(api, 32, (part, field) => badRequest(`Values must not contain NUL characters (${part}).`, [{ field, message: 'must not contain NUL characters' }]));

  api.get('/openapi.json', { config: { public: true } satisfies RouteConfig }, async (_request, reply) => reply.type('application/json; charset=utf-8').send(document));

  registerRouteTable<ManageRoute, ManageCall, ManageResult>(api, routes, {
    bodyLimit: MANAGE_BODY_LIMIT,
    config: (route) => ({ access: route.access }) satisfies RouteConfig,
    call: (request) => {
      const caller = callers.get(request)!;
      return {
        deps,
        params: request.params as Record<string, string>,
        query: (request.query ?? {}) as Record<string, unknown>,
        body: request.body,
        caller,
        acting: { actor: actorOf(caller), authority: { groups: administratorGroups(deps.config), administrator: caller.role === 'admin' } },
      };
    },
    send: (reply, _request, result) => {
      reply.code(result.status ?? 200);
      if (result.headers) reply.headers(result.headers);
      if (result.status === 204 || result.body === undefined) return reply.send();
      return reply.type('application/json; charset=utf-8').send(JSON.stringify(result.body));
    },
    // A known path answers every other of these with 405 (MA12), OPTIONS included.
    methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'],
    methodNotAllowed: (url, allow) => new ManageProblem(405, 'Method Not Allowed', `${url} allows ${allow}.`, { headers: { allow } }),
    otherPaths: { '/openapi.json': ['GET'] },
  });
}

/** Registers the API at MANAGE_API_PATH, at the root of the issuer's host (not under its path). */
export async function manageApiRoutes(app: FastifyInstance, deps: HttpDeps, routes: readonly ManageRoute[] = MANAGE_ROUTES): Promise<void> {
  // Built before the routes are registered: Fastify may annotate the schema objects it compiles.
  const document = JSON.stringify(openApiDocument(deps.config, routes));
  await app.register(async (api) => scope(api, deps, routes, document), { prefix: MANAGE_API_PATH });
}
