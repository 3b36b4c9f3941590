import type { Client } from '../../domain/client.ts';
import type { DeviceAuthorization } from '../../domain/device-authorization.ts';
import { hashSecret } from '../../lib/hash.ts';
import { rememberLogoutReceiver } from '../backchannel-logout.ts';
import type { OAuthDeps } from '../deps.ts';
import { AuthorizationPending, DeviceAccessDenied, ExpiredToken, InvalidGrant, OAuthError, PollingSlowDown } from '../errors.ts';
import { auditTokensIssued, finishTokens, type GrantFacts, type MintedTokens, mintTokens, type TokenResponse, withIdToken } from '../issue-tokens.ts';
import { requiredParam, type RawParams } from '../params.ts';
import { policyAllows, readPolicy } from '../policy/evaluate.ts';
import { narrowToResources, parseResources, RESOURCE_PARAM, resourceServers } from '../resource.ts';
import { checkGrantedAudiences } from '../scope.ts';
import { issuesRefreshTokens } from './authorization-code.ts';
import type { Grant } from './grant.ts';
import { activeUser } from './load-user.ts';

/** What the unit of work of one poll decided; answered once it has committed. */
type Polled = { outcome: 'refused'; error: OAuthError } | { outcome: 'issued'; grant: GrantFacts; minted: MintedTokens };

/**
 * The device authorization grant's polling (RFC 8628 §3.4–3.5). Each poll is one unit of work
 * (Store.transaction) around DeviceAuthorizationStore.poll: redeeming an approval (exactly one
 * poll ever does) and storing the tokens commit together. Until the user decides the answer is
 * `authorization_pending`, or `slow_down` with 5 s more on the interval when the device polled
 * sooner than it; then tokens, or `access_denied`; after the lifetime `expired_token`. The
 * tokens carry the sign-in that approved it: user, SSO session (so logout revokes them), auth
 * time and `amr`; an ID token when `openid` was granted.
 */
export const deviceCodeGrant = {
  type: 'urn:ietf:params:oauth:grant-type:device_code',
  params: ['device_code'],
  repeatable: [RESOURCE_PARAM],
  handle: poll,
} as const satisfies Grant;

async function poll(deps: OAuthDeps, client: Client, body: RawParams, ip?: string): Promise<TokenResponse> {
  const deviceCodeHash = hashSecret(requiredParam(body, 'device_code'));
  const resources = parseResources(body);
  const now = deps.clock.now();
  // RFC 8707 §2.2: resource narrows to audiences the user approved; resolved before anything is redeemed.
  const servers = await resourceServers(deps.store.clients, resources);
  const polled = await deps.store.transaction(async (tx): Promise<Polled> => {
    const result = await tx.deviceAuthorizations.poll(deviceCodeHash, client.clientId, now);
    if (result.outcome === 'unknown') return refused(new InvalidGrant('The device_code is invalid.'));
    if (result.outcome === 'pending') {
      const { interval } = result.authorization;
      if (result.tooFast) return refused(new PollingSlowDown(`Polling too fast; keep an interval of ${interval} seconds.`, interval));
      return refused(new AuthorizationPending('The user has not yet approved or denied the request.'));
    }
    if (result.outcome === 'other') return refused(refusal(result.authorization, client, now));
    const authorization = result.authorization;
    const approval = authorization.approval!;
    try {
      // The tokens belong to the SSO session the user approved in. A logout that ended it meanwhile
      // must leave no token behind: in this unit of work the logout (sessions.endSession) runs
      // wholly before (the session is gone here) or wholly after (it revokes what is stored here).
      if (!(await tx.sessions.findLiveByIndex(approval.sessionIndex, now))) throw new InvalidGrant('The sign-in that approved this device has ended.', { detail: 'approving session ended' });
      const user = activeUser(await tx.users.getProfile(approval.userId));
      const granted = authorization.scope === '' ? [] : authorization.scope.split(' ');
      const scope = await narrowToResources(tx.clients, granted, granted, servers, resources);
      // The endpoint checked the audiences when it issued the code; the client may have changed since.
      await checkGrantedAudiences(tx.clients, client, scope);
      // The family is named by the device code's hash: one family per device authorization.
      // The client's authorization policy, checked at approval, again as stored now (RFC 8628 §3.5 access_denied).
      const policy = await readPolicy(tx, client.authorizationPolicy, user.id, { forAccess: true });
      if (!policyAllows(policy)) throw new DeviceAccessDenied('The authorization policy of this client does not allow this user.');
      const grant: GrantFacts = { client, user, scope, sessionIndex: approval.sessionIndex, authTime: approval.authTime, amr: approval.amr, acr: approval.acr, codeHash: undefined, familyId: deviceCodeHash, policy };
      const minted = await mintTokens(deps, grant, { refreshScope: issuesRefreshTokens(client) ? granted : undefined }, tx);
      await tx.tokens.insertMany(minted.rows);
      await rememberLogoutReceiver(tx, client, approval.sessionIndex, now);
      return { outcome: 'issued', grant, minted };
    } catch (error) {
      // Refused after the approval was redeemed (the user was disabled, an audience withdrawn): commit, so it stays spent.
      if (error instanceof OAuthError) return refused(error);
      throw error;
    }
  });
  if (polled.outcome === 'refused') throw polled.error;

  const { grant, minted } = polled;
  const tokens = await finishTokens(deps, minted);
  const response = grant.scope.includes('openid') ? await withIdToken(deps, grant, tokens, undefined) : tokens;
  auditTokensIssued(deps, deviceCodeGrant.type, grant, response, ip);
  return response;
}

function refused(error: OAuthError): Polled {
  return { outcome: 'refused', error };
}

/** The answer to a poll that changed nothing (RFC 8628 §3.5): why this authorization gives no tokens now. */
function refusal(authorization: DeviceAuthorization, client: Client, now: number): OAuthError {
  // Another client's device code is as good as unknown to this one (RFC 6749 §5.2 invalid_grant).
  if (authorization.clientId !== client.clientId) return new InvalidGrant('The device_code is invalid.', { detail: 'device_code issued to another client' });
  if (authorization.status === 'consumed') return new InvalidGrant('The device_code has already been used.');
  if (authorization.status === 'denied') return new DeviceAccessDenied('The user denied the request.');
  if (now >= authorization.expiresAt) return new ExpiredToken('The device_code has expired; start a new device authorization.');
  // Approved or decided between the poll's statements: the next poll redeems it.
  return new AuthorizationPending('The user has not yet approved or denied the request.');
}
