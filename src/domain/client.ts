import type { SigningAlg } from '../protocol/constants.ts';

/**
 * Client authentication methods a client may register (RFC 6749 §2.3, OIDC Core §9). The runtime
 * list is the registry src/oauth/client-auth/registry.ts, which must implement exactly these (checked by the compiler there).
 */
export type ClientAuthMethod = 'client_secret_basic' | 'client_secret_post' | 'client_secret_jwt' | 'private_key_jwt' | 'none';

/** Grant types a client may register; the runtime list is the registry src/oauth/grants/registry.ts (exactly these, checked there). */
export type GrantType = 'authorization_code' | 'refresh_token' | 'client_credentials' | 'password' | 'urn:ietf:params:oauth:grant-type:device_code';

export const PKCE_METHODS = ['S256', 'plain'] as const;
export type PkceMethod = (typeof PKCE_METHODS)[number];

/** A registered OAuth client. Wire names live in `metadata`; typed columns drive behaviour. */
export interface Client {
  clientId: string;
  name: string;
  /** SHA-256 of the generated secret; undefined for public clients. */
  secretHash: string | undefined;
  /**
   * client_secret_jwt only: the secret sealed with GATEHOUSE_KEY_ENCRYPTION_KEY
   * (src/crypto/key-encryption.ts), because the HMAC of an assertion is keyed by the secret itself
   * (RFC 7523 §2.2 with OIDC Core §9) and a hash cannot check it. undefined for every other client.
   */
  secretSealed?: string | undefined;
  active: boolean;
  redirectUris: string[];
  /** undefined: either secret method is accepted (Ubisecure's detection). */
  tokenEndpointAuthMethod: ClientAuthMethod | undefined;
  grantTypes: GrantType[];
  /** The client's registered `code_challenge_method`; when set, PKCE is required. */
  codeChallengeMethod: PkceMethod | undefined;
  /** Space-separated scope values the client may request; undefined: any supported value. */
  scope: string | undefined;
  /** Whether refresh tokens are issued to this client. */
  refreshTokens: boolean;
  /** Whether confidential clients get a new refresh token on each use (public clients always do). */
  rotateRefreshTokens: boolean;
  /** Client-specific access token lifetime in seconds (min with the global one). */
  accessTokenTtl: number | undefined;
  postLogoutRedirectUris: string[];
  /** What its ID tokens are signed with (OIDC Registration §2; RS256 unless it registered another). */
  idTokenSignedResponseAlg: SigningAlg;
  /** When set, UserInfo answers it a JWT signed with this (OIDC Core §5.3.2); else plain JSON. */
  userinfoSignedResponseAlg: SigningAlg | undefined;
  /**
   * The name of its authorization policy (client metadata `authorization_policy`,
   * src/domain/policy.ts): who may use it and which extra claims it gets. Absent: none.
   */
  authorizationPolicy?: string | undefined;
  /** The client metadata document as registered (snake_case wire names), without secrets. */
  metadata: Record<string, unknown>;
  createdAt: number;
  updatedAt: number;
}

export function isPublicClient(client: Client): boolean {
  return client.tokenEndpointAuthMethod === 'none';
}

/**
 * The default grant types when a client registers none: Ubisecure's defaults less the password
 * grant, which a client gets only by registering it (RFC 9700 §2.4; docs/decisions.md PW1).
 */
export function defaultGrantTypes(authMethod: ClientAuthMethod | undefined): GrantType[] {
  return authMethod === 'none' ? ['authorization_code'] : ['authorization_code', 'refresh_token'];
}

/**
 * Whether the client registered `application_type: "native"` (OIDC Registration §2; the default is
 * "web"): only a native app gets RFC 8252 §7.3's any-port loopback redirect, since only it picks
 * its listening port at run time. Read from the stored metadata; anything else is a web client.
 */
export function isNativeClient(client: Pick<Client, 'metadata'>): boolean {
  return client.metadata.application_type === 'native';
}

/** Whether the client is a resource server (`resource_server: true`); read from the stored metadata, anything else is false. */
export function isResourceServer(client: Pick<Client, 'metadata'>): boolean {
  return client.metadata.resource_server === true;
}

/** The resource server's registered `resource_uris` (docs/decisions.md RI1) (none for any other client; a malformed stored value: none). */
export function resourceUrisOf(client: Pick<Client, 'metadata'>): string[] {
  const uris = client.metadata.resource_uris;
  if (!isResourceServer(client) || !Array.isArray(uris)) return [];
  return uris.filter((uri): uri is string => typeof uri === 'string');
}

/**
 * The scope values the resource server declared it understands (`resource_scopes`, docs/decisions.md
 * RS1): none for any other client; a malformed stored value: none.
 */
export function resourceScopesOf(client: Pick<Client, 'metadata'>): string[] {
  const scopes = client.metadata.resource_scopes;
  if (!isResourceServer(client) || !Array.isArray(scopes)) return [];
  return scopes.filter((value): value is string => typeof value === 'string');
}

/**
 * The client_ids a client may obtain as audiences (its `aud` metadata). Read from the stored
 * metadata at each use; anything but a list of strings — a row written before `aud` was validated
 * — allows nothing, so a malformed value fails closed.
 */
export function allowedAudiences(client: Pick<Client, 'metadata'>): ReadonlySet<string> {
  const aud = client.metadata.aud;
  if (!Array.isArray(aud)) return new Set();
  return new Set(aud.filter((id): id is string => typeof id === 'string'));
}

/**
 * Whether the client is third-party: its users are asked for consent before the first code
 * (src/oauth/authorize/consent.ts). Only `true` counts; absent or anything else — a row stored
 * before the key was validated — is a first-party client, the default.
 */
export function consentRequired(client: Pick<Client, 'metadata'>): boolean {
  return client.metadata.consent_required === true;
}
