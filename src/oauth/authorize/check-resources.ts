import type { Client } from '../../domain/client.ts';
import type { OAuthDeps } from '../deps.ts';
import type { RawParams } from '../params.ts';
import { allowedResourceAudiences, parseResources, withAudiences } from '../resource.ts';

/**
 * RFC 8707 §2 at the authorization endpoint: each `resource` (repeatable) must be an absolute URI
 * without a fragment, a registered resource URI, of an active resource server in the client's
 * `aud`; otherwise invalid_target, redirected like every error after the redirect_uri is verified.
 * The servers' client_ids join the granted scope (audiences are scope values, scope.ts); the
 * values are kept for the login form to carry.
 */
export async function checkResources(deps: OAuthDeps, client: Client, raw: RawParams, scope: readonly string[]): Promise<{ scope: string[]; resources: string[] }> {
  const resources = parseResources(raw);
  return { scope: withAudiences(scope, await allowedResourceAudiences(deps.store.clients, client, resources)), resources };
}
