import type { OAuthDeps } from '../deps.ts';
import { verifyIdTokenHint } from '../id-token-hint.ts';

/**
 * id_token_hint in an authorization request (OIDC Core §3.1.2.1): one of our ID tokens, expired
 * or not, naming the user the client expects. Returns its `sub`; the session must belong to it.
 */
export async function checkIdTokenHint(deps: Pick<OAuthDeps, 'config' | 'keyRing' | 'clock'>, hint: string | undefined): Promise<string | undefined> {
  return hint === undefined ? undefined : (await verifyIdTokenHint(deps, hint)).sub;
}
