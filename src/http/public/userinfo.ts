import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { OAuthError } from '../../oauth/errors.ts';
import { InvalidRequest } from '../../oauth/errors.ts';
import { param } from '../../oauth/params.ts';
import { ENDPOINT_PATHS } from '../../oauth/discovery.ts';
import { userInfo } from '../../oauth/userinfo.ts';
import { clientOfAccessToken, registeredClient } from '../../oauth/cors-clients.ts';
import type { Client } from '../../domain/client.ts';
import type { HttpDeps } from '../deps.ts';
import { useClientCors, type CorsOriginSet } from '../plugins/cors.ts';
import { noStore } from '../plugins/no-store.ts';
import type { RawParams } from '../params.ts';
import { bearerChallenge, toOAuthError } from '../render/errors.ts';

/** UserInfo (OIDC Core §5.3) with the bearer token in the header, or in a form body on POST (RFC 6750 §2.2). */
export async function userInfoRoutes(app: FastifyInstance, deps: HttpDeps, corsOrigins: CorsOriginSet): Promise<void> {
  app.setErrorHandler((error, request, reply) => sendBearerError(reply, toOAuthError(error, request)));
  app.addHook('onSend', noStore);
  const path = `${deps.config.issuerPath}${ENDPOINT_PATHS.userinfo}`;
  // Readable by the origins of the client the access token was issued to (plugins/cors.ts; docs/decisions.md).
  useClientCors(app, corsOrigins, [{ url: path, methods: ['GET', 'POST'], headers: ['Authorization'], clientOf: async (request) => tokenClient(deps, request) }]);

  const handler = async (request: FastifyRequest, reply: FastifyReply) => {
    const token = bearerToken(request);
    if (token === undefined) return reply.code(401).header('www-authenticate', bearerChallenge(undefined)).send({ error: 'invalid_token', error_description: 'An access token is required.' });
    const answer = await userInfo(deps, token);
    answeredFor.set(request, answer.clientId);
    // OIDC Core §5.3.2: a signed response is the JWT itself, as application/jwt.
    if ('jwt' in answer) return reply.type('application/jwt').send(answer.jwt);
    return answer.claims;
  };
  app.get(path, handler);
  app.post(path, handler);
}

/** The client of each answered request's token, so a browser's request reads its token once. */
const answeredFor = new WeakMap<FastifyRequest, string>();

/** The registered client the request's access token was issued to, if the token is known (any state: the answer says whether it is live). */
async function tokenClient(deps: HttpDeps, request: FastifyRequest): Promise<Client | undefined> {
  const answered = answeredFor.get(request);
  if (answered !== undefined) return registeredClient(deps, answered);
  // Refused (the token unknown, expired, revoked…): read it for its client, as the answer did not.
  const token = bearerToken(request);
  return token === undefined ? undefined : clientOfAccessToken(deps, token);
}

/** The bearer token from `Authorization: Bearer` (scheme case-insensitive) or the POST body; both at once is invalid_request (RFC 6750 §2). */
export function bearerToken(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  // Only a POST can carry a body: a GET (the usual request) looks at no content type.
  const fromBody = request.method === 'POST' && (request.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase() === 'application/x-www-form-urlencoded' ? param((request.body ?? {}) as RawParams, 'access_token') : undefined;
  let fromHeader: string | undefined;
  if (header !== undefined) {
    const match = /^bearer +([A-Za-z0-9\-._~+/]+=*) *$/i.exec(header);
    if (!match) throw new InvalidRequest('The Authorization header is not a valid Bearer credential.');
    fromHeader = match[1];
  }
  if (fromHeader !== undefined && fromBody !== undefined) throw new InvalidRequest('Send the access token one way only.');
  return fromHeader ?? fromBody;
}

function sendBearerError(reply: FastifyReply, error: OAuthError): FastifyReply {
  reply.code(error.status);
  if (error.status === 401 || error.status === 403 || error instanceof InvalidRequest) reply.header('www-authenticate', bearerChallenge(error));
  if (error.status === 503) reply.header('retry-after', '5');
  return reply.type('application/json').send({ error: error.error, error_description: error.description });
}
