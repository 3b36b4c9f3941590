/**
 * JWT access tokens (RFC 9068): which form an access token takes, and the JWT itself. A resource
 * server registered with `access_token_format: "jwt"` gets tokens it can validate locally against
 * the JWKS; every other token stays opaque. Either form is stored the same way (a token row keyed
 * by the SHA-256 of the token, issue-tokens.ts), so introspection, UserInfo, revocation and the
 * identity API treat a JWT as any other token and report a revoked one as inactive.
 */
import { DEFAULT_SIGNING_ALG, type SigningAlg } from '../protocol/constants.ts';
import { signJwt } from '../crypto/jwt.ts';
import type { ActiveKey } from '../crypto/key-ring.ts';
import type { Config } from '../config.ts';
import { toNumericDate } from '../lib/clock.ts';
import type { ClientStore } from '../storage/ports.ts';
import { accessTokenAlgOf, accessTokenFormatOf } from './access-token-format.ts';
import { scopeAudiences } from './scope.ts';

/** What form an access token takes: opaque, or a JWT signed with `alg` for `audiences`. */
export type AccessTokenForm = { format: 'opaque' } | { format: 'jwt'; alg: SigningAlg; audiences: string[] };

/** RFC 9068 §2.1: the `typ` of a JWT access token, which keeps it from being taken for an ID token (§4, §5). */
export const JWT_ACCESS_TOKEN_TYP = 'at+jwt';

/**
 * The form of the access token of `scope` (docs/decisions.md, "JWT access tokens", JA1–JA3).
 * Its audiences are the resource servers named in the scope (scopeAudiences); each one's format
 * is what it registered (`access_token_format`), or GATEHOUSE_ACCESS_TOKEN_FORMAT when it
 * registered none. The token is a JWT when any audience's format is jwt — a resource server that
 * asked for JWTs must be able to validate the token it is sent, and one that asked for opaque
 * tokens can still introspect a JWT (introspection accepts both forms), so jwt wins. With no
 * audience, the global default decides. The algorithm is the first JWT audience's
 * `access_token_signed_response_alg` (in scope order), else RS256: a token has one signature.
 *
 * `clients` is the unit of work's view when the grant runs in one, so the decision and the row it
 * stores agree.
 */
export async function accessTokenForm(clients: Pick<ClientStore, 'get' | 'resourceScopeOwners'>, config: Pick<Config, 'accessTokenFormat'>, scope: readonly string[]): Promise<AccessTokenForm> {
  const audiences = await scopeAudiences(clients, scope);
  if (audiences.length === 0) return config.accessTokenFormat === 'jwt' ? { format: 'jwt', alg: DEFAULT_SIGNING_ALG, audiences } : { format: 'opaque' };
  const registered = await Promise.all(audiences.map((clientId) => clients.get(clientId)));
  const firstJwt = registered.find((client) => client !== undefined && (accessTokenFormatOf(client) ?? config.accessTokenFormat) === 'jwt');
  if (firstJwt === undefined) return { format: 'opaque' };
  return { format: 'jwt', alg: accessTokenAlgOf(firstJwt) ?? DEFAULT_SIGNING_ALG, audiences };
}

/** Claims only gatehouse sets: no policy claim may replace or add them (issue 13). */
const PROTECTED_CLAIMS: ReadonlySet<string> = new Set(['sub', 'iss', 'aud', 'exp', 'iat', 'auth_time', 'amr', 'acr', 'session_index', 'nonce', 'azp', 'jti', 'scope', 'client_id', 'active', 'token_type']);

/** The authentication behind a user's token (RFC 9068 §2.2.1); absent for a client's own token. */
export interface AccessTokenAuthentication {
  /** ms */
  authTime: number;
  amr: readonly string[];
  acr: string | undefined;
}

/** What a JWT access token says (RFC 9068 §2.2), in gatehouse's terms. */
export interface AccessTokenContent {
  issuer: string;
  /** The resource servers' client_ids; none: the token is for gatehouse itself (its UserInfo endpoint). */
  audiences: readonly string[];
  /** The user's subject (as in ID tokens), or the client_id for a client's own token (§2.2). */
  subject: string;
  clientId: string;
  scope: string;
  jti: string;
  /** ms */
  issuedAt: number;
  /** ms */
  expiresAt: number;
  authentication: AccessTokenAuthentication | undefined;
}

/**
 * Signs a JWT access token: header `typ: at+jwt`, `alg` and `kid` (RFC 9068 §2.1); claims `iss`,
 * `exp`, `aud`, `sub`, `client_id`, `iat`, `jti` (§2.2), `scope` (§2.2.3) and, for a user's
 * token, `auth_time`, `acr` and `amr` (§2.2.1).
 *
 * `aud` (§3): the resource servers the token was granted for — one as a string, several as an
 * array. A token granted for no resource server is meant for gatehouse's own UserInfo endpoint,
 * which is what an opaque token without audience is good for, so its `aud` is the issuer
 * identifier: no resource server takes it for its own (docs/decisions.md JA4).
 *
 * `extraClaims` are the authorization policy's `access_token` claims. They can add claims but
 * never set a protected one (issue 13's list): those are dropped from them, then written here.
 */
export async function signAccessToken(key: ActiveKey, content: AccessTokenContent, extraClaims: Readonly<Record<string, unknown>> = {}): Promise<string> {
  const { audiences, authentication } = content;
  const claims: Record<string, unknown> = {
    ...Object.fromEntries(Object.entries(extraClaims).filter(([name]) => !PROTECTED_CLAIMS.has(name))),
    iss: content.issuer,
    exp: toNumericDate(content.expiresAt),
    aud: audiences.length === 0 ? content.issuer : audiences.length === 1 ? audiences[0] : [...audiences],
    sub: content.subject,
    client_id: content.clientId,
    iat: toNumericDate(content.issuedAt),
    jti: content.jti,
    scope: content.scope,
  };
  if (authentication) {
    claims.auth_time = toNumericDate(authentication.authTime);
    claims.amr = [...authentication.amr];
    if (authentication.acr !== undefined) claims.acr = authentication.acr;
  }
  return signJwt(claims, key, JWT_ACCESS_TOKEN_TYP);
}
