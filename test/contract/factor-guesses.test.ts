/**
 * Guessing a second factor concurrently on several instances (docs/second-factors.md, "The
 * throttle"): the attempt is reserved before the code is checked, so however many guesses arrive
 * at once, on however many instances, only the threshold's number is ever checked; none succeeds;
 * the right code from another address still works, as the password rules say (SA6); the password
 * step stays open; and past the wait the attacker's address gets one check per doubling wait (SA103).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { loadConfig } from '../../src/config.ts';
import { ManualClock } from '../../src/lib/clock.ts';
import { cryptoRandom } from '../../src/lib/random.ts';
import { confirmTotpEnrolment, startTotpEnrolment } from '../../src/oauth/factors/enrolment.ts';
import { DEFAULT_TOTP, totpCode } from '../../src/oauth/factors/totp.ts';
import { verifySecondFactor } from '../../src/oauth/factors/verify.ts';
import { passwordAbandoned, reservePasswordAttempt } from '../../src/oauth/throttling/password-attempts.ts';
import type { Store } from '../../src/storage/ports.ts';
import { AuditCapture } from '../helpers/audit.ts';
import { DATABASES } from '../helpers/databases.ts';
import { aStoredUser, openTestStore, T0, warmUp, type TestStore } from '../helpers/store.ts';

const INSTANCES = 4;
const POOL = 10;
/** Thousands of attempts queue for 40 connections on a shared machine: waiting for one is not what is tested. */
const STORE = { poolSize: POOL, connectTimeoutMs: 120_000 };

for (const kind of DATABASES) {
  // SQLite runs one writer at a time: fewer guesses prove the same rule there in less time.
  const GUESSES = kind.name === 'postgres' ? 2000 : 300;

  describe(`concurrent second-factor guesses on ${kind.name}`, () => {
    let harness: TestStore;
    let stores: Store[];
    before(async () => {
      harness = await openTestStore(kind, STORE);
      stores = [harness.store, ...(await Promise.all(Array.from({ length: INSTANCES - 1 }, () => harness.open(STORE))))];
      await Promise.all(stores.map((store) => warmUp(store, POOL)));
    });
    after(async () => harness.close());

    test(`${GUESSES} wrong TOTP codes at once from one address on ${INSTANCES} instances: none succeeds, exactly the threshold is checked, the rest are throttled; the password step stays open; the right code works from another address only, from the attacker's after the wait, which doubles`, async () => {
      const clock = new ManualClock(T0);
      const audit = new AuditCapture();
      const config = loadConfig({ GATEHOUSE_ISSUER: 'https://sso.example.com' });
      const on = (store: Store) => ({ config, store, clock, audit, random: cryptoRandom });
      const user = await aStoredUser(harness.store);
      const { secret } = await startTotpEnrolment(on(harness.store), user.username);
      assert.equal((await confirmTotpEnrolment(on(harness.store), user.id, { secret, code: totpCode(DEFAULT_TOTP, secret, clock.now()) })).type, 'enrolled');
      clock.advance(30_000);
      const window = new Set([-1, 0, 1].map((step) => totpCode(DEFAULT_TOTP, secret, clock.now() + step * 30_000)));
      const guesses: string[] = [];
      for (let n = 0; guesses.length < GUESSES; n++) {
        const guess = String(n * 7919 % 1_000_000).padStart(6, '0');
        if (!window.has(guess)) guesses.push(guess);
      }
      const attacker = '203.0.113.66';
      const results = await Promise.all(
        guesses.map((code, i) => verifySecondFactor(on(stores[i % INSTANCES]!), { userId: user.id, username: user.username, code, ip: attacker })),
      );
      const count = (type: string) => results.filter((r) => r.type === type).length;
      assert.equal(count('ok'), 0);
      // Checked: the threshold of the pair of user and address. A checked failure that made the
      // user wait answers `throttled` too, as a password's does (SA26): the checks are counted by
      // their factor.failed events.
      assert.equal(audit.of('factor.failed').length, config.throttleUserFailures, 'checked: the threshold of the pair of user and address');
      assert.ok(count('refused') < config.throttleUserFailures, 'at least the failure that starts the wait answers throttled');
      assert.equal(count('refused') + count('throttled'), GUESSES);

      // "Nothing but the attacker" (SA103): the password step is not locked for anyone, the
      // attacker's address included (its counters are the password's own, SA6).
      const passwordGate = await reservePasswordAttempt(on(stores[3]!), { kind: 'login', username: user.username, ip: attacker });
      assert.equal(passwordGate.open, true, 'code guesses never lock the password step');
      if (passwordGate.open) await passwordAbandoned(on(stores[3]!), passwordGate.reservation);

      // While the wait lasts, the right code from the attacker's address is refused unchecked...
      const attempt = (code: string, ip: string, store = stores[1]!) => verifySecondFactor(on(store), { userId: user.id, username: user.username, code, ip });
      const right = totpCode(DEFAULT_TOTP, secret, clock.now());
      const refused = await attempt(right, attacker);
      assert.equal(refused.type, 'throttled');
      assert.equal(audit.of('factor.failed').length + audit.of('factor.verified').length, config.throttleUserFailures, 'not checked');
      // ...and works from the user's own address at once: the code is not spent by the refusal.
      assert.deepEqual(await attempt(right, '198.51.100.20', stores[2]!), { type: 'ok', kind: 'totp', amr: ['otp', 'mfa'] });

      // After the wait, the attacker's address gets ONE check, and a wrong one doubles the wait.
      // The user's success forgot the user's failures, not the pair's: the attacker stays throttled.
      clock.advance((refused as { retryAfter: number }).retryAfter * 1000);
      assert.equal((await attempt(guesses[0]!, attacker)).type, 'throttled', 'checked, wrong, and the wait starts again');
      assert.equal(audit.of('factor.failed').length, config.throttleUserFailures + 1);
      const doubled = await attempt(guesses[1]!, attacker);
      assert.deepEqual(doubled, { type: 'throttled', retryAfter: 2 }, 'the next one unchecked, the wait doubled');
      assert.equal(audit.of('factor.failed').length, config.throttleUserFailures + 1);
      // Past that wait, a right code from the attacker's address works: the throttle bounds
      // guesses; it never makes a right code wrong (the next step is already used: the one after).
      clock.advance(30_000);
      assert.equal((await attempt(totpCode(DEFAULT_TOTP, secret, clock.now()), attacker)).type, 'ok');
    });
  });
}
