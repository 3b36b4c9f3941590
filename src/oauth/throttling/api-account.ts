/**
 * The identity API's single account (HTTP Basic or the `username`/`password` URL parameters)
 * under the same throttle as the login form (password-attempts.ts), with its own counters: each
 * attempt is reserved per username, per address and per pair before the password is compared (so
 * a burst of concurrent guesses gets the threshold's number of comparisons, not one per request);
 * while the username waits, an address that failed on it is refused, and a correct password from
 * any other address still succeeds.
 */
import { passwordFailed, passwordSucceeded, reservePasswordAttempt } from './password-attempts.ts';
import type { ThrottleDeps } from './policy.ts';

/** `retryAfter` 0: an ordinary failure (401); above 0: answer 429 with Retry-After. */
export type ApiAccountCheck = { ok: true } | { ok: false; retryAfter: number };

export interface ApiAccountAttempt {
  /** As sent; '' for credentials too malformed to name one (counted per address only). */
  username: string;
  method: 'basic' | 'url_params';
  ip: string | undefined;
}

/**
 * Runs `matches` (the constant-time comparison with the configured account) once the throttle has
 * reserved the attempt, unless it refuses it; a failure is counted and audited, a success clears
 * the username's counters and takes the reservation back. The audit events never name the account:
 * the logs treat its name as half a credential.
 */
export async function checkApiAccount(deps: ThrottleDeps, credentials: ApiAccountAttempt, matches: () => boolean): Promise<ApiAccountCheck> {
  const attempt = { kind: 'identity_api' as const, username: credentials.username, ip: credentials.ip };
  const gate = await reservePasswordAttempt(deps, attempt);
  if (!gate.open) {
    deps.audit.emit({ event: 'identity_api.throttled', by: gate.by, retryAfter: gate.retryAfter, ip: credentials.ip });
    return { ok: false, retryAfter: gate.retryAfter };
  }
  if (!matches()) {
    deps.audit.emit({ event: 'identity_api.auth_failed', method: credentials.method, ip: credentials.ip });
    return { ok: false, retryAfter: await passwordFailed(deps, gate.reservation) };
  }
  await passwordSucceeded(deps, gate.reservation);
  return { ok: true };
}
