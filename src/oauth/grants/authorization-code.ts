import { hashSecret } from '../../lib/hash.ts';
import type { Client } from '../../domain/client.ts';
import { fingerprint } from '../../observability/audit.ts';
import type { AuthorizationCode, CodeRefusal } from '../../domain/grant.ts';
import { rememberLogoutReceiver } from '../backchannel-logout.ts';
import type { OAuthDeps } from '../deps.ts';
import { InvalidGrant, OAuthError } from '../errors.ts';
import { auditTokensIssued, finishTokens, type GrantFacts, type MintedTokens, mintTokens, type TokenResponse, withIdToken } from '../issue-tokens.ts';
import { param, requiredParam, type RawParams } from '../params.ts';
import { verifyPkce } from '../pkce.ts';
import { narrowToResources, parseResources, RESOURCE_PARAM, resourceServers } from '../resource.ts';
import { checkGrantedAudiences } from '../scope.ts';
import type { Grant } from './grant.ts';
import { activeUser } from './load-user.ts';

/** What the unit of work that redeems a code decided; answered once it has committed. */
type Redeemed =
  | { outcome: 'unknown' }
  | { outcome: 'replayed'; code: AuthorizationCode; revoked: number }
  | { outcome: 'retried'; code: AuthorizationCode; refusedFor: CodeRefusal }
  | { outcome: 'refused'; error: OAuthError }
  | { outcome: 'issued'; grant: GrantFacts; minted: MintedTokens; nonce: string | undefined };

/**
 * The authorization_code grant (RFC 6749 §4.1.3). Any redemption attempt consumes the code; a
 * second one is refused and revokes every token issued from it (the spec's rule; RFC 9700 §4.2.4).
 * The code is bound to the client, the redirect_uri, the PKCE challenge and the nonce.
 *
 * Consuming the code and storing its tokens are one unit of work (Store.transaction): a replay or
 * a logout that overlaps the redemption runs wholly before it (and the redemption is refused) or
 * wholly after it (and revokes the tokens it stored). A refused redemption still commits: the code
 * stays spent, and the unit records why, so that the client's retry (a wrong code_verifier, then
 * the right one) is reported as `code.retried`, not as the replay of a stolen code
 * (docs/decisions.md, back channel 17).
 */
export const authorizationCodeGrant = {
  type: 'authorization_code',
  params: ['code', 'redirect_uri', 'code_verifier'],
  repeatable: [RESOURCE_PARAM],
  handle: redeemCode,
} as const satisfies Grant;

async function redeemCode(deps: OAuthDeps, client: Client, body: RawParams, ip?: string): Promise<TokenResponse> {
  const code = requiredParam(body, 'code');
  const redirectUri = requiredParam(body, 'redirect_uri');
  const verifier = param(body, 'code_verifier');
  const resources = parseResources(body);
  const now = deps.clock.now();
  const codeHash = hashSecret(code);
  // RFC 8707 §2.2: resource narrows the access token to audiences the code holds. Resolved before
  // the code is consumed, so a malformed or unknown resource leaves it usable.
  const servers = await resourceServers(deps.store.clients, resources);

  const redeemed = await deps.store.transaction(async (tx): Promise<Redeemed> => {
    const redemption = await tx.codes.consumeOnce(codeHash, now);
    if (redemption.outcome === 'unknown') return { outcome: 'unknown' };
    // A code spent by a refused redemption never had tokens: nothing to revoke, and not a replay.
    if (redemption.outcome === 'replayed' && redemption.refusedFor) return { outcome: 'retried', code: redemption.code, refusedFor: redemption.refusedFor };
    if (redemption.outcome === 'replayed') return { outcome: 'replayed', code: redemption.code, revoked: await tx.tokens.revokeFamily(codeHash, now) };
    const bound = redemption.code;
    // Which check is running, recorded with the refusal when it throws.
    let check: CodeRefusal = 'client_id';
    try {
      if (bound.clientId !== client.clientId) throw new InvalidGrant('The authorization code was issued to another client.');
      check = 'expired';
      if (now >= bound.expiresAt) throw new InvalidGrant('The authorization code has expired.');
      check = 'redirect_uri';
      if (bound.redirectUri !== redirectUri) throw new InvalidGrant('redirect_uri differs from the one in the authorization request.');
      check = 'code_verifier';
      verifyPkce(bound, verifier);
      check = 'user';
      // Read with the code by the redeeming UPDATE (PR13), in this unit of work as before.
      const user = activeUser(redemption.user);
      check = 'scope';
      const granted = bound.scope === '' ? [] : bound.scope.split(' ');
      const scope = await narrowToResources(tx.clients, granted, granted, servers, resources);
      // The authorization endpoint checked the audiences against `aud`; the client may have changed since.
      await checkGrantedAudiences(tx.clients, client, scope);
      // The family is named by the code's hash, so a replay finds every token descending from it.
      const grant: GrantFacts = { client, user, scope, sessionIndex: bound.sessionIndex, authTime: bound.authTime, amr: bound.amr, acr: bound.acr, codeHash, familyId: codeHash };
      // The refresh token carries the whole grant (RFC 8707 §2.2): later refreshes may ask for any of its audiences.
      const minted = await mintTokens(deps, grant, { refreshScope: issuesRefreshTokens(client) ? granted : undefined }, tx);
      await tx.tokens.insertMany(minted.rows);
      // Back-Channel Logout 1.0 §2.3: the session's end will tell this client (LO3).
      await rememberLogoutReceiver(tx, client, bound.sessionIndex, now);
      return { outcome: 'issued', grant, minted, nonce: bound.nonce };
    } catch (error) {
      // Refused after the code was consumed: commit, so the code stays spent, and say why.
      if (!(error instanceof OAuthError)) throw error;
      await tx.codes.markRefused(codeHash, check);
      return { outcome: 'refused', error };
    }
  });

  if (redeemed.outcome === 'unknown') throw new InvalidGrant('The authorization code is invalid.');
  if (redeemed.outcome === 'refused') throw redeemed.error;
  if (redeemed.outcome === 'retried') {
    const { code: spent, refusedFor } = redeemed;
    deps.audit.emit({ event: 'code.retried', clientId: client.clientId, codeClientId: spent.clientId, userId: spent.userId, code: fingerprint(code), refusedFor, ip });
    throw new InvalidGrant('The authorization code was spent by an earlier, refused redemption; start a new authorization request.', { detail: `code retried after a refusal (${refusedFor})` });
  }
  if (redeemed.outcome === 'replayed') {
    const { code: replayed, revoked } = redeemed;
    deps.audit.emit({ event: 'code.replayed', clientId: client.clientId, codeClientId: replayed.clientId, userId: replayed.userId, code: fingerprint(code), revoked, ip });
    throw new InvalidGrant('The authorization code has already been used.', { detail: `code replay; ${revoked} token(s) revoked` });
  }
  const { grant, minted } = redeemed;
  const tokens = await finishTokens(deps, minted);
  const response = grant.scope.includes('openid') ? await withIdToken(deps, grant, tokens, redeemed.nonce) : tokens;
  auditTokensIssued(deps, 'authorization_code', grant, response, ip);
  return response;
}

export function issuesRefreshTokens(client: Client): boolean {
  return client.refreshTokens && client.grantTypes.includes('refresh_token');
}
