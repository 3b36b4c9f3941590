/**
 * The arithmetic of the throttle (docs/decisions.md, "Hardening"): below its threshold a counter
 * costs nothing; from the threshold on, the n-th failure makes the next attempt wait
 * 2^(n − threshold) seconds after it, up to the configured maximum (the temporary lockout). An
 * attempt reserved and still being verified counts as a failure (password-attempts.ts).
 */
import type { Config } from '../../config.ts';
import type { ThrottleCounter } from '../../storage/ports.ts';
import type { OAuthDeps } from '../deps.ts';

export type ThrottleSettings = Pick<Config, 'throttle' | 'throttleUserFailures' | 'throttleIpFailures' | 'throttleClientFailures' | 'throttleMaxDelay' | 'throttleWindow'>;

/** What the throttle needs: its settings, the counters' store, the time, and where lockouts are reported. */
export type ThrottleDeps = Pick<OAuthDeps, 'config' | 'store' | 'clock' | 'audit'>;

/** Seconds the counter's last failure makes the next attempt wait. */
export function delaySeconds(failures: number, threshold: number, maxDelay: number): number {
  if (failures < threshold) return 0;
  const exponent = failures - threshold;
  return exponent >= 30 ? maxDelay : Math.min(2 ** exponent, maxDelay);
}

/**
 * Milliseconds from `now` until the counter lets the next attempt through; 0: it does now.
 * Attempts still being verified count as failures (they are reserved before the password is
 * checked), and while any is, the wait also runs from the latest reservation. The store's
 * `reserve` evaluates the same arithmetic in SQL (src/storage/sql/throttle-store.ts `waiting`).
 */
export function waitMs(counter: ThrottleCounter | undefined, threshold: number, maxDelay: number, now: number): number {
  if (!counter) return 0;
  const from = counter.pending > 0 ? Math.max(counter.lastFailureAt, counter.reservedAt) : counter.lastFailureAt;
  return Math.max(0, from + delaySeconds(counter.failures + counter.pending, threshold, maxDelay) * 1000 - now);
}

/** A Retry-After value (RFC 9110 §10.2.3): whole seconds, rounded up, so a client never comes back early. */
export function retryAfterSeconds(ms: number): number {
  return Math.ceil(ms / 1000);
}

/** When the counters touched by a failure at `now` are forgotten. */
export function expiresAt(settings: ThrottleSettings, now: number): number {
  return now + settings.throttleWindow * 1000;
}
