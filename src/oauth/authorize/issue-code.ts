import type { AuthorizationCode } from '../../domain/grant.ts';
import type { SsoSession } from '../../domain/session.ts';
import { hashSecret } from '../../lib/hash.ts';
import type { OAuthDeps } from '../deps.ts';
import { LoginRequired } from '../errors.ts';
import { acrClaim } from '../levels.ts';
import { formatScope } from '../scope.ts';
import type { CodeGrant } from './request.ts';

/**
 * Issues an authorization code for a session (RFC 6749 §4.1.2): 256 random bits, of which only
 * the SHA-256 is stored, bound to the client, redirect_uri, scope, nonce, PKCE challenge and the
 * session's authentication, and valid for GATEHOUSE_CODE_TTL seconds. Returns the code itself.
 *
 * The session is read again and the code stored in one unit of work, one statement (Store.transaction): a logout
 * that overlaps it runs wholly before it, and then no code is issued for the ended session
 * (`login_required`), or wholly after it, and then spends the code with the session's others.
 */
export async function issueCode(deps: Pick<OAuthDeps, 'config' | 'store' | 'clock' | 'random'>, grant: CodeGrant, session: SsoSession): Promise<string> {
  const now = deps.clock.now();
  const code = deps.random.token(32);
  const row: AuthorizationCode = {
    codeHash: hashSecret(code),
    clientId: grant.clientId,
    userId: session.userId,
    redirectUri: grant.redirectUri,
    scope: formatScope([...grant.scope]),
    nonce: grant.nonce,
    codeChallenge: grant.pkce.codeChallenge,
    codeChallengeMethod: grant.pkce.codeChallengeMethod,
    sessionIndex: session.sessionIndex,
    authTime: session.authTime,
    amr: session.amr,
    // The first value the request asked for that the session's authentication meets, else the
    // strongest configured level it meets (levels.ts): exact, whichever client asks.
    acr: acrClaim(deps.config.levels, grant.level?.requested ?? [], session.amr),
    createdAt: now,
    expiresAt: now + deps.config.codeTtl * 1000,
    consumedAt: undefined,
  };
  // One statement in the unit of work: the session's read is the INSERT's own (PR12), so it is
  // still the unit that serializes with a logout (serializable on PostgreSQL, the write lock on SQLite).
  const issued = await deps.store.transaction((tx) => tx.codes.insertForLiveSession(row, session.idHash, now));
  if (!issued) throw new LoginRequired('The session ended before the authorization completed.');
  return code;
}
