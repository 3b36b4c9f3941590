/**
 * When a failed message is tried again, and when it is given up (docs/decisions.md AM6–AM8).
 *
 * Exponential back-off with jitter: the n-th retry waits between half and all of
 * min(maxDelay, baseDelay · 2^(n-1)) ("equal jitter"), so senders that failed together (an SMTP
 * outage) do not all come back in the same second, and none retries at once. A temporary failure
 * (RFC 5321 §4.2.1: a 4xx reply; or no reply: the server unreachable, a timeout) is retried up
 * to `maxAttempts`; a permanent one (5xx) is dead after PERMANENT_ATTEMPTS, a few tries rather
 * than one because a 5xx is also what a relay answers while it is misconfigured, and an
 * administrator who fixes it should not have to redeliver everything by hand.
 */
export interface RetryPolicy {
  /** ms before the first retry (at most; half of it at least). */
  baseDelayMs: number;
  /** ms: the longest wait between two attempts. */
  maxDelayMs: number;
  /** Attempts in all (the first included) at a message whose failures are temporary. */
  maxAttempts: number;
  /** Attempts in all at a message refused permanently. */
  permanentAttempts: number;
}

export const PERMANENT_ATTEMPTS = 3;

export function retryPolicy(maxAttempts: number): RetryPolicy {
  return { baseDelayMs: 30_000, maxDelayMs: 3_600_000, maxAttempts, permanentAttempts: Math.min(PERMANENT_ATTEMPTS, maxAttempts) };
}

/**
 * When to try again after the `attempts`-th attempt failed (1 = the first), or undefined: dead.
 * `random` is in [0, 1).
 */
export function nextAttemptAt(policy: RetryPolicy, attempts: number, permanent: boolean, now: number, random: number): number | undefined {
  if (attempts >= (permanent ? policy.permanentAttempts : policy.maxAttempts)) return undefined;
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.min(attempts - 1, 30));
  return now + Math.ceil(ceiling / 2 + (ceiling / 2) * random);
}
