/**
 * Hooks on a running server's store that let a test watch the password throttle at work without
 * timing: verifications held open (as a slow argon2 on a loaded machine would be) until the test
 * releases them, and the reservations the store refuses (each poll of an attempt that waits for
 * attempts in flight, src/oauth/throttling/password-attempts.ts).
 */
import type { UserCredentials } from '../../src/domain/user.ts';
import type { Store } from '../../src/storage/ports.ts';

export interface ThrottleProbe {
  /** Verifications started: lookups of a user's credentials, each held until `release`. */
  readonly held: number;
  /** Reservations the store refused (`ThrottleStore.reserve`). */
  readonly refused: number;
  /** Lets every held verification, and every later one, go on. */
  release(): void;
  /** Releases and takes the hooks away: call it in `finally`. */
  restore(): void;
}

export function probeThrottle(store: Store): ThrottleProbe {
  const { users, throttling } = store;
  const getCredentials = users.getCredentials.bind(users);
  const reserve = throttling.reserve.bind(throttling);
  let held = 0;
  let refused = 0;
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  users.getCredentials = async (name: string): Promise<UserCredentials | undefined> => {
    held += 1;
    await gate;
    return getCredentials(name);
  };
  throttling.reserve = async (...args) => {
    const result = await reserve(...args);
    if (!result.granted) refused += 1;
    return result;
  };
  return {
    get held() {
      return held;
    },
    get refused() {
      return refused;
    },
    release,
    restore() {
      release();
      users.getCredentials = getCredentials;
      throttling.reserve = reserve;
    },
  };
}
