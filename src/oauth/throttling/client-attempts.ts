/**
 * Throttling of client authentication at the token, introspection and revocation endpoints.
 * Client secrets are 256-bit random values nobody can guess, so checking one is cheap and a
 * correct one is never refused: one misconfigured instance of a client must not lock out the
 * instances that have the right secret. Only failures are counted (success costs nothing):
 *
 * - per registered client_id: the client's own failures, from anywhere;
 * - per client address, across clients;
 * - per pair of the two: how often this client failed from this address;
 * - a client_id that names no registered client counts per address only, so junk ids cannot fill
 *   the table with keys.
 *
 * A failure that leaves the client_id in its delay is answered 429 `slow_down` with Retry-After
 * instead of 401 `invalid_client`. So is one that leaves the address in its delay, unless it is
 * the first failure of a registered client from that address: one client failing from a shared
 * address (a NAT, a cluster's egress) must not make every other client there that fails once (a
 * rotated secret, a deactivated client) wait out its lockout — the address counter punishes only
 * what failed from it, as the username's wait at login refuses only an address that failed on it
 * (password-attempts.ts). Attempts with ids that name no client, or no usable credentials, are
 * told to wait as soon as the address waits: one source trying many client_ids is still slowed
 * after the address's threshold, and one trying many registered ones after one failure each
 * (docs/decisions.md HR10).
 *
 * Unlike passwords (password-attempts.ts), client authentication reserves nothing before the
 * check, on purpose: nothing here reads the counters and then acts. The check is always made (it
 * is a SHA-256 and a constant-time compare, and a right secret is never refused), and the answer
 * to a failure is decided by the counts its own atomic upsert returns — concurrent failures each
 * see a distinct count, so exactly the threshold's failure logs `lockout`. A reservation would
 * only cap guesses at a 256-bit secret (docs/decisions.md H8, HR6).
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
  const source = failure.ip === undefined ? undefined : addressGroup(failure.ip);
  const clientKey = failure.clientId === undefined ? undefined : counterKey('client-id', failure.clientId);
  const ipKey = source === undefined ? undefined : counterKey('client-ip', source);
  const pairKey = failure.clientId === undefined || source === undefined ? undefined : counterKey('client-pair', `${failure.clientId}\n${source}`);
  const keys = [clientKey, ipKey, pairKey].filter((k): k is string => k !== undefined);
  const now = deps.clock.now();
  const counters = await deps.store.throttling.recordFailure(keys, now, expiresAt(deps.config, now));
  const counter = (key: string | undefined) => counters.find((c) => c.key === key);
  const { throttleClientFailures, throttleIpFailures, throttleMaxDelay } = deps.config;
  const client = counter(clientKey);
  const address = counter(ipKey);
  const clientWait = waitMs(client, throttleClientFailures, throttleMaxDelay, now);
  const ipWait = waitMs(address, throttleIpFailures, throttleMaxDelay, now);
  // This failure's own upsert counted the pair: above one, the client had failed from here before.
  const failedHereBefore = pairKey === undefined || (counter(pairKey)?.failures ?? 0) > 1;
  if (client?.failures === throttleClientFailures) {
    deps.audit.emit({ event: 'lockout', kind: 'client_auth', by: 'client', failures: client.failures, retryAfter: retryAfterSeconds(clientWait), clientId: failure.clientId, ip: failure.ip });
  }
  if (address?.failures === throttleIpFailures) {
    deps.audit.emit({ event: 'lockout', kind: 'client_auth', by: 'ip', failures: address.failures, retryAfter: retryAfterSeconds(ipWait), ip: failure.ip });
  }
  return retryAfterSeconds(Math.max(clientWait, failedHereBefore ? ipWait : 0));
}
