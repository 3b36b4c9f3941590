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

export type TokenKind = 'access_token' | 'refresh_token';

export interface Token {
  tokenHash: string;
  kind: TokenKind;
  clientId: string;
  userId: string;
  scope: string;
  sessionIndex: string;
  authTime: number;
  amr: string[];
  acr: string | undefined;
  /** Hash of the code the token descends from. */
  codeHash: string | undefined;
  /**
   * The tokens descending from one code exchange, refreshed and rotated ones included, form a
   * family, named by that code's hash: a replay of the code (RFC 9700 §4.2.4) or the reuse of a
   * rotated refresh token (§4.14.2) revokes the whole family.
   */
  familyId: string;
  createdAt: number;
  expiresAt: number | undefined;
  revokedAt: number | undefined;
  /** For refresh tokens: when it was exchanged for a successor. */
  rotatedAt: number | undefined;
}
