/**
 * What an authorization code carries to the token endpoint: everything the code is bound to
 * (client, redirect_uri, PKCE challenge, nonce, scope, SSO session) and the authentication facts.
 */
export interface AuthorizationCode {
  codeHash: string;
  clientId: string;
  userId: string;
  redirectUri: string;
  scope: string;
  nonce: string | undefined;
  codeChallenge: string | undefined;
  codeChallengeMethod: 'S256' | 'plain' | undefined;
  sessionIndex: string;
  authTime: number;
  amr: string[];
  acr: string | undefined;
  createdAt: number;
  expiresAt: number;
  consumedAt: number | undefined;
}

/**
 * Why a redemption was refused after it consumed its code: the binding that did not hold
 * (RFC 6749 §4.1.3, RFC 7636 §4.6), an inactive user, or a scope the client may no longer have.
 */
export type CodeRefusal = 'client_id' | 'expired' | 'redirect_uri' | 'code_verifier' | 'user' | 'scope';

export type TokenKind = 'access_token' | 'refresh_token';

/** What every stored token carries, whoever its subject is. */
interface TokenCommon {
  tokenHash: string;
  kind: TokenKind;
  clientId: string;
  scope: string;
  /** Hash of the code the token descends from. */
  codeHash: string | undefined;
  /**
   * The tokens descending from one code exchange, refreshed and rotated ones included, form a
   * family, named by that code's hash: a replay of the code (RFC 9700 §4.2.4) or the reuse of a
   * rotated refresh token (§4.14.2) revokes the whole family. A token of no code is a family of
   * its own.
   */
  familyId: string;
  createdAt: number;
  expiresAt: number | undefined;
  revokedAt: number | undefined;
  /** For refresh tokens: when it was exchanged for a successor. */
  rotatedAt: number | undefined;
}

/** A token whose subject is a user: issued on the user's authentication in an SSO session. */
export interface UserToken extends TokenCommon {
  userId: string;
  sessionIndex: string;
  authTime: number;
  amr: string[];
  acr: string | undefined;
}

/**
 * A token whose subject is the client itself (client_credentials, RFC 6749 §4.4): no user, no
 * session, no authentication of anyone but the client. The user fields are there, undefined, so
 * that `token.userId === undefined` tells the two apart and narrows the type.
 */
export interface ClientToken extends TokenCommon {
  userId: undefined;
  sessionIndex: undefined;
  authTime: undefined;
  amr: undefined;
  acr: undefined;
}

/** A stored access or refresh token: its subject is a user or a client. */
export type Token = UserToken | ClientToken;

/** Whether the token's subject is its client (no user). */
export function isClientToken(token: Token): token is ClientToken {
  return token.userId === undefined;
}
