/**
 * Which browser origins may read a client's answers (src/http/plugins/cors.ts). The registered
 * `allowed_cors_origins` are validated by the parser (client-metadata.ts); this reads them back.
 */
import type { Client } from '../domain/client.ts';

/**
 * The origins whose browser pages may read this client's answers (src/http/plugins/cors.ts): its
 * `allowed_cors_origins` when registered (an empty list: none), otherwise the origins of its https
 * and http redirect URIs (a private-use scheme is no web origin). Read from the stored client at
 * each use; a malformed stored value allows nothing (fails closed).
 */
export function corsOriginsOf(client: Pick<Client, 'redirectUris' | 'metadata'>): string[] {
  const listed = client.metadata.allowed_cors_origins;
  if (listed !== undefined) return Array.isArray(listed) ? listed.filter((origin): origin is string => typeof origin === 'string') : [];
  const origins = new Set<string>();
  for (const uri of client.redirectUris) {
    try {
      const url = new URL(uri);
      if (url.protocol === 'https:' || url.protocol === 'http:') origins.add(url.origin);
    } catch {
      // A stored redirect URI that no longer parses names no origin.
    }
  }
  return [...origins];
}
