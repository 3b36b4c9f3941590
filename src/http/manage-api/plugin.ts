/**
 * The management REST API at `/manage/api/v1` (docs/management-api.md): one encapsulated Fastify
 * context with its own body parsing (JSON only), validation (Ajv, reporting every field), bearer
 * authentication and roles (auth.ts), problem rendering (errors.ts) and the route table
 * (routes/index.ts), plus the OpenAPI document generated from that table.
 */
import { Ajv, type Options as AjvOptions } from 'ajv';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { administratorGroups } from '../../identity/administrators.ts';
import { MANAGE_API_PATH } from '../../manage/management-clients.ts';
import type { HttpDeps } from '../deps.ts';
import { actorOf, authenticateManager } from './auth.ts';
import { badRequest, forbidden, MANAGE_BODY_LIMIT, ManageProblem, toProblem } from './errors.ts';
import { openApiDocument } from './openapi.ts';
import type { ManageCaller, ManageMethod, ManageRoute } from './route.ts';
import { MANAGE_ROUTES } from './routes/index.ts';

const METHODS: readonly string[] = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

/** What a route needs, on the route's config: `access` (the role it needs), or `public` (no authentication). */
interface RouteConfig {
  access?: ManageRoute['access'];
  public?: boolean;
  /** A 405 route: a known path asked with a method it does not have. */
  methodNotAllowed?: boolean;
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

/** Where a NUL character is in a value, as a field path; undefined when there is none. */
function nulField(value: unknown, path: string, depth = 0): string | undefined {
  if (typeof value === 'string') return value.includes('\u0000') ? path : undefined;
  if (depth > 32 || typeof value !== 'object' || value === null) return undefined;
  for (const [key, item] of Object.entries(value)) {
    const here = Array.isArray(value) ? `${path}[${key}]` : path === '' ? key : `${path}.${key}`;
    if (key.includes('\u0000')) return here;
    const found = nulField(item, here, depth + 1);
    if (found !== undefined) return found;
  }
  return undefined;
}

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
  api.addHook('preValidation', async (request) => {
    for (const [part, value] of [['path', request.params], ['query', request.query], ['body', request.body]] as const) {
      const field = nulField(value, '');
      if (field !== undefined) throw badRequest(`Values must not contain NUL characters (${part}).`, [{ field: field || part, message: 'must not contain NUL characters' }]);
    }
  });

  api.get('/openapi.json', { config: { public: true } satisfies RouteConfig }, async (_request, reply) => reply.type('application/json; charset=utf-8').send(document));

  const methodsByPath = new Map<string, ManageMethod[]>([['/openapi.json', ['GET']]]);
  for (const route of routes) {
    methodsByPath.set(route.path, [...(methodsByPath.get(route.path) ?? []), route.method]);
    api.route({
      method: route.method,
      url: route.path,
      config: { access: route.access } satisfies RouteConfig,
      bodyLimit: MANAGE_BODY_LIMIT,
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
      },
      handler: async (request, reply) => {
        const caller = callers.get(request)!;
        const result = await route.handle({
          deps,
          params: request.params as Record<string, string>,
          query: (request.query ?? {}) as Record<string, unknown>,
          body: request.body,
          actor: actorOf(caller),
          caller,
          acting: { actor: actorOf(caller), authority: { groups: administratorGroups(deps.config), administrator: caller.role === 'admin' } },
        });
        reply.code(result.status ?? 200);
        if (result.headers) reply.headers(result.headers);
        if (result.status === 204 || result.body === undefined) return reply.send();
        return reply.type('application/json; charset=utf-8').send(JSON.stringify(result.body));
      },
    });
  }
  // RFC 9110 §15.5.6: a known resource asked with another method is 405 with Allow, not 404.
  for (const [url, allowed] of methodsByPath) {
    const withHead = allowed.includes('GET') ? [...allowed, 'HEAD'] : allowed;
    const others = METHODS.filter((m) => !withHead.includes(m));
    const allow = withHead.join(', ');
    api.route({
      method: others,
      url,
      config: { methodNotAllowed: true } satisfies RouteConfig,
      handler: async () => {
        throw new ManageProblem(405, 'Method Not Allowed', `${url} allows ${allow}.`, { headers: { allow } });
      },
    });
  }
}

/** Registers the API at MANAGE_API_PATH, at the root of the issuer's host (not under its path). */
export async function manageApiRoutes(app: FastifyInstance, deps: HttpDeps, routes: readonly ManageRoute[] = MANAGE_ROUTES): Promise<void> {
  // Built before the routes are registered: Fastify may annotate the schema objects it compiles.
  const document = JSON.stringify(openApiDocument(deps.config, routes));
  await app.register(async (api) => scope(api, deps, routes, document), { prefix: MANAGE_API_PATH });
}
