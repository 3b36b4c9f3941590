import type { Client } from '../../domain/client.ts';
import { familyFingerprint, fingerprint } from '../../observability/audit.ts';
import type { OAuthDeps } from '../deps.ts';
import { InvalidScope } from '../errors.ts';
import { mintClientToken, type TokenResponse } from '../issue-tokens.ts';
import { param, type RawParams } from '../params.ts';
import { allowedResourceAudiences, parseResources, RESOURCE_PARAM, withAudiences } from '../resource.ts';
import { grantedAudiences, parseScope, readOnce } from '../scope.ts';
import type { Grant } from './grant.ts';

/**
 * The client_credentials grant (RFC 6749 §4.4): a confidential client asks for an access token for
 * itself. The token's subject is the client (src/domain/grant.ts, ClientToken): no user, no
 * session, so no refresh token (§4.4.3: "SHOULD NOT be included") and no ID token (an ID token
 * is about the authentication of an End-User, OIDC Core §2, and there is none).
 *
 * Scope (§4.4.2, §3.3). What such a token can be for is a resource: the client_ids its `aud`
 * metadata allows, requested as scope values as at the authorization endpoint
 * (scope.ts, grantedAudiences). So:
 * - an audience allowed by `aud` and active is granted; a client_id outside `aud` is invalid_scope;
 * - `openid` is ignored: it asks for an ID token about a signed-in End-User (OIDC Core §3.1.2.1),
 *   which this grant has none of. §3.3 lets the server grant less than asked and say so in the
 *   response's `scope`, and scripts written for Ubisecure send `openid <API client_id>` out of habit;
 * - `profile` and `email` release claims about an End-User: invalid_scope, there is none;
 * - anything else is unknown: invalid_scope (§5.2), never silently dropped;
 * - no scope parameter: the token carries an empty scope — it says only which client holds it
 *   (§3.3's "pre-defined default value"; a broader default would hand out audiences unasked).
 *
 * Only confidential clients (§4.4: "MUST only be used by confidential clients"): `confidential`
 * below makes the token endpoint answer a public client unauthorized_client and registration
 * refuse the combination.
 *
 * No unit of work: the grant reads the audiences' state and writes one token, and a change of an
 * audience overlapping it leaves the same state as one just after it (the token is checked again
 * at each use: findWithUser reads its client's state, the identity API its `aud`).
 */
export const clientCredentialsGrant = {
  type: 'client_credentials',
  params: ['scope'],
  repeatable: [RESOURCE_PARAM],
  confidential: true,
  handle: issueForClient,
} as const satisfies Grant;

/** The OIDC scope values that release claims about an End-User; a client's own token has none. */
const USER_SCOPES: ReadonlySet<string> = new Set(['profile', 'email']);

async function issueForClient(deps: OAuthDeps, client: Client, body: RawParams, ip?: string): Promise<TokenResponse> {
  const requested = parseScope(param(body, 'scope')).filter((value) => value !== 'openid');
  const resources = parseResources(body);
  const userScope = requested.find((value) => USER_SCOPES.has(value));
  if (userScope !== undefined) throw new InvalidScope(`The scope value ${userScope} releases claims about a user; a client_credentials token has no user.`);
  // The audiences' rows are read once for the grant's rule and the token's form and `aud` (PR11).
  const clients = readOnce(deps.store.clients);
  const audiences = await grantedAudiences(clients, client, requested);
  const unknown = requested.find((value) => !audiences.has(value));
  if (unknown !== undefined) throw new InvalidScope(`The scope value ${unknown} is not an audience this client may request (client metadata aud).`);

  // RFC 8707 §2: each resource's server must be in the client's `aud`, else invalid_target.
  const scope = withAudiences(requested, await allowedResourceAudiences(deps.store.clients, client, resources));
  const minted = await mintClientToken(deps, { client, scope }, { clients, policies: deps.store.policies, users: deps.store.users });
  await deps.store.tokens.insertMany(minted.rows);
  const response = minted.response;
  deps.audit.emit({
    event: 'token.issued',
    grantType: 'client_credentials',
    clientId: client.clientId,
    scope: response.scope,
    family: familyFingerprint(minted.rows[0]!.familyId),
    accessToken: fingerprint(response.access_token),
    idToken: false,
    ip,
  });
  return response;
}
