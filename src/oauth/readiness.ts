/**
 * Readiness (src/http/health.ts): whether this instance can do its work. The store's part is asked
 * here, so the HTTP layer reaches the store only through use cases (issue 23, item 2).
 */
import type { OAuthDeps } from './deps.ts';

/** Resolves when the store answers; rejects (the store's own error) when it does not. */
export async function storeReady(deps: Pick<OAuthDeps, 'store'>): Promise<void> {
  await deps.store.ping();
}
