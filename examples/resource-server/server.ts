/**
 * A resource server (use case 2): a tiny API that accepts `Authorization: Bearer <access token>`.
 * A JWT access token (RFC 9068: the resource server registered `--access-token-format jwt`) is
 * validated locally with jose against gatehouse's published keys; any other token at gatehouse's
 * introspection endpoint (RFC 7662), authenticating with its own confidential client (registered
 * with `gatehouse client create --resource-server`).
 *
 * Plain node:http, jose and openid-client v6; run from the repository root with
 * `node examples/resource-server/server.ts`.
 * Settings (environment): CLIENT_ID and CLIENT_SECRET (required), ISSUER (default
 * http://127.0.0.1:8080/uas), PORT (default 4000).
 *
 * GET /hello → 200 {"message":"Hello, <preferred_username or sub>!", sub, scope, client_id, session_index, validated}
 *            → 401 with WWW-Authenticate when the token is missing, not active, or not meant for this
 *              resource server (its audience, `aud` of a JWT or `token_audiences` at introspection,
 *              does not name CLIENT_ID).
 */
import { createServer, type ServerResponse } from 'node:http';
import { createRemoteJWKSet, jwtVerify } from 'jose';
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

// The keys gatehouse signs with, from the jwks_uri of its discovery document. jose fetches the set
// once, caches it, and fetches again when a token names a kid it does not know (a rotated key).
const jwks = createRemoteJWKSet(new URL(config.serverMetadata().jwks_uri!));

/** What this API learned about a token it accepts. */
interface Accepted {
  sub: string | undefined;
  scope: string | undefined;
  client_id: string | undefined;
  preferred_username?: string;
  session_index?: string;
  validated: 'jwt' | 'introspection';
}

/**
 * RFC 9068 §4, locally: the header's typ is at+jwt (so an ID token is never taken for an access
 * token), the signature verifies with a published key in one of the algorithms gatehouse signs
 * with, iss is gatehouse's issuer, aud names this resource server, exp has not passed. No call to
 * gatehouse — and so no word of a revocation: a revoked JWT is accepted here until it expires,
 * which is why gatehouse gives JWT access tokens a short life (GATEHOUSE_JWT_ACCESS_TOKEN_TTL).
 */
async function validateJwt(token: string): Promise<Accepted | undefined> {
  try {
    const { payload } = await jwtVerify(token, jwks, {
      typ: 'at+jwt',
      issuer: config.serverMetadata().issuer,
      audience: CLIENT_ID,
      algorithms: ['RS256', 'PS256', 'ES256', 'EdDSA'],
      requiredClaims: ['iss', 'exp', 'aud', 'sub', 'client_id', 'iat', 'jti'],
    });
    return { sub: payload.sub, scope: payload.scope as string | undefined, client_id: payload.client_id as string | undefined, validated: 'jwt' };
  } catch {
    return undefined;
  }
}

/** The shape of a JWS compact serialization (three base64url parts); an opaque gatehouse token has no dot. */
function looksLikeJwt(token: string): boolean {
  return /^[\w-]+\.[\w-]+\.[\w-]+$/.test(token);
}

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

/**
 * An opaque token, asked about at gatehouse. Active is not enough: any client's token is active,
 * and one meant for another API (or for none) must not open this one (RFC 9068 §4 asks the same of
 * a JWT's `aud`; RFC 8707 §2). Introspection's `aud` is the caller — this server — so the token's
 * own audiences are gatehouse's `token_audiences`: the client_ids of the resource servers it is for.
 */
async function introspected(token: string): Promise<Accepted | undefined> {
  const claims = await introspect(token);
  // An API takes access tokens only: a refresh token is introspectable but no credential here.
  if (!claims.active || claims.token_type !== 'access_token') return undefined;
  const audiences = Array.isArray(claims.token_audiences) ? (claims.token_audiences as unknown[]) : [];
  if (!audiences.includes(CLIENT_ID)) return undefined;
  return {
    sub: claims.sub,
    scope: claims.scope,
    client_id: claims.client_id,
    preferred_username: claims.preferred_username as string | undefined,
    session_index: claims.session_index as string | undefined,
    validated: 'introspection',
  };
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
    const accepted = looksLikeJwt(token) ? await validateJwt(token) : await introspected(token);
    if (accepted === undefined) {
      json(response, 401, { error: 'invalid_token' }, { 'www-authenticate': 'Bearer error="invalid_token", error_description="The access token is not active or not meant for this resource server"' });
      return;
    }
    json(response, 200, {
      message: `Hello, ${String(accepted.preferred_username ?? accepted.sub)}!`,
      sub: accepted.sub,
      scope: accepted.scope,
      client_id: accepted.client_id,
      session_index: accepted.session_index,
      validated: accepted.validated,
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
