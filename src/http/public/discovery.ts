import type { FastifyInstance, FastifyReply } from 'fastify';
import { clientAuthSetup } from '../../oauth/client-auth/registry.ts';
import { discoveryDocument, ENDPOINT_PATHS } from '../../oauth/discovery.ts';
import type { HttpDeps } from '../deps.ts';
import { usePublicCors } from '../plugins/cors.ts';

/** Discovery (OIDC Discovery §4, RFC 8414 §3) and the JWK Set (RFC 7517 §5). */
export async function discoveryRoutes(app: FastifyInstance, deps: HttpDeps): Promise<void> {
  const body = JSON.stringify(discoveryDocument({ issuer: deps.config.issuer, acrValues: deps.config.levels.map((level) => level.value), registration: deps.config.dynamicRegistration !== 'off', clientAuth: clientAuthSetup(deps.config) }));
  const sendDiscovery = async (_request: unknown, reply: FastifyReply) =>
    reply.header('cache-control', 'public, max-age=300').header('access-control-allow-origin', '*').type('application/json').send(body);
  // OIDC Discovery §4: issuer + /.well-known/openid-configuration. RFC 8414 §3 would insert the
  // well-known segment before the issuer's path; clients of the product we replace use this form.
  const base = deps.config.issuerPath;
  app.get(`${base}/.well-known/openid-configuration`, sendDiscovery);
  app.get(`${base}/.well-known/oauth-authorization-server`, sendDiscovery);

  app.get(`${base}${ENDPOINT_PATHS.jwks}`, async (_request, reply) =>
    reply
      // No longer than the key ring's own cache: a rotated-in key signs only after two such periods.
      .header('cache-control', `public, max-age=${deps.config.keyCacheTtl}`)
      .header('access-control-allow-origin', '*')
      .type('application/jwk-set+json')
      .send(await deps.keyRing.jwks()),
  );
  // Public documents: any page may read them (Access-Control-Allow-Origin: *, above) and have its preflight answered.
  usePublicCors(app, [`${base}/.well-known/openid-configuration`, `${base}/.well-known/oauth-authorization-server`, `${base}${ENDPOINT_PATHS.jwks}`]);
}
