/**
 * A resource server (use case 2): a tiny API that accepts `Authorization: Bearer <access token>`
 * and validates the token at gatehouse's introspection endpoint (RFC 7662), authenticating with its
 * own confidential client (registered with `gatehouse client create --resource-server`).
 *
 * Plain node:http and openid-client v6; run from the repository root with
 * `node examples/resource-server/server.ts`.
 * Settings (environment): CLIENT_ID and CLIENT_SECRET (required), ISSUER (default
 * http://127.0.0.1:8080/uas), PORT (default 4000).
 *
 * GET /hello → 200 {"message":"Hello, <preferred_username or sub>!", sub, scope, client_id, session_index}
 *            → 401 with WWW-Authenticate when the token is missing or not active.
 */
import { createServer, type ServerResponse } from 'node:http';
import * as oidc from 'openid-client';

const ISSUER = new URL(process.env.ISSUER ?? 'http://127.0.0.1:8080/uas');
const PORT = Number(process.env.PORT ?? 4000);
const CLIENT_ID = process.env.CLIENT_ID;
const CLIENT_SECRET = process.env.CLIENT_SECRET;
if (!CLIENT_ID || !CLIENT_SECRET) {
  console.error('Set CLIENT_ID and CLIENT_SECRET (see examples/resource-server/README.md).');
  process.exit(1);
}

// allowInsecureRequests: openid-client talks only https unless told otherwise; the local
// development issuer is http://127.0.0.1, so it is allowed here and only for an http issuer.
const config = await oidc.discovery(ISSUER, CLIENT_ID, CLIENT_SECRET, oidc.ClientSecretBasic(CLIENT_SECRET), {
  execute: ISSUER.protocol === 'http:' ? [oidc.allowInsecureRequests] : [],
});

function json(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  response.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store', ...headers }).end(JSON.stringify(body));
}

/** The token of an `Authorization: Bearer <token>` header (RFC 6750 §2.1), or undefined. */
function bearerToken(authorization: string | undefined): string | undefined {
  const match = /^Bearer +([A-Za-z0-9\-._~+/]+=*)$/i.exec(authorization?.trim() ?? '');
  return match?.[1];
}

/**
 * Asks gatehouse whether the token is active. Nothing is cached: every request costs one
 * introspection call, and in exchange a token revoked by logout, by a reused code or by an
 * administrator is refused at once. A cache keyed by the token (for, say, 30 seconds and never past
 * the token's `exp`) would save those calls at the price of accepting a revoked token for that long.
 */
async function introspect(token: string): Promise<oidc.IntrospectionResponse> {
  return oidc.tokenIntrospection(config, token);
}

const server = createServer((request, response) => {
  const handle = async () => {
    const { pathname } = new URL(request.url ?? '/', 'http://localhost');
    if (request.method !== 'GET' || pathname !== '/hello') {
      json(response, 404, { error: 'not_found' });
      return;
    }
    // Only the header form is accepted: RFC 6750 §2.3 discourages tokens in URLs.
    const token = bearerToken(request.headers.authorization);
    if (token === undefined) {
      // No credentials at all: a bare challenge, no error code (RFC 6750 §3.1).
      json(response, 401, { error: 'unauthorized' }, { 'www-authenticate': 'Bearer realm="resource-server-example"' });
      return;
    }
    const claims = await introspect(token);
    // An API takes access tokens only: a refresh token is introspectable but no credential here.
    if (!claims.active || claims.token_type !== 'access_token') {
      json(response, 401, { error: 'invalid_token' }, { 'www-authenticate': 'Bearer error="invalid_token", error_description="The access token is not active"' });
      return;
    }
    json(response, 200, {
      message: `Hello, ${String(claims.preferred_username ?? claims.sub)}!`,
      sub: claims.sub,
      scope: claims.scope,
      client_id: claims.client_id,
      session_index: claims.session_index,
    });
  };
  handle().catch((error: unknown) => {
    // gatehouse unreachable, or our own client credentials refused.
    console.error('introspection failed:', error);
    if (!response.headersSent) json(response, 503, { error: 'introspection_unavailable' });
  });
});

server.listen(PORT, '127.0.0.1', () => console.log(`Resource server example listening on http://127.0.0.1:${PORT}/hello (issuer ${ISSUER.href})`));
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => server.close(() => process.exit(0)));
