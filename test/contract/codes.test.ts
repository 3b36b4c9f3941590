import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { AuthorizationCode } from '../../src/domain/grant.ts';
import type { CodeStore, Redemption, Store } from '../../src/storage/ports.ts';
import { DATABASES } from '../helpers/databases.ts';
import { aCode, aHash, aSessionIndex, aStoredSession, aStoredUser, openTestStore, T0, warmUp, type TestStore } from '../helpers/store.ts';

const RACERS = 20;

function tally(results: Redemption[]): Record<Redemption['outcome'], number> {
  const counts = { redeemed: 0, replayed: 0, unknown: 0 };
  for (const r of results) counts[r.outcome] += 1;
  return counts;
}

for (const kind of DATABASES) {
  describe(`code store on ${kind.name}`, () => {
    let harness: TestStore;
    let codes: CodeStore;
    /** A second store on the same database: another instance with its own connections. */
    let otherCodes: CodeStore;
    /** The second instance whole, for units of work that race this one's. */
    let other: Store;
    /** Opens every connection both pools may use, so the races below run on separate connections. */
    let warm: () => Promise<void>;
    before(async () => {
      // Enough connections that concurrent calls really run side by side on PostgreSQL.
      harness = await openTestStore(kind, { poolSize: RACERS });
      codes = harness.store.codes;
      other = await harness.open({ poolSize: 10 });
      otherCodes = other.codes;
      warm = async () => {
        await Promise.all([warmUp(harness.store, RACERS), warmUp(other, 10)]);
      };
    });
    after(async () => harness.close());

    async function stored(overrides: Partial<AuthorizationCode> = {}): Promise<AuthorizationCode> {
      const code = aCode(overrides);
      await codes.insert(code);
      return code;
    }

    test('consumeBySession spends only the unredeemed codes of that session; redeeming one afterwards is a replay', async () => {
      const sessionIndex = aSessionIndex();
      const open = await stored({ sessionIndex });
      const redeemed = await stored({ sessionIndex });
      await codes.consumeOnce(redeemed.codeHash, T0 + 1);
      const elsewhere = await stored();
      assert.equal(await codes.consumeBySession(sessionIndex, T0 + 2), 1);
      assert.equal((await codes.consumeOnce(open.codeHash, T0 + 3)).outcome, 'replayed');
      assert.equal((await codes.consumeOnce(elsewhere.codeHash, T0 + 3)).outcome, 'redeemed');
      assert.equal(await codes.consumeBySession(sessionIndex, T0 + 4), 0);
    });

    test('the first consumeOnce redeems the code and returns everything it is bound to', async () => {
      const code = await stored();
      assert.deepEqual(await codes.consumeOnce(code.codeHash, T0 + 1000), { outcome: 'redeemed', code: { ...code, consumedAt: T0 + 1000 } });
    });

    test("the redemption reads the code's user as getProfile does, and nothing for a user that does not exist", async () => {
      const user = await aStoredUser(harness.store, { givenName: 'Ada', email: 'ada@example.com', emailVerified: true });
      const code = await stored({ userId: user.id });
      assert.deepEqual(await codes.consumeOnce(code.codeHash, T0 + 1), { outcome: 'redeemed', code: { ...code, consumedAt: T0 + 1 }, user: await harness.store.users.getProfile(user.id) });
      const orphan = await stored();
      assert.deepEqual(await codes.consumeOnce(orphan.codeHash, T0 + 1), { outcome: 'redeemed', code: { ...orphan, consumedAt: T0 + 1 } });
    });

    test('a code without nonce, PKCE or acr round-trips with those undefined', async () => {
      const code = await stored({ nonce: undefined, codeChallenge: undefined, codeChallengeMethod: undefined, acr: undefined, amr: [] });
      assert.deepEqual(await codes.consumeOnce(code.codeHash, T0 + 1), { outcome: 'redeemed', code: { ...code, consumedAt: T0 + 1 } });
    });

    test('every later consumeOnce is a replay that returns the code as first redeemed', async () => {
      const code = await stored({ codeChallengeMethod: 'plain' });
      await codes.consumeOnce(code.codeHash, T0 + 1000);
      const redeemed = { ...code, consumedAt: T0 + 1000 };
      assert.deepEqual(await codes.consumeOnce(code.codeHash, T0 + 2000), { outcome: 'replayed', code: redeemed, refusedFor: undefined });
      assert.deepEqual(await codes.consumeOnce(code.codeHash, T0 + 3000), { outcome: 'replayed', code: redeemed, refusedFor: undefined });
      assert.deepEqual(await otherCodes.consumeOnce(code.codeHash, T0 + 4000), { outcome: 'replayed', code: redeemed, refusedFor: undefined });
    });

    test('a code whose redemption was refused is a replay naming why, on every instance; it stays consumed (issue 22 item 11)', async () => {
      const code = await stored();
      await codes.consumeOnce(code.codeHash, T0 + 1000);
      await codes.markRefused(code.codeHash, 'code_verifier');
      const redeemed = { ...code, consumedAt: T0 + 1000 };
      assert.deepEqual(await codes.consumeOnce(code.codeHash, T0 + 2000), { outcome: 'replayed', code: redeemed, refusedFor: 'code_verifier' });
      assert.deepEqual(await otherCodes.consumeOnce(code.codeHash, T0 + 3000), { outcome: 'replayed', code: redeemed, refusedFor: 'code_verifier' });
    });

    test('an unknown code is unknown, and stays so', async () => {
      const hash = aHash();
      assert.deepEqual(await codes.consumeOnce(hash, T0), { outcome: 'unknown' });
      assert.deepEqual(await codes.consumeOnce(hash, T0), { outcome: 'unknown' });
    });

    test('consuming one code leaves the others unconsumed', async () => {
      const [one, two] = [await stored(), await stored()];
      await codes.consumeOnce(one.codeHash, T0 + 1);
      assert.equal((await codes.consumeOnce(two.codeHash, T0 + 2)).outcome, 'redeemed');
    });

    test(`${RACERS} concurrent consumeOnce calls on one code: exactly one redeems, the rest are replays`, async () => {
      const code = await stored();
      await warm();
      const results = await Promise.all(Array.from({ length: RACERS }, (_, i) => codes.consumeOnce(code.codeHash, T0 + 1000 + i)));
      assert.deepEqual(tally(results), { redeemed: 1, replayed: RACERS - 1, unknown: 0 });
      const winner = results.find((r) => r.outcome === 'redeemed');
      assert.ok(winner && winner.outcome === 'redeemed');
      for (const r of results) if (r.outcome === 'replayed') assert.deepEqual(r.code, winner.code, 'every replay sees the winning redemption');
    });

    test(`${RACERS} concurrent consumeOnce calls spread over two store instances: exactly one redeems`, async () => {
      for (let round = 0; round < 3; round++) {
        const code = await stored();
        await warm();
        const results = await Promise.all(Array.from({ length: RACERS }, (_, i) => (i % 2 === 0 ? codes : otherCodes).consumeOnce(code.codeHash, T0 + i)));
        assert.deepEqual(tally(results), { redeemed: 1, replayed: RACERS - 1, unknown: 0 }, `round ${round}`);
      }
    });

    test('insertForLiveSession stores the code while its session is live, and nothing for an ended, expired or unknown session', async () => {
      const store = harness.store;
      const live = await aStoredSession(store);
      const code = aCode({ sessionIndex: live.sessionIndex, userId: live.userId });
      assert.equal(await store.transaction((tx) => tx.codes.insertForLiveSession(code, live.idHash, T0 + 1)), true);
      assert.deepEqual(await codes.consumeOnce(code.codeHash, T0 + 2), { outcome: 'redeemed', code: { ...code, consumedAt: T0 + 2 }, user: await store.users.getProfile(live.userId) });

      const ended = await aStoredSession(store);
      await store.sessions.end(ended.idHash);
      const idle = await aStoredSession(store);
      const capped = await aStoredSession(store, { expiresAt: T0 + 60_000, maxExpiresAt: T0 + 1000 });
      const refusals: [string, string, number][] = [
        ['ended', ended.idHash, T0 + 1],
        ['idle past its deadline', idle.idHash, idle.expiresAt],
        ['past its absolute deadline', capped.idHash, capped.maxExpiresAt],
        ['unknown', aHash(), T0 + 1],
      ];
      for (const [why, idHash, now] of refusals) {
        const refused = aCode();
        assert.equal(await codes.insertForLiveSession(refused, idHash, now), false, why);
        assert.deepEqual(await codes.consumeOnce(refused.codeHash, now + 1), { outcome: 'unknown' }, why);
      }
    });

    test('a code issued in a unit of work racing the end of its session on another instance is either refused or spent by the end, never left redeemable', async () => {
      const store = harness.store;
      await warm();
      const outcomes = { issued: 0, refused: 0 };
      for (let round = 0; round < 10; round++) {
        const session = await aStoredSession(store);
        const code = aCode({ sessionIndex: session.sessionIndex, userId: session.userId });
        // As issueCode and a logout's unit of work (src/oauth/sessions.ts, cutOff) run them.
        const [issued] = await Promise.all([
          store.transaction((tx) => tx.codes.insertForLiveSession(code, session.idHash, T0 + 1)),
          other.transaction(async (tx) => {
            if (await tx.sessions.end(session.idHash)) await tx.codes.consumeBySession(session.sessionIndex, T0 + 1);
          }),
        ]);
        outcomes[issued ? 'issued' : 'refused'] += 1;
        const redemption = await codes.consumeOnce(code.codeHash, T0 + 2);
        assert.equal(redemption.outcome, issued ? 'replayed' : 'unknown', `round ${round}`);
      }
      assert.equal(outcomes.issued + outcomes.refused, 10);
    });

    test('inserting a code twice is refused', async () => {
      const code = await stored();
      await assert.rejects(codes.insert(code));
    });
  });
}
