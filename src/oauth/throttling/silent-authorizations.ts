/**
 * The rate limit of silent authorizations: codes issued from an existing SSO session, with no
 * login form (single sign-on, prompt=none). Each costs a stored code row and nothing else, so a
 * signed-in browser repeating authorization requests could otherwise fill the code table (a
 * security test minted 2,000 codes in a second). Two fixed-window budgets, both in the store so
 * every instance counts the same hits:
 *
 * - per SSO session (its session_index): one browser's sign-on;
 * - per client address (`addressGroup`): many sessions opened from one place.
 *
 * Both are taken in one atomic statement (RateLimitStore.take): a request is allowed only when
 * both counted it, and no race counts past a limit. The login form's codes are not limited here:
 * each costs a password check, which the password throttle already limits.
 */
import type { SsoSession } from '../../domain/session.ts';
import { fingerprint } from '../../observability/audit.ts';
import type { RateBudget } from '../../storage/ports.ts';
import { addressGroup, counterKey } from './keys.ts';
import type { ThrottleDeps } from './policy.ts';

/** Whether a silent authorization of `session` from `ip` may issue a code now; false: refuse it. */
export async function takeSilentAuthorization(deps: ThrottleDeps, session: SsoSession, ip: string | undefined, clientId: string): Promise<boolean> {
  const { silentAuthorizationsPerSession: perSession, silentAuthorizationsPerAddress: perAddress, silentAuthorizationsWindow: window } = deps.config;
  const sessionKey = counterKey('sso-session', session.sessionIndex);
  const addressKey = ip === undefined ? undefined : counterKey('sso-ip', addressGroup(ip));
  const budgets: RateBudget[] = [];
  if (perSession > 0) budgets.push({ key: sessionKey, limit: perSession });
  if (perAddress > 0 && addressKey !== undefined) budgets.push({ key: addressKey, limit: perAddress });
  if (budgets.length === 0) return true;
  const now = deps.clock.now();
  const counted = await deps.store.rateLimits.take(budgets, now, now + window * 1000);
  const hitsOf = (key: string) => counted.find((c) => c.key === key)?.hits;
  // Exactly one request fills each counter (the counts are atomic): it reports the limit once per window.
  for (const { key, limit } of budgets) {
    if (hitsOf(key) === limit) {
      deps.audit.emit({ event: 'authorization.rate_limited', by: key === sessionKey ? 'session' : 'ip', limit, window, clientId, userId: session.userId, session: fingerprint(session.sessionIndex), ip });
    }
  }
  return counted.length === budgets.length;
}
