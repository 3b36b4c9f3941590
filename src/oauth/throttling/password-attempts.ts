/**
 * Throttling of password checks: the login form and the identity API's account. Three counters
 * per attempt, all in the store so every instance sees the same numbers:
 *
 * - the username (case-insensitive, as usernames compare), known or not — counting only existing
 *   users would tell which exist;
 * - the client address (`addressGroup`);
 * - the pair of the two: how often this address failed on this username.
 *
 * An attempt is reserved before its password is checked (`reservePasswordAttempt`): one atomic
 * step counts it as a failure in flight under all three keys, or refuses it and counts nothing
 * (ThrottleStore.reserve). So concurrent guesses cannot all pass a check made before any of them
 * failed: a username and address pair gets at most the threshold's number of verifications per
 * wait, an address its own, on any number of instances. The reservation then ends as what the
 * check proved: a failure (`passwordFailed`), or a success that takes it away (`passwordSucceeded`)
 * — a right password never counts. An attempt refused only by others still in flight waits for
 * them to end (they may be right passwords), as long as they do (STALL_MS).
 *
 * Refused (quickly, and with no argon2 work): when the address is in its own delay, or when the
 * username is in its delay and this address has failed on it (or has an attempt on it in
 * flight), or when the pair itself is in its delay. A correct password from an address that has
 * not failed on the username still succeeds while the username waits: an attacker elsewhere
 * cannot lock a user out (peers.md §3 item 9, Keycloak's lockout blocking valid logins). A
 * success forgets the username's failures.
 */
import { setTimeout } from 'node:timers/promises';
import { normalizeUsername } from '../../domain/user.ts';
import type { ThrottleCounter, ThrottleRule } from '../../storage/ports.ts';
import { isLookupKey } from '../lookup-key.ts';
import { addressGroup, counterKey } from './keys.ts';
import { expiresAt, retryAfterSeconds, waitMs, type ThrottleDeps } from './policy.ts';

/** `second_factor`: a code of a user's second factor (src/oauth/factors/verify.ts), counted apart from passwords by the same rules. */
export type PasswordKind = 'login' | 'identity_api' | 'second_factor';

const SCOPES = { login: 'login', identity_api: 'api', second_factor: 'factor' } as const satisfies Record<PasswordKind, string>;

export interface PasswordAttempt {
  kind: PasswordKind;
  /** As typed. A value that cannot be a username (too long, control characters) counts per address only. */
  username: string;
  /** The client address (src/http/client-address.ts); undefined counts per username only. */
  ip: string | undefined;
}

/** A reserved attempt: its keys and when it was reserved. It must end in `passwordFailed` or `passwordSucceeded` (or `passwordAbandoned`). */
export interface PasswordReservation {
  attempt: PasswordAttempt;
  keys: AttemptKeys;
  reservedAt: number;
}

/** Whether the attempt may be checked (it is then reserved), or how long it must wait. */
export type PasswordGate = { open: true; reservation: PasswordReservation } | { open: false; by: 'username' | 'ip'; retryAfter: number };

/** What `lockout` events say about the account, when the caller knows it matched one. */
export interface AttemptContext {
  userId?: string;
  username?: string;
  clientId?: string;
}

const MAX_USERNAME = 256;

export interface AttemptKeys {
  user: string | undefined;
  ip: string | undefined;
  pair: string | undefined;
}

function keysOf(attempt: PasswordAttempt): AttemptKeys {
  const scope = SCOPES[attempt.kind];
  const user = attempt.username !== '' && isLookupKey(attempt.username, MAX_USERNAME) ? normalizeUsername(attempt.username) : undefined;
  const source = attempt.ip === undefined ? undefined : addressGroup(attempt.ip);
  return {
    user: user === undefined ? undefined : counterKey(`${scope}-user`, user),
    ip: source === undefined ? undefined : counterKey(`${scope}-ip`, source),
    pair: user === undefined || source === undefined ? undefined : counterKey(`${scope}-pair`, `${user}\n${source}`),
  };
}

function present(keys: AttemptKeys): string[] {
  return [keys.user, keys.ip, keys.pair].filter((k): k is string => k !== undefined);
}

/**
 * What may refuse the attempt. The address and the pair wait on their own; the username's wait
 * refuses only an address that has failed on it (its pair counts something). An attempt with no
 * address has no pair to tell addresses apart by, so the username's wait refuses it (fail closed;
 * over HTTP there always is an address).
 */
function rules(deps: ThrottleDeps, keys: AttemptKeys): ThrottleRule[] {
  const { throttleUserFailures: user, throttleIpFailures: ip } = deps.config;
  const out: ThrottleRule[] = [];
  if (keys.ip !== undefined) out.push({ key: keys.ip, threshold: ip });
  if (keys.pair !== undefined) out.push({ key: keys.pair, threshold: user });
  if (keys.user !== undefined) out.push(keys.pair === undefined ? { key: keys.user, threshold: user } : { key: keys.user, threshold: user, onlyWhenCounted: keys.pair });
  return out;
}

/** How long this address must wait: for itself, and for the username (when it failed on it): `rules` in milliseconds. */
function waits(deps: ThrottleDeps, keys: AttemptKeys, counters: ThrottleCounter[], now: number): { ip: number; user: number } {
  const { throttleUserFailures: userThreshold, throttleIpFailures: ipThreshold, throttleMaxDelay: max } = deps.config;
  const byKey = new Map(counters.map((c) => [c.key, c]));
  const counter = (key: string | undefined) => (key === undefined ? undefined : byKey.get(key));
  const pair = counter(keys.pair);
  const pairCounts = pair !== undefined && pair.failures + pair.pending > 0;
  return {
    ip: waitMs(counter(keys.ip), ipThreshold, max, now),
    // The pair alone also delays: a success elsewhere resets the username, not this address's record on it.
    user: Math.max(waitMs(pair, userThreshold, max, now), keys.pair === undefined || pairCounts ? waitMs(counter(keys.user), userThreshold, max, now) : 0),
  };
}

/**
 * An attempt refused only by attempts still in flight (no counted failure makes it wait) asks
 * again, 10, 20, 40 … 200 ms later, for as long as those attempts end. They may be right
 * passwords, which take their reservations back, so concurrent right passwords (a shared kiosk or
 * service account, one user in many tabs, an integration calling the identity API in parallel)
 * go through a few at a time instead of getting 429, however many there are and however slow
 * argon2 is on a loaded machine: a right password from an address that has not failed is never
 * refused (docs/decisions.md HR9). Failures among them count, and the attempt is then refused at
 * once: a burst of guesses still gets exactly the threshold's verifications. It gives up (429) only
 * when the counters that refuse it have not changed for STALL_MS of real time — the attempts it
 * waits for are stuck: a process that died while verifying (HR7), a store that stopped answering.
 */
const STALL_MS = 10_000;
const FIRST_PAUSE_MS = 10;
const MAX_PAUSE_MS = 200;

/**
 * Before the password is checked: reserves the attempt, or refuses it. One atomic step in the
 * store decides and counts, whatever the concurrency (ThrottleStore.reserve). Refused only
 * because of attempts in flight, it asks again while they move on (STALL_MS).
 */
export async function reservePasswordAttempt(deps: ThrottleDeps, attempt: PasswordAttempt): Promise<PasswordGate> {
  if (!deps.config.throttle) return { open: true, reservation: { attempt, keys: { user: undefined, ip: undefined, pair: undefined }, reservedAt: deps.clock.now() } };
  const keys = keysOf(attempt);
  const list = rules(deps, keys);
  let seen = '';
  let movedAt = performance.now();
  for (let pause = FIRST_PAUSE_MS; ; pause = Math.min(2 * pause, MAX_PAUSE_MS)) {
    const now = deps.clock.now();
    const result = await deps.store.throttling.reserve(list, deps.config.throttleMaxDelay, now, expiresAt(deps.config, now));
    if (result.granted) return { open: true, reservation: { attempt, keys, reservedAt: now } };
    // The counters were read after the refusal, only to tell which wait refused it, for how long,
    // and whether the attempts in flight are moving; should they have moved on since, the answer
    // is still to wait (at least a second).
    const state = JSON.stringify([...result.counters].sort((a, b) => (a.key < b.key ? -1 : 1)));
    if (state !== seen) [seen, movedAt] = [state, performance.now()];
    const wait = waits(deps, keys, result.counters, now);
    const byFailures = waits(deps, keys, result.counters.map((c) => ({ ...c, pending: 0 })), now);
    if (byFailures.ip > 0 || byFailures.user > 0 || performance.now() - movedAt + pause > STALL_MS) {
      if (wait.ip > 0) return { open: false, by: 'ip', retryAfter: retryAfterSeconds(wait.ip) };
      return { open: false, by: 'username', retryAfter: Math.max(1, retryAfterSeconds(wait.user)) };
    }
    await setTimeout(pause);
  }
}

/**
 * After a wrong password: the reservation becomes a failure under all three keys in one atomic
 * statement; returns how many seconds this address must now wait before its next attempt on the
 * username (0: none). Emits `lockout` when a counter's failures reach its threshold: the count is
 * atomic, so exactly one failure sees it.
 */
export async function passwordFailed(deps: ThrottleDeps, reservation: PasswordReservation, context: AttemptContext = {}): Promise<number> {
  if (!deps.config.throttle) return 0;
  const { keys, reservedAt, attempt } = reservation;
  const now = deps.clock.now();
  const counters = await deps.store.throttling.failReservation(present(keys), reservedAt, now, expiresAt(deps.config, now));
  const wait = waits(deps, keys, counters, now);
  const failuresOf = (key: string | undefined) => counters.find((c) => c.key === key)?.failures ?? 0;
  const { kind, ip } = attempt;
  if (failuresOf(keys.user) === deps.config.throttleUserFailures) {
    deps.audit.emit({ event: 'lockout', kind, by: 'username', failures: failuresOf(keys.user), retryAfter: retryAfterSeconds(wait.user), ip, ...context });
  }
  if (failuresOf(keys.ip) === deps.config.throttleIpFailures) {
    deps.audit.emit({ event: 'lockout', kind, by: 'ip', failures: failuresOf(keys.ip), retryAfter: retryAfterSeconds(wait.ip), ip, clientId: context.clientId });
  }
  return retryAfterSeconds(Math.max(wait.ip, wait.user));
}

/**
 * After a correct password: forgets the username's failures and this address's on it (their
 * counters, this reservation with them), and takes the reservation off the address's counter,
 * whose failures stay.
 */
export async function passwordSucceeded(deps: ThrottleDeps, reservation: PasswordReservation): Promise<void> {
  const { keys } = reservation;
  // Different rows, each written by statements that lock only it: side by side.
  await Promise.all([
    deps.store.throttling.clear([keys.user, keys.pair].filter((k): k is string => k !== undefined)),
    keys.ip === undefined ? undefined : deps.store.throttling.releaseReservation([keys.ip]),
  ]);
}

/** When the check could not be made (the store failed): the reservation is taken away, counting nothing. */
export async function passwordAbandoned(deps: ThrottleDeps, reservation: PasswordReservation): Promise<void> {
  await deps.store.throttling.releaseReservation(present(reservation.keys));
}
