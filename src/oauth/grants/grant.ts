import type { Client, GrantType } from '../../domain/client.ts';
import type { OAuthDeps } from '../deps.ts';
import type { TokenResponse } from '../issue-tokens.ts';
import type { RawParams } from '../params.ts';

/**
 * A grant the token endpoint serves (RFC 6749 §4, §6): its `grant_type`, the body parameters it
 * reads and its handler. The token endpoint, discovery's grant_types_supported and client
 * registration's grant_types all come from the list in registry.ts, so a grant exists in one place.
 */
export interface Grant {
  type: GrantType;
  /**
   * Every body parameter the handler reads, besides grant_type and the client-auth ones. The token
   * endpoint refuses each of them repeated (RFC 6749 §3.2) before anything else runs;
   * test/oauth/registries.test.ts checks that the list is exactly what the handler reads.
   */
  params: readonly string[];
  /**
   * Body parameters the handler reads that may be sent more than once: `resource` (RFC 8707 §2),
   * which every grant takes. Not in `params`, so the token endpoint does not refuse them repeated.
   */
  repeatable: readonly string[];
  /**
   * Only confidential clients may register or use the grant (client_credentials: RFC 6749 §4.4).
   * Registration refuses it with `token_endpoint_auth_method: none`; the token endpoint answers a
   * public client unauthorized_client.
   */
  confidential?: boolean;
  /** Runs the grant for an authenticated client that registered it. `ip`: the client address (throttling, audit). */
  handle(deps: OAuthDeps, client: Client, body: RawParams, ip?: string): Promise<TokenResponse>;
}
