import cookie from '@fastify/cookie';
import Fastify, { LogController, type FastifyInstance, type FastifyServerOptions } from 'fastify';
import { loggerOptions } from '../observability/logger.ts';
import { activeClientOrigins } from '../oauth/cors-origins.ts';
import type { HttpDeps } from './deps.ts';
import { healthRoutes } from './health.ts';
import { identityApiRoutes } from './identity-api/plugin.ts';
import { manageApiRoutes } from './manage-api/plugin.ts';
import { consoleRoutes } from './console/plugin.ts';
import { consentRoutes } from './interaction/consent-route.ts';
import { accountRoutes } from './interaction/account-routes.ts';
import { accountPages } from './interaction/account-pages.ts';
import { recordSessionDevices } from './session-devices.ts';
import { passwordResetRoutes } from './interaction/password-reset-routes.ts';
import { selfRegistrationRoutes } from './interaction/registration-routes.ts';
import { invitationRoutes } from './interaction/invitation-routes.ts';
import { profileRoutes } from './interaction/profile-routes.ts';
import { deviceRoutes } from './interaction/device-routes.ts';
import { interactionRoutes } from './interaction/login-route.ts';
import { enrolRoutes } from './interaction/enrol-route.ts';
import { passkeyRoutes } from './interaction/passkey-routes.ts';
import { themeRoutes } from './interaction/theme-routes.ts';
import { parseParams } from './params.ts';
import { BODY_LIMIT, clientErrorHandler, frameworkErrorHandler, MAX_HEADER_SIZE, useRequestLimits } from './plugins/limits.ts';
import { CorsOriginSet } from './plugins/cors.ts';
import { useSecurityHeaders } from './plugins/security-headers.ts';
import { timeoutOptions, useBodyTimeout } from './plugins/timeouts.ts';
import { authorizationRoutes } from './public/authorization.ts';
import { discoveryRoutes } from './public/discovery.ts';
import { landingRoutes } from './public/landing.ts';
import { logoutRoutes } from './public/logout.ts';
import { registrationRoutes } from './public/registration.ts';
import { statusRoutes } from './public/status.ts';
import { tokenRoutes } from './public/token.ts';
import { userInfoRoutes } from './public/userinfo.ts';
import { jsonErrorHandler } from './render/errors.ts';

export interface ServerOptions {
  /** false silences request logging (tests); otherwise pino at the configured level. */
  logger?: FastifyServerOptions['logger'] | false;
  /** Told of every answered request with its route pattern (metrics), `unmatched` when no route matched. */
  observeRequest?: (method: string, route: string, status: number, seconds: number) => void;
}

/** The Fastify application: plugins, error rendering and every route group. */
export async function buildHttpServer(deps: HttpDeps, options: ServerOptions = {}): Promise<FastifyInstance> {
  const timeouts = timeoutOptions(deps.config);
  const app = Fastify({
    logger: options.logger === undefined ? loggerOptions(deps.config.logLevel, deps.config.logTime) : options.logger,
    trustProxy: deps.config.trustedProxies.length > 0 ? deps.config.trustedProxies : false,
    bodyLimit: BODY_LIMIT,
    // Request line + headers; Node answers more with 431 through clientErrorHandler (plugins/limits.ts).
    http: { maxHeaderSize: MAX_HEADER_SIZE, ...timeouts.http },
    // Slow and stalled clients: headers, body and whole-request timeouts (plugins/timeouts.ts).
    requestTimeout: timeouts.requestTimeout,
    connectionTimeout: timeouts.connectionTimeout,
    // A request that arrives on an open connection while the server drains is answered as usual
    // (with Connection: close): Fastify's 503 would be a bare body without our headers, and the
    // drain is bounded anyway (GATEHOUSE_SHUTDOWN_TIMEOUT, src/app.ts).
    return503OnClosing: false,
    clientErrorHandler: clientErrorHandler(deps.config),
    // A path the router cannot decode: our JSON error and headers, not Fastify's default body.
    frameworkErrors: frameworkErrorHandler(deps.config),
    routerOptions: { querystringParser: parseParams, ignoreTrailingSlash: false, maxParamLength: 200 },
    requestIdHeader: false,
    // Fastify's two lines per request cost a third of userinfo's throughput at `info`
    // (docs/performance.md); requests are logged at `debug` instead, one line each (below).
    // Through the log controller: the top-level disableRequestLogging is deprecated (FSTDEP023).
    logController: new LogController({ disableRequestLogging: true }),
  });
  if (app.log.level === 'debug' || app.log.level === 'trace') logRequests(app);
  if (options.observeRequest) observeRequests(app, options.observeRequest);
  // Both on the root instance, before the routes, so every route group inherits them.
  useRequestLimits(app, deps.config);
  useBodyTimeout(app.server, deps.config);
  useSecurityHeaders(app, deps.config);
  recordSessionDevices(app, deps);
  await app.register(cookie);

  app.setErrorHandler(jsonErrorHandler);
  app.setNotFoundHandler((request, reply) => reply.code(404).header('cache-control', 'no-store').send({ error: 'not_found', error_description: `No route for ${request.method} ${request.url.split('?')[0]}` }));

  await app.register(async (scope) => healthRoutes(scope, deps));
  await app.register(async (scope) => discoveryRoutes(scope, deps));
  await app.register(async (scope) => landingRoutes(scope, deps));
  await app.register(async (scope) => authorizationRoutes(scope, deps));
  await app.register(async (scope) => interactionRoutes(scope, deps));
  await app.register(async (scope) => enrolRoutes(scope, deps));
  await app.register(async (scope) => passkeyRoutes(scope, deps));
  await app.register(async (scope) => consentRoutes(scope, deps));
  await app.register(async (scope) => deviceRoutes(scope, deps));
  await app.register(async (scope) => accountRoutes(scope, deps));
  await app.register(async (scope) => accountPages(scope, deps));
  await app.register(async (scope) => profileRoutes(scope, deps));
  await app.register(async (scope) => passwordResetRoutes(scope, deps));
  await app.register(async (scope) => selfRegistrationRoutes(scope, deps));
  await app.register(async (scope) => invitationRoutes(scope, deps));
  await app.register(async (scope) => logoutRoutes(scope, deps));
  await app.register(async (scope) => statusRoutes(scope, deps));
  // One cached set of the active clients' browser origins for every CORS preflight (plugins/cors.ts).
  const corsOrigins = new CorsOriginSet(() => activeClientOrigins(deps), deps.clock);
  await app.register(async (scope) => tokenRoutes(scope, deps, corsOrigins));
  await app.register(async (scope) => userInfoRoutes(scope, deps, corsOrigins));
  await app.register(async (scope) => identityApiRoutes(scope, deps));
  await app.register(async (scope) => themeRoutes(scope, deps));
  await app.register(async (scope) => registrationRoutes(scope, deps));
  await app.register(async (scope) => manageApiRoutes(scope, deps));
  await app.register(async (scope) => consoleRoutes(scope, deps));
  return app;
}

/** One `debug` line per answered request: method, URL with secrets redacted, status, time taken. */
function logRequests(app: FastifyInstance): void {
  app.addHook('onResponse', (request, reply, done) => {
    request.log.debug({ req: request, res: { statusCode: reply.statusCode }, responseTime: reply.elapsedTime }, 'request completed');
    done();
  });
}

/**
 * Every answered request, by the route pattern it matched (`/customerid-rest/services/2.0/users/:id`),
 * never its URL: one series per route, however many users or probes there are.
 */
function observeRequests(app: FastifyInstance, observe: NonNullable<ServerOptions['observeRequest']>): void {
  app.addHook('onResponse', (request, reply, done) => {
    observe(request.method, request.routeOptions.url ?? 'unmatched', reply.statusCode, reply.elapsedTime / 1000);
    done();
  });
}
