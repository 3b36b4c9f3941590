import { isPublicClient, type Client } from '../../domain/client.ts';
import type { UserToken } from '../../domain/grant.ts';
import type { UserProfile } from '../../domain/user.ts';
import { hashSecret } from '../../lib/hash.ts';
import { familyFingerprint, fingerprint } from '../../observability/audit.ts';
import type { OAuthDeps } from '../deps.ts';
import { InvalidGrant } from '../errors.ts';
import { finishTokens, mintTokens, type MintedTokens, type TokenResponse } from '../issue-tokens.ts';
import { param, requiredParam, type RawParams } from '../params.ts';
import { meets } from '../levels.ts';
import { checkPolicyAccess, policyRequirement } from '../policy/evaluate.ts';
import { narrowToResources, parseResources, RESOURCE_PARAM, resourceServers } from '../resource.ts';
import { checkGrantedAudiences, narrowScope } from '../scope.ts';
import type { Grant } from './grant.ts';
import { activeUser } from './load-user.ts';

/** What the unit of work of a refresh decided; answered once it has committed. */
type Refreshed =
  | { outcome: 'reused'; token: UserToken; revoked: number; detail: string }
  | { outcome: 'issued'; token: UserToken; user: UserProfile; rotated: boolean; minted: MintedTokens };

/**
 * The refresh_token grant (RFC 6749 §6). The token is bound to its client; a narrower scope may be
 * asked for; no ID token is returned (the spec). Public clients always get a new refresh token and
 * confidential ones when configured to (RFC 9700 §4.14.2); presenting a rotated token again revokes
 * its whole family.
 *
 * Reading the token, rotating it and storing its successors are one unit of work
 * (Store.transaction): of two overlapping uses of one token, one runs wholly after the other, sees
 * the token rotated and revokes the family — the successors the first stored included. A logout
 * overlapping the refresh likewise revokes the successors, or leaves the refresh nothing to rotate.
 */
export const refreshTokenGrant = {
  type: 'refresh_token',
  params: ['refresh_token', 'scope'],
  repeatable: [RESOURCE_PARAM],
  handle: refresh,
} as const satisfies Grant;

async function refresh(deps: OAuthDeps, client: Client, body: RawParams, ip?: string): Promise<TokenResponse> {
  const presented = requiredParam(body, 'refresh_token');
  const requestedScope = param(body, 'scope');
  const resources = parseResources(body);
  const now = deps.clock.now();
  const tokenHash = hashSecret(presented);
  const servers = await resourceServers(deps.store.clients, resources);

  // Anything thrown inside rolls the unit back: a refused refresh changes nothing. Reuse returns
  // instead, so that its revocation of the family commits.
  const refreshed = await deps.store.transaction(async (tx): Promise<Refreshed> => {
    const found = await tx.tokens.findWithUser(tokenHash);
    const token = found?.token;
    // A token whose subject is its client is never a refresh token (client_credentials issues
    // none, RFC 6749 §4.4.3); were one stored, it has no user to carry on and is refused as unknown.
    if (!token || token.kind !== 'refresh_token' || token.clientId !== client.clientId || token.userId === undefined) throw new InvalidGrant('The refresh token is invalid.');
    if (token.revokedAt !== undefined) throw new InvalidGrant('The refresh token has been revoked.');
    if (token.expiresAt !== undefined && now >= token.expiresAt) throw new InvalidGrant('The refresh token has expired.');
    if (token.rotatedAt !== undefined) {
      return { outcome: 'reused', token, revoked: await tx.tokens.revokeFamily(token.familyId, now), detail: 'refresh token reuse' };
    }

    const original = token.scope === '' ? [] : token.scope.split(' ');
    // RFC 8707 §2.2: resource narrows the access token's audiences to some the grant holds; a
    // refusal throws, so the unit rolls back and the refresh token is not spent.
    const scope = await narrowToResources(tx.clients, original, narrowScope(original, requestedScope), servers, resources);
    // The client's `aud` may have lost an audience since the grant: a refresh keeps none it may no longer get.
    await checkGrantedAudiences(tx.clients, client, scope);
    const user = activeUser(found.user);
    // The client's authorization policy, as stored now: a user it no longer lets in (removed from
    // the group, the policy changed) gets no new tokens. Thrown, so the unit rolls back and the
    // refresh token is not spent (docs/authorization.md).
    // The facts read with the token serve when they are of the same policy (no second statement).
    const alreadyRead = found.clientPolicy === client.authorizationPolicy ? found.clientPolicySubject : undefined;
    if (!(await checkPolicyAccess(tx, client, user.id, alreadyRead))) throw new InvalidGrant('The authorization policy of this client no longer allows this user.', { detail: 'authorization policy refused' });
    // Its minimum_authentication too (issue 24): a policy raised since the sign-in gets no new tokens from a weaker one.
    const required = await policyRequirement(tx, client, alreadyRead);
    if (required !== undefined && !meets(required, token.amr ?? [])) throw new InvalidGrant('The authorization policy of this client now requires a stronger sign-in; sign in again.', { detail: 'minimum_authentication not met' });
    const rotate = isPublicClient(client) || client.rotateRefreshTokens;
    // The unit runs as if alone, so nothing rotates the token between the read above and this
    // write; the guarded statement keeps the port's promise all the same.
    if (rotate && !(await tx.tokens.markRotated(tokenHash, now))) {
      return { outcome: 'reused', token, revoked: await tx.tokens.revokeFamily(token.familyId, now), detail: 'concurrent refresh token reuse' };
    }
    const grant = { client, user, scope, sessionIndex: token.sessionIndex, authTime: token.authTime, amr: token.amr, acr: token.acr, codeHash: token.codeHash, familyId: token.familyId };
    const minted = await mintTokens(deps, grant, rotate ? { refreshScope: original } : { keepRefreshToken: presented }, tx);
    await tx.tokens.insertMany(minted.rows);
    return { outcome: 'issued', token, user, rotated: rotate, minted };
  });

  const { token } = refreshed;
  if (refreshed.outcome === 'reused') {
    const { revoked } = refreshed;
    deps.audit.emit({ event: 'refresh_token.reused', clientId: client.clientId, userId: token.userId, family: familyFingerprint(token.familyId), token: fingerprint(presented), revoked, ip });
    throw new InvalidGrant('The refresh token has already been used.', { detail: `${refreshed.detail}; family revoked (${revoked} token(s))` });
  }
  const response = await finishTokens(deps, refreshed.minted);
  deps.audit.emit({
    event: 'token.refreshed',
    clientId: client.clientId,
    userId: refreshed.user.id,
    scope: response.scope,
    family: familyFingerprint(token.familyId),
    rotated: refreshed.rotated,
    accessToken: fingerprint(response.access_token),
    refreshToken: refreshed.rotated && response.refresh_token !== undefined ? fingerprint(response.refresh_token) : undefined,
    ip,
  });
  return response;
}
