import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ENDPOINT_PATHS } from '../../oauth/discovery.ts';
import { deviceAuthorizationEndpoint } from '../../oauth/device/device-authorization.ts';
import { clientNamedBy } from '../../oauth/cors-clients.ts';
import { introspect } from '../../oauth/introspect.ts';
import { revoke } from '../../oauth/revoke.ts';
import { tokenEndpoint } from '../../oauth/token-endpoint.ts';
import { clientAddress } from '../client-address.ts';
import type { HttpDeps } from '../deps.ts';
import { useClientCors, type CorsOriginSet } from '../plugins/cors.ts';
import { formBody, requireFormBody } from '../plugins/form-only.ts';
import { noStore } from '../plugins/no-store.ts';
import { jsonErrorHandler } from '../render/errors.ts';

/** Token (RFC 6749 §3.2), introspection (RFC 7662), revocation (RFC 7009) and device authorization (RFC 8628 §3.1): form in, JSON out. */
export async function tokenRoutes(app: FastifyInstance, deps: HttpDeps, corsOrigins: CorsOriginSet): Promise<void> {
  app.setErrorHandler(jsonErrorHandler);
  app.addHook('preValidation', requireFormBody);
  app.addHook('onSend', noStore);

  const base = deps.config.issuerPath;
  // Browser single-page apps redeem codes, refresh and revoke from their own origin (plugins/cors.ts);
  // introspection is for resource servers, which are not browsers: no CORS.
  const clientOf = async (request: FastifyRequest) => clientNamedBy(deps, { authorization: request.headers.authorization, body: formBody(request) });
  useClientCors(app, corsOrigins, [
    { url: `${base}${ENDPOINT_PATHS.token}`, methods: ['POST'], headers: ['Authorization', 'Content-Type'], clientOf },
    { url: `${base}${ENDPOINT_PATHS.revocation}`, methods: ['POST'], headers: ['Authorization', 'Content-Type'], clientOf },
  ]);
  app.post(`${base}${ENDPOINT_PATHS.token}`, async (request) => tokenEndpoint(deps, request.headers.authorization, formBody(request), clientAddress(request)));
  app.post(`${base}${ENDPOINT_PATHS.introspection}`, async (request) => introspect(deps, request.headers.authorization, formBody(request), clientAddress(request)));
  app.post(`${base}${ENDPOINT_PATHS.revocation}`, async (request, reply) => {
    await revoke(deps, request.headers.authorization, formBody(request), clientAddress(request));
    return reply.code(200).send();
  });
  app.post(`${base}${ENDPOINT_PATHS.deviceAuthorization}`, async (request) => deviceAuthorizationEndpoint(deps, request.headers.authorization, formBody(request), clientAddress(request)));

  // These endpoints exist but take only POST (RFC 6749 §3.2, RFC 7662 §2.1, RFC 7009 §2.1, RFC 8628 §3.1): any
  // other method is 405 with Allow (RFC 9110 §15.5.6), not the 404 of an unknown path
  // (conformance TOK-01, INT-01; test/conformance/token.test.ts).
  const postOnly = { token: 'token', introspection: 'introspection', revocation: 'revocation', deviceAuthorization: 'device authorization' } as const;
  for (const [endpoint, name] of Object.entries(postOnly) as [keyof typeof postOnly, string][]) {
    app.route({
      method: ['GET', 'PUT', 'DELETE', 'PATCH'],
      url: `${base}${ENDPOINT_PATHS[endpoint]}`,
      handler: async (_request, reply) => reply.code(405).header('allow', 'POST').send({ error: 'invalid_request', error_description: `The ${name} endpoint accepts only POST.` }),
    });
  }
}
