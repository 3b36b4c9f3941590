import type { Client, GrantType } from '../domain/client.ts';
import type { ClientToken, Token } from '../domain/grant.ts';
import type { UserProfile } from '../domain/user.ts';
import { leftHalfHash } from '../crypto/algorithms.ts';
import type { SigningAlg } from '../protocol/constants.ts';
import { signJwt } from '../crypto/jwt.ts';
import type { ClientStore } from '../storage/ports.ts';
import { toNumericDate } from '../lib/clock.ts';
import { hashSecret } from '../lib/hash.ts';
import { familyFingerprint, fingerprint } from '../observability/audit.ts';
import { scopeClaims, wantsScopeClaimsInIdToken } from './claims.ts';
import { sessionIdFor } from './sid.ts';
import type { OAuthDeps } from './deps.ts';
import { accessTokenForm, signAccessToken, type AccessTokenAuthentication, type AccessTokenContent } from './jwt-access-token.ts';
import { policyClaims, readPolicy, type PolicyFacts, type PolicyReader } from './policy/evaluate.ts';
import { formatScope } from './scope.ts';

/** The token response of the spec's table (RFC 6749 §5.1). */
export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  scope: string;
  id_token?: string;
  refresh_token?: string;
}

/** The authentication behind a grant, carried from the code to every token descending from it. */
export interface GrantFacts {
  client: Client;
  user: UserProfile;
  scope: string[];
  sessionIndex: string;
  authTime: number;
  amr: string[];
  acr: string | undefined;
  codeHash: string | undefined;
  familyId: string;
  /** The client's policy as the grant already read it (its access check); read for the ID token otherwise. */
  policy?: PolicyFacts | undefined;
}

export interface IssueOptions {
  /** Issue a new refresh token carrying this scope (the grant's full scope, RFC 9700 §4.14.2). */
  refreshScope?: string[];
  /** Echo this refresh token back unchanged (no rotation). */
  keepRefreshToken?: string;
}

/**
 * Longest token a client may present anywhere (UserInfo, introspection, revocation, the identity
 * API): room for a JWT access token (RFC 9068) with policy claims; also the longest form value
 * (src/http/params.ts MAX_VALUE_LENGTH). Anything longer is no token gatehouse issued.
 */
export const MAX_TOKEN_LENGTH = 8192;

/** Lifetime of the client's access tokens: the smaller of the global and the client's own (seconds). */
export function accessTokenLifetime(deps: Pick<OAuthDeps, 'config'>, client: Client): number {
  return client.accessTokenTtl === undefined ? deps.config.accessTokenTtl : Math.min(client.accessTokenTtl, deps.config.accessTokenTtl);
}

/** The tokens of one successful grant: the rows to store (hashes only) and the response to send. */
export interface MintedTokens {
  rows: Token[];
  response: TokenResponse;
  /** A JWT access token still to sign: `response.access_token` is a placeholder until finishTokens. */
  pendingJwt?: PendingJwt;
}

/** A JWT access token decided in a unit of work, stored under `placeholderHash`, signed after it (finishTokens). */
interface PendingJwt {
  placeholderHash: string;
  alg: SigningAlg;
  content: AccessTokenContent;
  extraClaims: Readonly<Record<string, unknown>> | undefined;
}

/**
 * What minting an access token needs besides the grant (jwt-access-token.ts): where the
 * audiences' registrations and the client's authorization policy are read — the unit of work's
 * view, so the form, the claims and the row agree.
 */
export type MintContext = { clients: Pick<ClientStore, 'get' | 'resourceScopeOwners'> } & PolicyReader;

/**
 * The access token of a grant and its lifetime in seconds: opaque, or — for a resource server
 * that asked for one — a JWT (RFC 9068), whose content is decided here and signed later: the
 * returned `accessToken` is then a random placeholder, the key of the row until finishTokens.
 */
async function mintAccessToken(
  deps: Pick<OAuthDeps, 'config' | 'random'>,
  context: MintContext,
  grant: { client: Client; scope: string[]; subject: string; authentication: AccessTokenAuthentication | undefined; policyClaims: () => Promise<Record<string, unknown>> },
  now: number,
): Promise<{ accessToken: string; lifetime: number; pendingJwt?: PendingJwt }> {
  const form = await accessTokenForm(context.clients, deps.config, grant.scope);
  const lifetime = accessTokenLifetime(deps, grant.client);
  const accessToken = deps.random.token(32);
  if (form.format === 'opaque') return { accessToken, lifetime };
  // A JWT cannot be recalled from a resource server that validates it locally: it lives briefly (config.ts).
  const jwtLifetime = Math.min(lifetime, deps.config.jwtAccessTokenTtl);
  const content: AccessTokenContent = {
    issuer: deps.config.issuer,
    audiences: form.audiences,
    subject: grant.subject,
    clientId: grant.client.clientId,
    scope: formatScope(grant.scope),
    jti: deps.random.token(16),
    issuedAt: now,
    expiresAt: now + jwtLifetime * 1000,
    authentication: grant.authentication,
  };
  return { accessToken, lifetime: jwtLifetime, pendingJwt: { placeholderHash: hashSecret(accessToken), alg: form.alg, content, extraClaims: await grant.policyClaims() } };
}

/**
 * The response of tokens stored by a grant's unit of work, once it has committed: a JWT access
 * token is signed now, outside the unit (which must not sign: on SQLite it holds the write lock),
 * and its row, stored under a placeholder, is keyed by the JWT's hash in one statement — so the
 * row existed exactly when the grant's change did, and a revocation in between (a code replay, a
 * logout) stays on it (docs/decisions.md JA6). The placeholder is never handed out.
 */
export async function finishTokens(deps: Pick<OAuthDeps, 'keyRing' | 'store'>, minted: MintedTokens): Promise<TokenResponse> {
  const pending = minted.pendingJwt;
  if (!pending) return minted.response;
  const accessToken = await signAccessToken(await deps.keyRing.activeKey(pending.alg), pending.content, pending.extraClaims);
  if (!(await deps.store.tokens.rekey(pending.placeholderHash, hashSecret(accessToken)))) throw new Error('the access token row to key by the JWT is gone');
  return { ...minted.response, access_token: accessToken };
}

/**
 * Mints the tokens of one successful grant without storing them: the grant stores `rows` in the
 * unit of work that consumed its code or rotated its refresh token, so the tokens exist exactly
 * when that change does (src/storage/ports.ts, Store.transaction), then answers finishTokens.
 */
export async function mintTokens(deps: Pick<OAuthDeps, 'config' | 'clock' | 'random'>, grant: GrantFacts, options: IssueOptions, context: MintContext): Promise<MintedTokens> {
  const now = deps.clock.now();
  // The policy's access_token claims (docs/authorization.md), read only for a JWT: an opaque token carries none.
  const policyClaimsOfJwt = async () => policyClaims(grant.policy ?? (await readPolicy(context, grant.client.authorizationPolicy, grant.user.id, { forAccess: false })), grant.user, 'access_token', grant.scope);
  const { accessToken, lifetime, pendingJwt } = await mintAccessToken(deps, context, { client: grant.client, scope: grant.scope, subject: grant.user.id, authentication: grant, policyClaims: policyClaimsOfJwt }, now);
  const base = {
    clientId: grant.client.clientId,
    userId: grant.user.id,
    sessionIndex: grant.sessionIndex,
    authTime: grant.authTime,
    amr: grant.amr,
    acr: grant.acr,
    codeHash: grant.codeHash,
    familyId: grant.familyId,
    createdAt: now,
    revokedAt: undefined,
    rotatedAt: undefined,
  } satisfies Partial<Token>;
  const rows: Token[] = [{ ...base, tokenHash: hashSecret(accessToken), kind: 'access_token', scope: formatScope(grant.scope), expiresAt: now + lifetime * 1000 }];

  const response: TokenResponse = { access_token: accessToken, token_type: 'Bearer', expires_in: lifetime, scope: formatScope(grant.scope) };
  if (options.refreshScope) {
    const refreshToken = deps.random.token(32);
    const ttl = deps.config.refreshTokenTtl;
    rows.push({ ...base, tokenHash: hashSecret(refreshToken), kind: 'refresh_token', scope: formatScope(options.refreshScope), expiresAt: ttl === 0 ? undefined : now + ttl * 1000 });
    response.refresh_token = refreshToken;
  } else if (options.keepRefreshToken) {
    response.refresh_token = options.keepRefreshToken;
  }
  return { rows, response, ...(pendingJwt ? { pendingJwt } : {}) };
}

/** A grant whose token's subject is the client itself (client_credentials): no user, no session. */
export interface ClientGrantFacts {
  client: Client;
  scope: string[];
}

/**
 * Mints the one access token of a client's own grant without storing it: no refresh token (RFC
 * 6749 §4.4.3), no user fields (ClientToken). No code: the token is a family of its own, named by
 * its hash, so revoking it (RFC 7009) touches nothing else. As a JWT its `sub` is the client_id
 * (RFC 9068 §2.2).
 */
export async function mintClientToken(deps: Pick<OAuthDeps, 'config' | 'clock' | 'random' | 'keyRing'>, grant: ClientGrantFacts, context: MintContext): Promise<MintedTokens> {
  const now = deps.clock.now();
  // A policy maps claims about users: a client's own token has none to carry.
  const minted = await mintAccessToken(deps, context, { client: grant.client, scope: grant.scope, subject: grant.client.clientId, authentication: undefined, policyClaims: async () => ({}) }, now);
  const { lifetime, pendingJwt } = minted;
  // No unit of work here: a JWT is signed before its row is stored, keyed by its hash at once.
  const accessToken = pendingJwt ? await signAccessToken(await deps.keyRing.activeKey(pendingJwt.alg), pendingJwt.content, pendingJwt.extraClaims) : minted.accessToken;
  const tokenHash = hashSecret(accessToken);
  const row: ClientToken = {
    tokenHash,
    kind: 'access_token',
    clientId: grant.client.clientId,
    userId: undefined,
    sessionIndex: undefined,
    authTime: undefined,
    amr: undefined,
    acr: undefined,
    scope: formatScope(grant.scope),
    codeHash: undefined,
    familyId: tokenHash,
    createdAt: now,
    expiresAt: now + lifetime * 1000,
    revokedAt: undefined,
    rotatedAt: undefined,
  };
  return { rows: [row], response: { access_token: accessToken, token_type: 'Bearer', expires_in: lifetime, scope: row.scope } };
}

/**
 * The audit event of a user grant's tokens, once they are stored: which client, user, scope and
 * family, and fingerprints of the tokens (never the tokens, docs/operations.md "Audit events").
 */
export function auditTokensIssued(deps: Pick<OAuthDeps, 'audit'>, grantType: UserGrantType, grant: GrantFacts, response: TokenResponse, ip: string | undefined): void {
  deps.audit.emit({
    event: 'token.issued',
    grantType,
    clientId: grant.client.clientId,
    userId: grant.user.id,
    scope: response.scope,
    family: familyFingerprint(grant.familyId),
    accessToken: fingerprint(response.access_token),
    refreshToken: response.refresh_token === undefined ? undefined : fingerprint(response.refresh_token),
    idToken: response.id_token !== undefined,
    ip,
  });
}

/** The grants whose tokens have a user as their subject (client_credentials audits its own shape). */
type UserGrantType = Exclude<GrantType, 'client_credentials' | 'refresh_token'>;

/** Adds the ID token to a response whose tokens are stored (code grant with the openid scope). */
export async function withIdToken(deps: OAuthDeps, grant: GrantFacts, response: TokenResponse, nonce: string | undefined): Promise<TokenResponse> {
  return { ...response, id_token: await signIdToken(deps, grant, response.access_token, nonce, deps.clock.now()) };
}

/** OIDC Core §2 and §3.1.3.6, the logout specs' sid, plus Ubisecure's session_index; signed with the client's id_token_signed_response_alg. */
async function signIdToken(deps: OAuthDeps, grant: GrantFacts, accessToken: string, nonce: string | undefined, now: number): Promise<string> {
  const iat = toNumericDate(now);
  const alg = grant.client.idTokenSignedResponseAlg;
  const claims: Record<string, unknown> = {
    iss: deps.config.issuer,
    sub: grant.user.id,
    aud: grant.client.clientId,
    exp: iat + deps.config.idTokenTtl,
    iat,
    auth_time: toNumericDate(grant.authTime),
    amr: grant.amr,
    session_index: grant.sessionIndex,
    // Front-Channel Logout 1.0 §3, Back-Channel Logout 1.0 §2.4: the RP keys its session by it.
    sid: sessionIdFor(grant.sessionIndex, grant.client.clientId),
    azp: grant.client.clientId,
    at_hash: atHash(accessToken, alg),
    ...(nonce === undefined ? {} : { nonce }),
    ...(grant.acr === undefined ? {} : { acr: grant.acr }),
    ...(wantsScopeClaimsInIdToken(grant.client) ? scopeClaims(grant.user, grant.scope) : {}),
    // The policy's id_token claims (docs/authorization.md); they override scope claims of the same name and can name no claim above.
    ...policyClaims(grant.policy ?? (await readPolicy(deps.store, grant.client.authorizationPolicy, grant.user.id, { forAccess: false })), grant.user, 'id_token', grant.scope),
  };
  return signJwt(claims, await deps.keyRing.activeKey(alg));
}

/** OIDC Core §3.1.3.6: the left half of the access token's hash under the ID token's alg, base64url. */
export function atHash(accessToken: string, alg: SigningAlg): string {
  return leftHalfHash(accessToken, alg);
}
