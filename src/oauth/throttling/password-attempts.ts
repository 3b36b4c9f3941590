/**
 * Throttling of password checks: the login form and the identity API's account. Three counters
 * per attempt, all in the store so every instance sees the same numbers:
 *
 * - the username (case-insensitive, as usernames compare), known or not — counting only existing
 *   users would tell which exist;
 * - the client address (`addressGroup`);
 * - the pair of the two: how often this address failed on this username.
 *
 * An attempt is refused before its password is checked (so quickly, and with no argon2 work) when
 * the address is in its own delay, or when the username is in its delay and this address has
 * failed on it. A correct password from an address that has not failed on the username still
 * succeeds while the username waits: an attacker elsewhere cannot lock a user out (peers.md §3
 * item 9, Keycloak's lockout blocking valid logins). A success forgets the username's failures.
 */
import { normalizeUsername } from '../../domain/user.ts';
import type { ThrottleCounter } from '../../storage/ports.ts';
import { isLookupKey } from '../lookup-key.ts';
import { addressGroup, counterKey } from './keys.ts';
import { expiresAt, retryAfterSeconds, waitMs, type ThrottleDeps } from './policy.ts';

export type PasswordKind = 'login' | 'identity_api';

export interface PasswordAttempt {
  kind: PasswordKind;
  /** As typed. A value that cannot be a username (too long, control characters) counts per address only. */
  username: string;
  /** The client address (src/http/client-address.ts); undefined counts per username only. */
  ip: string | undefined;
}

/** Whether the attempt may be checked; `counted`: the username had failures a success must clear. */
export type PasswordGate = { open: true; counted: boolean } | { open: false; by: 'username' | 'ip'; retryAfter: number };

/** What `lockout` events say about the account, when the caller knows it matched one. */
export interface AttemptContext {
  userId?: string;
  username?: string;
  clientId?: string;
}

const MAX_USERNAME = 256;

interface Keys {
  user: string | undefined;
  ip: string | undefined;
  pair: string | undefined;
}

function keysOf(attempt: PasswordAttempt): Keys {
  const scope = attempt.kind === 'login' ? 'login' : 'api';
  const user = attempt.username !== '' && isLookupKey(attempt.username, MAX_USERNAME) ? normalizeUsername(attempt.username) : undefined;
  const source = attempt.ip === undefined ? undefined : addressGroup(attempt.ip);
  return {
    user: user === undefined ? undefined : counterKey(`${scope}-user`, user),
    ip: source === undefined ? undefined : counterKey(`${scope}-ip`, source),
    pair: user === undefined || source === undefined ? undefined : counterKey(`${scope}-pair`, `${user}\n${source}`),
  };
}

function present(keys: Keys): string[] {
  return [keys.user, keys.ip, keys.pair].filter((k): k is string => k !== undefined);
}

/** How long this address must wait: for itself, and for the username (when it failed on it). */
function waits(deps: ThrottleDeps, keys: Keys, counters: ThrottleCounter[], now: number): { ip: number; user: number } {
  const { throttleUserFailures: userThreshold, throttleIpFailures: ipThreshold, throttleMaxDelay: max } = deps.config;
  const byKey = new Map(counters.map((c) => [c.key, c]));
  const counter = (key: string | undefined) => (key === undefined ? undefined : byKey.get(key));
  const pair = counter(keys.pair);
  return {
    ip: waitMs(counter(keys.ip), ipThreshold, max, now),
    // The pair alone also delays: a success elsewhere resets the username, not this address's record on it.
    user: pair === undefined ? 0 : Math.max(waitMs(pair, userThreshold, max, now), waitMs(counter(keys.user), userThreshold, max, now)),
  };
}

/** Before the password is checked: may it be? One read of at most three counters. */
export async function checkPasswordAttempt(deps: ThrottleDeps, attempt: PasswordAttempt): Promise<PasswordGate> {
  if (!deps.config.throttle) return { open: true, counted: false };
  const keys = keysOf(attempt);
  const now = deps.clock.now();
  const counters = await deps.store.throttling.get(present(keys), now);
  const wait = waits(deps, keys, counters, now);
  if (wait.ip > 0) return { open: false, by: 'ip', retryAfter: retryAfterSeconds(wait.ip) };
  if (wait.user > 0) return { open: false, by: 'username', retryAfter: retryAfterSeconds(wait.user) };
  return { open: true, counted: counters.some((c) => c.key === keys.user || c.key === keys.pair) };
}

/**
 * After a wrong password: counts it under all three keys in one atomic statement and returns how
 * many seconds this address must now wait before its next attempt on the username (0: none).
 * Emits `lockout` when a counter reaches its threshold.
 */
export async function passwordFailed(deps: ThrottleDeps, attempt: PasswordAttempt, context: AttemptContext = {}): Promise<number> {
  if (!deps.config.throttle) return 0;
  const keys = keysOf(attempt);
  const now = deps.clock.now();
  const counters = await deps.store.throttling.recordFailure(present(keys), now, expiresAt(deps.config, now));
  const wait = waits(deps, keys, counters, now);
  const failuresOf = (key: string | undefined) => counters.find((c) => c.key === key)?.failures ?? 0;
  // Exactly one failure sees a counter reach its threshold: the counts are atomic.
  const { kind, ip } = attempt;
  if (failuresOf(keys.user) === deps.config.throttleUserFailures) {
    deps.audit.emit({ event: 'lockout', kind, by: 'username', failures: failuresOf(keys.user), retryAfter: retryAfterSeconds(wait.user), ip, ...context });
  }
  if (failuresOf(keys.ip) === deps.config.throttleIpFailures) {
    deps.audit.emit({ event: 'lockout', kind, by: 'ip', failures: failuresOf(keys.ip), retryAfter: retryAfterSeconds(wait.ip), ip, clientId: context.clientId });
  }
  return retryAfterSeconds(Math.max(wait.ip, wait.user));
}

/** After a correct password: forgets the username's failures and this address's on it. */
export async function passwordSucceeded(deps: ThrottleDeps, attempt: PasswordAttempt, gate: PasswordGate): Promise<void> {
  if (!gate.open || !gate.counted) return;
  const keys = keysOf(attempt);
  await deps.store.throttling.clear([keys.user, keys.pair].filter((k): k is string => k !== undefined));
}
