import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ENDPOINT_PATHS } from '../../oauth/discovery.ts';
import { deleteDynamicClient, dynamicRegistrationDeps, readDynamicClient, registerDynamicClient, replaceDynamicClient, TokenRequired } from '../../oauth/dynamic-registration.ts';
import { InvalidClientMetadataError, InvalidToken, type OAuthError } from '../../oauth/errors.ts';
import { clientAddress } from '../client-address.ts';
import type { HttpDeps } from '../deps.ts';
import { BODY_LIMIT } from '../plugins/limits.ts';
import { bearerChallenge, toOAuthError } from '../render/errors.ts';

/**
 * RFC 7591 §3 client registration endpoint (`<issuer>/oauth2/register`) and the RFC 7592 client
 * configuration endpoint (`…/register/{client_id}`): JSON in, JSON out, only when
 * GATEHOUSE_DYNAMIC_REGISTRATION is not `off` (otherwise no route exists: 404, and discovery names
 * no registration_endpoint).
 */
export async function registrationRoutes(app: FastifyInstance, deps: HttpDeps): Promise<void> {
  if (deps.config.dynamicRegistration === 'off') return;
  // JSON only (RFC 7591 §3.1): a form or text body is refused, never read.
  app.removeContentTypeParser(['application/x-www-form-urlencoded', 'text/plain']);
  app.setErrorHandler((error, request, reply) => sendRegistrationError(reply, registrationError(error, request)));
  app.addHook('onSend', async (_request, reply) => {
    // RFC 7591 §3.2.1: the response carries credentials.
    reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
  });
  app.addHook('preValidation', async (request) => {
    if (containsNul(request.body)) throw new InvalidClientMetadataError('Values must not contain NUL characters.');
  });

  const useCases = dynamicRegistrationDeps(deps);
  const path = `${deps.config.issuerPath}${ENDPOINT_PATHS.registration}`;
  const clientUri = (clientId: string) => `${deps.config.issuer}${ENDPOINT_PATHS.registration}/${encodeURIComponent(clientId)}`;

  app.post(path, async (request, reply) => {
    const { response } = await registerDynamicClient(useCases, bearer(request), request.body, clientUri, clientAddress(request));
    return reply.code(201).header('location', response.registration_client_uri as string).send(response);
  });

  const configuration = `${path}/:clientId`;
  app.get<{ Params: { clientId: string } }>(configuration, async (request) => {
    const { clientId } = request.params;
    return (await readDynamicClient(useCases, clientId, bearer(request), clientUri(clientId))).response;
  });
  app.put<{ Params: { clientId: string } }>(configuration, async (request) => {
    const { clientId } = request.params;
    return (await replaceDynamicClient(useCases, clientId, bearer(request), request.body, clientUri(clientId))).response;
  });
  app.delete<{ Params: { clientId: string } }>(configuration, async (request, reply) => {
    const { clientId } = request.params;
    await deleteDynamicClient(useCases, clientId, bearer(request));
    return reply.code(204).send();
  });

  // The registration endpoint takes only POST (RFC 7591 §3.1): other methods are 405 with Allow.
  app.route({
    method: ['GET', 'PUT', 'DELETE', 'PATCH'],
    url: path,
    handler: async (_request, reply) => reply.code(405).header('allow', 'POST').send({ error: 'invalid_request', error_description: 'The registration endpoint accepts only POST.' }),
  });
  app.route({
    method: ['POST', 'PATCH'],
    url: configuration,
    handler: async (_request, reply) => reply.code(405).header('allow', 'GET, PUT, DELETE').send({ error: 'invalid_request', error_description: 'The client configuration endpoint accepts GET, PUT and DELETE.' }),
  });
}

/**
 * The bearer token of `Authorization: Bearer` (RFC 6750 §2.1, the header only); undefined when
 * there is no Authorization header. Any other scheme or syntax is an invalid token.
 */
function bearer(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  if (header === undefined) return undefined;
  const match = /^bearer +([A-Za-z0-9\-._~+/]+=*) *$/i.exec(header);
  if (!match || match[1]!.length > 512) throw new InvalidToken('The Authorization header is not a Bearer token.');
  return match[1];
}

/**
 * RFC 7591 §3.2.2: a body that is not JSON, too large or unreadable is invalid_client_metadata
 * (400), the registration endpoint's error for what it cannot accept; the rest as elsewhere.
 */
function registrationError(error: unknown, request: FastifyRequest): OAuthError {
  const e = error as FastifyError;
  if (e.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return new InvalidClientMetadataError(`The request body is larger than ${BODY_LIMIT / 1024} KiB.`);
  if (typeof e.code === 'string' && e.code.startsWith('FST_ERR_CTP_')) return new InvalidClientMetadataError('The request body must be a JSON object (Content-Type: application/json).');
  return toOAuthError(error, request);
}

/** RFC 7591 §3.2.2 / RFC 6750 §3: a JSON error; a 401 carries a Bearer challenge (without error attribute when no token was sent). */
function sendRegistrationError(reply: FastifyReply, error: OAuthError): FastifyReply {
  reply.code(error.status);
  if (error.status === 401) reply.header('www-authenticate', bearerChallenge(error instanceof TokenRequired ? undefined : error));
  if (error.status === 503) reply.header('retry-after', '5');
  return reply.type('application/json').send({ error: error.error, error_description: error.description });
}

/** A NUL byte names nothing and PostgreSQL refuses it in text: refused before any use case sees it. */
function containsNul(value: unknown, depth = 0): boolean {
  if (typeof value === 'string') return value.includes('\u0000');
  if (depth > 16 || typeof value !== 'object' || value === null) return false;
  return Object.entries(value).some(([key, item]) => key.includes('\u0000') || containsNul(item, depth + 1));
}
