import type { FastifyInstance } from 'fastify';
import { introspect } from '../../oauth/introspect.ts';
import { revoke } from '../../oauth/revoke.ts';
import { tokenEndpoint } from '../../oauth/token-endpoint.ts';
import type { HttpDeps } from '../deps.ts';
import { formBody, requireFormBody } from '../plugins/form-only.ts';
import { jsonErrorHandler } from '../render/errors.ts';

/** Token (RFC 6749 §3.2), introspection (RFC 7662) and revocation (RFC 7009): form in, JSON out. */
export async function tokenRoutes(app: FastifyInstance, deps: HttpDeps): Promise<void> {
  app.setErrorHandler(jsonErrorHandler);
  app.addHook('preValidation', requireFormBody);
  app.addHook('onSend', async (_request, reply) => {
    reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
  });

  app.post('/uas/oauth2/token', async (request) => tokenEndpoint(deps, request.headers.authorization, formBody(request)));
  app.post('/uas/oauth2/introspection', async (request) => introspect(deps, request.headers.authorization, formBody(request)));
  app.post('/uas/oauth2/revocation', async (request, reply) => {
    await revoke(deps, request.headers.authorization, formBody(request));
    return reply.code(200).send();
  });
}
