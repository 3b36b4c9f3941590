import type { Client, ClientAuthMethod } from '../../domain/client.ts';
import type { Clock } from '../../lib/clock.ts';
import type { AssertionStore } from '../../storage/ports.ts';
import type { RawParams } from '../params.ts';

/** What a request presents for client authentication, and where it comes from. */
export interface ClientAuthRequest {
  authorization: string | undefined;
  body: RawParams;
  /** The client address (throttling); undefined when unknown. */
  ip?: string | undefined;
}

/**
 * The credentials a method read from the request: the client_id it names and what proves it —
 * a shared secret (client_secret_basic, client_secret_post) or a client assertion, a JWT
 * (private_key_jwt, client_secret_jwt; RFC 7523 §2.2). `none` presents neither.
 */
export interface Presented {
  clientId: string;
  secret?: string | undefined;
  assertion?: string | undefined;
}

/**
 * The endpoint being called, as its handler passes it: whether it admits public clients and its
 * own URL, which a client assertion may name as its `aud` (RFC 7523 §3 item 3). A new endpoint
 * that authenticates clients (the device authorization endpoint, RFC 8628 §3.1) passes its own.
 */
export interface ClientAuthEndpointContext {
  allowPublic: boolean;
  url: string;
}

/**
 * A JSON Web Key Set at a client's `jwks_uri` (RFC 7591 §2), fetched and cached by the
 * implementation src/adapters/remote-jwks.ts, built in app.ts. Throws JwksUnavailable when the set
 * cannot be had (not https, unreachable, too slow, too large, not a key set).
 */
export interface JwksFetcher {
  /**
   * The key set at `uri`, from the cache while it is fresh. `refresh`: the caller met a `kid` the
   * cached set lacks (the client rotated its keys): fetch again, unless the set was fetched too
   * recently — refetches are rate-limited per URI, so an attacker sending unknown kids cannot make
   * gatehouse fetch once per request.
   */
  get(uri: string, options?: { refresh?: boolean }): Promise<JwksDocument>;
}

/** A JWK Set as fetched: public keys only (src/adapters/remote-jwks.ts drops anything else). */
export interface JwksDocument {
  keys: Record<string, unknown>[];
}

/** The key set at a jwks_uri cannot be used; the client is then refused with invalid_client. */
export class JwksUnavailable extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'JwksUnavailable';
  }
}

/**
 * What a method may need to verify, and nothing more: built once in app.ts (the composition
 * root) and handed in, never imported from the storage or HTTP layers.
 */
export interface ClientAuthDeps {
  clock: Clock;
  /** The issuer identifier: an assertion's `aud` may name it (RFC 7523 §3 item 3). */
  issuer: string;
  /** Fetches clients' jwks_uri (private_key_jwt). */
  jwks: JwksFetcher;
  /** Records each assertion's jti, once across every instance (RFC 7523 §3 item 7). */
  assertions: Pick<AssertionStore, 'useOnce'>;
  /** GATEHOUSE_KEY_ENCRYPTION_KEY: opens client_secret_jwt secrets; undefined when not configured. */
  keyEncryptionKey: string | undefined;
}

/**
 * What a method may need from this server's configuration to work at all. `keyEncryptionKey`:
 * GATEHOUSE_KEY_ENCRYPTION_KEY, with which a client_secret_jwt client's secret is sealed at
 * registration and opened to check an assertion (docs/decisions.md J1).
 */
export type ClientAuthRequirement = 'keyEncryptionKey';

/**
 * How a client registered with a method holds its secret (RFC 6749 §2.3.1, OIDC Core §9), so
 * registration knows whether to issue one and how to keep it:
 * - `hashed`: the client presents the secret itself (client_secret_basic, client_secret_post);
 *   gatehouse keeps its SHA-256 only.
 * - `sealed`: the client proves it knows the secret by an HMAC keyed with it (client_secret_jwt),
 *   which a hash cannot check: kept sealed with GATEHOUSE_KEY_ENCRYPTION_KEY as well
 *   (docs/decisions.md J1).
 * - `none`: no secret — a public client (`none`) or one proving itself with its private key
 *   (private_key_jwt).
 */
export type ClientSecretKind = 'hashed' | 'sealed' | 'none';

/** Which requirements this server's configuration meets (clientAuthSetup in registry.ts builds it from the config). */
export type ClientAuthSetup = Readonly<Record<ClientAuthRequirement, boolean>>;

/**
 * A client authentication method (RFC 6749 §2.3, OIDC Core §9, RFC 7523 §2.2): how a request
 * using it is recognised, what it reads, and how the client it names is verified. The endpoints,
 * their repeated-parameter checks and discovery's *_auth_methods_supported and
 * *_auth_signing_alg_values_supported come from the list in registry.ts, so a method exists in
 * one place.
 */
export interface ClientAuthMethodHandler {
  method: ClientAuthMethod;
  /** Every body parameter `detect` and `present` read; src/oauth/registries.test.ts checks it. */
  params: readonly string[];
  /** A public client's method (RFC 6749 §2.1): not accepted where an endpoint needs a confidential client. */
  public: boolean;
  /** How a client registered with this method holds its secret: registration issues and keeps one from it (client-registration.ts). */
  secret: ClientSecretKind;
  /** The credentials came in the Authorization header: a 401 then carries WWW-Authenticate (RFC 6749 §5.2). */
  usedBasic: boolean;
  /**
   * What the configuration must provide for the method to work (empty: nothing). Where it does
   * not, discovery does not offer the method nor its algorithms: no client could register it or
   * authenticate with it.
   */
  requires: readonly ClientAuthRequirement[];
  /** The JWS algorithms of the client assertions this method accepts (RFC 8414 §2, *_auth_signing_alg_values_supported); empty for methods without one. */
  signingAlgs: readonly string[];
  /** Whether the request uses this method. Methods are tried in registry order; the first that matches reads the request. */
  detect(request: ClientAuthRequest): boolean;
  /** Reads the credentials, without checking them; throws InvalidClient / InvalidRequest when they are malformed. */
  present(request: ClientAuthRequest): Presented;
  /**
   * Checks the presented credentials against the registered (active) client; throws InvalidClient.
   * Called only once authenticateClient (client-auth.ts) has found that the client registered this
   * method and that the endpoint admits it: `verify` checks the credentials, nothing else. May be asynchronous (a jwks_uri fetch, the jti store); `deps` is all it may use.
   */
  verify(client: Client, presented: Presented, endpoint: ClientAuthEndpointContext, deps: ClientAuthDeps): void | Promise<void>;
}

/** The longest client_id or secret looked at: longer ones are refused before any lookup. */
export const MAX_CREDENTIAL_LENGTH = 512;
