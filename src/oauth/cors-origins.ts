/**
 * The origins a cross-origin page may send a CORS preflight from (Fetch Standard §3.2): those of
 * every active client (corsOriginsOf: its `allowed_cors_origins`, else the origins of its web
 * redirect URIs). A preflight cannot name its client, so it is allowed for an origin of SOME
 * active client; src/http/plugins/cors.ts caches this union (CorsOriginSet).
 */
import { corsOriginsOf } from './client-cors.ts';
import type { OAuthDeps } from './deps.ts';

export async function activeClientOrigins(deps: Pick<OAuthDeps, 'store'>): Promise<ReadonlySet<string>> {
  return new Set((await deps.store.clients.list()).filter((client) => client.active).flatMap(corsOriginsOf));
}
