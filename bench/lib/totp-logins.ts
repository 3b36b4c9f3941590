/**
 * S6t's users: each with the same argon2id password and a TOTP factor of its own, enrolled through
 * gatehouse's import use case (`importTotpFactor`, as `gatehouse user import-totp` does), and the
 * bookkeeping that lets each log in at most once per time step. A TOTP code is accepted once per
 * factor and step (RFC 6238 §5.2; FactorStore.useTotpStep), so a second login of one user within
 * one 30-second step would be refused — and counted by the second factor's throttle. The load
 * generator therefore gives each pass a user that has not logged in during the current step, and
 * the pool holds more users than a step's logins at the measured rate.
 */
import { randomBytes } from 'node:crypto';
import { Secret, TOTP } from 'otpauth';
import { hashPassword } from '../../src/identity/passwords.ts';
import { systemClock } from '../../src/lib/clock.ts';
import { cryptoRandom } from '../../src/lib/random.ts';
import { importTotpFactor } from '../../src/oauth/factors/enrolment.ts';
import type { Store } from '../../src/storage/ports.ts';
import { aUser } from './fixtures.ts';
import type { SecondFactorLogins } from './front-channel.ts';

/** Authenticator apps' defaults (RFC 6238 §4), which the import stores when given none. */
const PERIOD = 30;
const DIGITS = 6;
const ALGORITHM = 'SHA1';

interface TotpUser {
  username: string;
  secret: Secret;
  /**
   * The last time step whose code this user may have spent: a pass takes the user only in a later
   * step. Set to the step after the current one when taken (a pass's code may be computed across a
   * step boundary), then to the code's own step when the code is made.
   */
  spentThrough: number;
}

const stepAt = (ms: number) => TOTP.counter({ period: PERIOD, timestamp: ms });

export class TotpLogins implements SecondFactorLogins {
  readonly #users: TotpUser[] = [];
  readonly #tag = randomBytes(4).toString('hex');
  readonly #password: string;
  readonly #passwordHash: string;
  #next = 0;
  /** Passes that found no user free in their step (the pool was too small for the rate). */
  dry = 0;

  private constructor(password: string, passwordHash: string) {
    this.#password = password;
    this.#passwordHash = passwordHash;
  }

  /** An empty pool; one argon2id hash, shared by every user it will hold (verifying any costs the same). */
  static async create(): Promise<TotpLogins> {
    const password = `correct horse battery ${randomBytes(4).toString('hex')}`;
    return new TotpLogins(password, await hashPassword(password));
  }

  get size(): number {
    return this.#users.length;
  }

  /** The pool grown to `count` users, each inserted with the password and given a fresh TOTP secret by the import use case. */
  async growTo(store: Store, count: number): Promise<void> {
    // The bench's servers run without GATEHOUSE_KEY_ENCRYPTION_KEY, so the secrets are stored in the clear, as such a server stores them.
    const deps = { store: { factors: store.factors }, clock: systemClock, random: cryptoRandom, config: { keyEncryptionKey: undefined } };
    const add = async (index: number) => {
      const user = aUser(`bench-totp-${this.#tag}-${index}`);
      const secret = new Secret({ size: 20 });
      await store.users.insert(user, this.#passwordHash);
      await importTotpFactor(deps, user.id, { secret: secret.base32, name: 'bench authenticator' });
      return { username: user.username, secret, spentThrough: -1 };
    };
    while (this.#users.length < count) {
      const from = this.#users.length;
      const batch = await Promise.all(Array.from({ length: Math.min(64, count - from) }, (_, i) => add(from + i)));
      this.#users.push(...batch);
    }
  }

  take(): { username: string; password: string; index: number } | undefined {
    const step = stepAt(Date.now());
    for (let tried = 0; tried < this.#users.length; tried++) {
      const index = this.#next++ % this.#users.length;
      const user = this.#users[index]!;
      if (user.spentThrough >= step) continue;
      user.spentThrough = step + 1;
      return { username: user.username, password: this.#password, index };
    }
    this.dry++;
    return undefined;
  }

  /** The user's code now, computed with otpauth as an authenticator app does. */
  code(index: number): string {
    const user = this.#users[index]!;
    const now = Date.now();
    user.spentThrough = stepAt(now);
    return TOTP.generate({ secret: user.secret, algorithm: ALGORITHM, digits: DIGITS, period: PERIOD, timestamp: now });
  }

  /** Users needed for `loginsPerSecond`: one step's logins, with a margin for rates above the estimate. */
  static sizeFor(loginsPerSecond: number, connections: number): number {
    return Math.ceil(loginsPerSecond * PERIOD * 1.5) + 2 * connections;
  }
}
