import type { Client } from '../../domain/client.ts';
import { fingerprint } from '../../observability/audit.ts';
import { checkPasswordLogin, PASSWORD_AMR } from '../authorize/verify-credentials.ts';
import type { OAuthDeps } from '../deps.ts';
import { InvalidGrant, SlowDown } from '../errors.ts';
import { auditTokensIssued, finishTokens, type GrantFacts, mintTokens, type TokenResponse, withIdToken } from '../issue-tokens.ts';
import { acrClaim, meets } from '../levels.ts';
import { param, requiredParam, type RawParams } from '../params.ts';
import { policyAllows, policyRequirement, readPolicy } from '../policy/evaluate.ts';
import { allowedResourceAudiences, parseResources, RESOURCE_PARAM, withAudiences } from '../resource.ts';
import { checkGrantedAudiences, grantedAudiences, grantedScope, parseScope } from '../scope.ts';
import { issuesRefreshTokens } from './authorization-code.ts';
import type { Grant } from './grant.ts';

/** One answer for an unknown user, a wrong password and a user who may not sign in: no account enumeration. */
const GENERIC_FAILURE = 'The username or password is incorrect.';
/**
 * A user with a second factor: the grant has no step to ask for it (RFC 6749 §4.3 carries a
 * username and a password only), and issuing on the password alone would bypass it. Said only
 * after the right password, so it tells nothing to whoever does not know it (docs/decisions.md SA23).
 */
const SECOND_FACTOR_REQUIRED = 'This user signs in with a second factor, which the password grant cannot ask for: sign in through the authorization endpoint.';

/**
 * The resource owner password credentials grant (RFC 6749 §4.3), for clients migrating from
 * Ubisecure SSO, whose CustomerID scripts get identity-API tokens with
 * `grant_type=password&username=…&password=…&scope=openid <API client_id>`. RFC 9700 §2.4 says it
 * MUST NOT be used; gatehouse offers it only to a confidential client that registered `password`
 * in its grant_types (never by default; docs/decisions.md PW1–PW8).
 *
 * The password is checked by the login form's own step (checkPasswordLogin): the same throttle
 * (reserved before verifying, the same counters), lockout and audit events. Every failure is
 * invalid_grant with one description (RFC 6749 §5.2); a throttled attempt is 429 `slow_down`
 * with Retry-After, as client authentication at this endpoint (decisions H7).
 *
 * A user with a second factor is refused (invalid_grant, saying so) after the right password: the
 * grant cannot ask for the factor (issue 24).
 *
 * The tokens are the login form's: `amr: ["pwd"]` (RFC 8176 §2), the acr a password login gets,
 * `auth_time` now, the user as subject, refresh tokens as configured for the client. No SSO
 * session is created (there is no browser); the tokens carry a session_index of their own, which
 * names no session. They end as a user's tokens do: revocation, expiry, and every change that
 * ends a user's access (disable, lock, delete, new password: endUserSessions revokes all of the
 * user's tokens).
 */
export const passwordGrant = {
  type: 'password',
  params: ['username', 'password', 'scope'],
  repeatable: [RESOURCE_PARAM],
  // RFC 9700 §2.4: a client that cannot keep a secret must not collect users' passwords.
  // Registration refuses `password` for a public client; the token endpoint answers a row that
  // holds it anyway unauthorized_client before the password is read.
  confidential: true,
  handle: passwordCredentials,
} as const satisfies Grant;

async function passwordCredentials(deps: OAuthDeps, client: Client, body: RawParams, ip?: string): Promise<TokenResponse> {
  // RFC 6749 §4.3.2: username and password REQUIRED, scope OPTIONAL.
  const username = requiredParam(body, 'username');
  const password = requiredParam(body, 'password');
  const requested = parseScope(param(body, 'scope'));
  const resources = parseResources(body);

  // The scope is decided before the password is checked: a request refused for its scope costs no
  // throttle attempt and no argon2 work. Same rules as the authorization endpoint (scope.ts):
  // unknown values dropped, audiences only as the client's `aud` allows (invalid_scope).
  // RFC 8707 §2: resource adds its server's client_id, when the client's `aud` allows it (else invalid_target).
  const scope = withAudiences(grantedScope(requested, client, await grantedAudiences(deps.store.clients, client, requested)), await allowedResourceAudiences(deps.store.clients, client, resources));

  const check = await checkPasswordLogin(deps, { username, password, clientId: client.clientId, ip, via: 'password_grant' });
  if (check.type === 'throttled') throw new SlowDown(`Too many failed sign-in attempts; retry in ${check.retryAfter} s.`, check.retryAfter);
  if (check.type === 'failed') throw new InvalidGrant(GENERIC_FAILURE);
  if (check.type === 'second_factor') {
    deps.audit.emit({ event: 'login.second_factor_required', userId: check.user.id, username: check.user.username, clientId: client.clientId, via: 'password_grant', ip });
    throw new InvalidGrant(SECOND_FACTOR_REQUIRED);
  }
  // The client's policy may require more than a password (issue 24): this grant can prove nothing else.
  const required = await policyRequirement(deps.store, client);
  if (required !== undefined && !meets(required, PASSWORD_AMR)) throw new InvalidGrant('The client\'s authorization policy requires more than a password; sign in through the browser.');

  const now = deps.clock.now();
  const sessionIndex = `_${deps.random.hex(20)}`;
  const grant: GrantFacts = {
    client,
    user: check.user,
    scope,
    sessionIndex,
    authTime: now,
    amr: [...PASSWORD_AMR],
    // The acr a password login gets from the login form when the request names none (levels.ts).
    acr: acrClaim(deps.config.levels, [], PASSWORD_AMR),
    codeHash: undefined,
    // A family of its own: a reuse of a rotated refresh token revokes this grant's tokens only.
    familyId: deps.random.token(32),
  };
  const minted = await deps.store.transaction(async (tx) => {
    // The password was checked outside this unit. A change that ends the user's access (disable,
    // lock, delete, a new password) runs endUserSessions in its own unit: it ran either wholly
    // before this one — then the user or the hash read here shows it and nothing is issued — or
    // wholly after, and revokes what is stored here.
    const current = await tx.users.getCredentials(check.user.username);
    if (!current || current.user.id !== check.user.id || current.user.status !== 'enabled' || current.passwordHash !== check.passwordHash) {
      throw new InvalidGrant(GENERIC_FAILURE, { detail: 'the user or the password changed while the password was being checked' });
    }
    await checkGrantedAudiences(tx.clients, client, scope);
      // The client's authorization policy: a user it refuses gets the grant's one answer, invalid_grant
      // (RFC 6749 §5.2); read once, for the ID token's and a JWT access token's claims too.
      const policy = await readPolicy(tx, client.authorizationPolicy, current.user.id, { forAccess: true });
      if (!policyAllows(policy)) throw new InvalidGrant(GENERIC_FAILURE, { detail: 'authorization policy refused' });
      const tokens = await mintTokens(deps, { ...grant, user: current.user, policy }, { refreshScope: issuesRefreshTokens(client) ? scope : undefined }, tx);
    await tx.tokens.insertMany(tokens.rows);
    return { tokens, policy };
  });

  const tokens = await finishTokens(deps, minted.tokens);
  const response = scope.includes('openid') ? await withIdToken(deps, { ...grant, policy: minted.policy }, tokens, undefined) : tokens;
  deps.audit.emit({ event: 'login.succeeded', userId: grant.user.id, username: grant.user.username, clientId: client.clientId, session: fingerprint(sessionIndex), via: 'password_grant', ip });
  auditTokensIssued(deps, 'password', grant, response, ip);
  return response;
}
