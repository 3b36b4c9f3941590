/**
 * Throttling of client authentication at the token, introspection and revocation endpoints.
 * Client secrets are 256-bit random values nobody can guess, so checking one is cheap and a
 * correct one is never refused: one misconfigured instance of a client must not lock out the
 * instances that have the right secret. Only failures are counted (success costs nothing):
 *
 * - per registered client_id, and per client address;
 * - a client_id that names no registered client counts per address only, so junk ids cannot fill
 *   the table with keys.
 *
 * A failure that leaves the client_id or the address in its delay is answered 429 `slow_down`
 * with Retry-After instead of 401 `invalid_client`.
 *
 * Unlike passwords (password-attempts.ts), client authentication reserves nothing before the
 * check, on purpose: nothing here reads the counters and then acts. The check is always made (it
 * is a SHA-256 and a constant-time compare, and a right secret is never refused), and the answer
 * to a failure is decided by the count its own atomic upsert returns — concurrent failures each
 * see a distinct count, so exactly the threshold's failure logs `lockout`. A reservation would
 * only cap guesses at a 256-bit secret (docs/decisions.md H8, H18).
 */
import type { ClientAuthEndpoint } from '../../observability/audit.ts';
import { addressGroup, counterKey } from './keys.ts';
import { expiresAt, retryAfterSeconds, waitMs, type ThrottleDeps } from './policy.ts';

export interface ClientAuthFailure {
  endpoint: ClientAuthEndpoint;
  /** The client_id, only when it names a registered client. */
  clientId: string | undefined;
  ip: string | undefined;
}

/** Counts a failed client authentication; seconds the caller must wait now (0: none). */
export async function clientAuthFailed(deps: ThrottleDeps, failure: ClientAuthFailure): Promise<number> {
  if (!deps.config.throttle) return 0;
  const clientKey = failure.clientId === undefined ? undefined : counterKey('client-id', failure.clientId);
  const ipKey = failure.ip === undefined ? undefined : counterKey('client-ip', addressGroup(failure.ip));
  const keys = [clientKey, ipKey].filter((k): k is string => k !== undefined);
  const now = deps.clock.now();
  const counters = await deps.store.throttling.recordFailure(keys, now, expiresAt(deps.config, now));
  const counter = (key: string | undefined) => counters.find((c) => c.key === key);
  const { throttleClientFailures, throttleIpFailures, throttleMaxDelay } = deps.config;
  const clientWait = waitMs(counter(clientKey), throttleClientFailures, throttleMaxDelay, now);
  const ipWait = waitMs(counter(ipKey), throttleIpFailures, throttleMaxDelay, now);
  const client = counter(clientKey);
  if (client?.failures === throttleClientFailures) {
    deps.audit.emit({ event: 'lockout', kind: 'client_auth', by: 'client', failures: client.failures, retryAfter: retryAfterSeconds(clientWait), clientId: failure.clientId, ip: failure.ip });
  }
  const address = counter(ipKey);
  if (address?.failures === throttleIpFailures) {
    deps.audit.emit({ event: 'lockout', kind: 'client_auth', by: 'ip', failures: address.failures, retryAfter: retryAfterSeconds(ipWait), ip: failure.ip });
  }
  return retryAfterSeconds(Math.max(clientWait, ipWait));
}
