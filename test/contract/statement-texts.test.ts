/**
 * A store statement's SQL text depends on its shape, never on the values it carries: the values are
 * bound parameters. The SQLite adapter keeps its prepared statements by text (a bounded cache), so
 * a value written into the text makes every call a new statement to compile and pushes the hot
 * ones out of the cache; a profile of single sign-on (S5) found the rate limit doing exactly that,
 * through Kysely's `case … then(value)` (docs/performance.md). Each counter statement runs here
 * twice with different values and the same shape, and the texts are compared.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { SqlStore } from '../../src/storage/sql/store.ts';
import { DATABASES } from '../helpers/databases.ts';
import { openTestStore, T0, unique, type TestStore } from '../helpers/store.ts';

const HOUR = 3_600_000;
const TRANSACTION_CONTROL = /^(begin|commit|rollback|savepoint|release)\b/;

for (const kind of DATABASES) {
  describe(`statement texts on ${kind.name}`, () => {
    let harness: TestStore;
    let store: SqlStore;
    let texts: string[] = [];
    before(async () => {
      harness = await openTestStore(kind);
      // Transaction control is left out: on SQLite a write runs inside a group commit's BEGIN … COMMIT.
      store = await harness.open({ onQuery: (_seconds, _failed, sqlText) => TRANSACTION_CONTROL.test(sqlText) || texts.push(sqlText) });
    });
    after(async () => harness.close());

    /** The SQL texts `work` runs with one set of values, and with another of the same shape. */
    const twice = async (work: (now: number, n: number) => Promise<unknown>): Promise<[string[], string[]]> => {
      texts = [];
      await work(T0, 1);
      const first = texts;
      texts = [];
      await work(T0 + 12_345, 2);
      return [first, texts];
    };

    test('the rate limit: one text for two budgets, whatever the time, keys and limits', async () => {
      const [first, second] = await twice((now, n) =>
        store.rateLimits.take(
          [
            { key: unique('sso-session:'), limit: 10 * n },
            { key: unique('sso-ip:'), limit: 20 * n },
          ],
          now,
          now + HOUR,
        ),
      );
      assert.equal(first.length, 1);
      assert.deepEqual(second, first);
    });

    test('the throttle: reserve, failReservation, recordFailure and releaseReservation keep their texts', async () => {
      const [first, second] = await twice(async (now, n) => {
        const key = unique('user:');
        await store.throttling.recordFailure([key], now, now + HOUR * n);
        // Thresholds and the longest delay are configuration, written into the reservation's text (sql.lit);
        // the times and keys are values. Again on the existing row: the upsert's update branch with its case expressions.
        await store.throttling.recordFailure([key], now + n, now + HOUR * n);
        const reservation = await store.throttling.reserve([{ key, threshold: 3 }], 60, now + 2 * n, now + HOUR * n);
        assert.ok(reservation.granted, 'reserved');
        await store.throttling.failReservation([key], now + 2 * n, now + 3 * n, now + HOUR * n);
        await store.throttling.reserve([{ key, threshold: 3 }], 60, now + 4 * n, now + HOUR * n);
        await store.throttling.releaseReservation([key]);
      });
      assert.ok(first.length >= 6, `ran ${first.length} statements`);
      assert.deepEqual(second, first);
    });
  });
}
