/**
 * Time is injected everywhere it matters (exp, iat, auth_time, max_age, code lifetime),
 * so that tests can move it instead of sleeping.
 */
export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** A clock that only moves when told to; for tests and benchmarks. */
export class ManualClock implements Clock {
  #now: number;
  constructor(start = Date.UTC(2026, 0, 1)) {
    this.#now = start;
  }
  now(): number {
    return this.#now;
  }
  advance(ms: number): void {
    this.#now += ms;
  }
  set(ms: number): void {
    this.#now = ms;
  }
}

/** JWT NumericDate (RFC 7519 §2): whole seconds since the epoch. */
export function toNumericDate(ms: number): number {
  return Math.floor(ms / 1000);
}
