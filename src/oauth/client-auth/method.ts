import type { Client, ClientAuthMethod } from '../../domain/client.ts';
import type { RawParams } from '../params.ts';

/** What a request presents for client authentication, and where it comes from. */
export interface ClientAuthRequest {
  authorization: string | undefined;
  body: RawParams;
  /** The client address (throttling); undefined when unknown. */
  ip?: string | undefined;
}

/** The credentials a method read from the request. */
export interface Presented {
  clientId: string;
  secret: string | undefined;
}

/**
 * A client authentication method (RFC 6749 §2.3, OIDC Core §9): how a request using it is
 * recognised, what it reads, and how the client it names is verified. The endpoints, their
 * repeated-parameter checks and discovery's *_auth_methods_supported come from the list in
 * registry.ts, so a method exists in one place.
 */
export interface ClientAuthMethodHandler {
  method: ClientAuthMethod;
  /** Every body parameter `detect` and `present` read; test/oauth/registries.test.ts checks it. */
  params: readonly string[];
  /** A public client's method (RFC 6749 §2.1): not accepted where an endpoint needs a confidential client. */
  public: boolean;
  /** The credentials came in the Authorization header: a 401 then carries WWW-Authenticate (RFC 6749 §5.2). */
  usedBasic: boolean;
  /** Whether the request uses this method. Methods are tried in registry order; the first that matches reads the request. */
  detect(request: ClientAuthRequest): boolean;
  /** Reads the credentials; throws InvalidClient / InvalidRequest when they are malformed. */
  present(request: ClientAuthRequest): Presented;
  /** Checks the presented credentials against the registered (active) client; throws InvalidClient. */
  verify(client: Client, presented: Presented, options: { allowPublic: boolean }): void;
}

/** The longest client_id or secret looked at: longer ones are refused before any lookup. */
export const MAX_CREDENTIAL_LENGTH = 512;
