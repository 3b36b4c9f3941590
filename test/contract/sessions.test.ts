import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Store } from '../../src/storage/ports.ts';
import { DATABASES } from '../helpers/databases.ts';
import { aHash, aSessionIndex, aStoredSession, aStoredUser, openTestStore, T0, type TestStore } from '../helpers/store.ts';

const MINUTE = 60_000;

for (const kind of DATABASES) {
  describe(`session store on ${kind.name}`, () => {
    let harness: TestStore;
    let store: Store;
    before(async () => {
      harness = await openTestStore(kind);
      store = harness.store;
    });
    after(async () => harness.close());

    test('a session round-trips through findLive and findLiveByIndex', async () => {
      const session = await aStoredSession(store, { amr: ['pwd', 'otp'], acr: 'urn:example:2fa', authTime: T0 - 5, createdAt: T0 - 4 });
      assert.deepEqual(await store.sessions.findLive(session.idHash, T0), session);
      assert.deepEqual(await store.sessions.findLiveByIndex(session.sessionIndex, T0), session);
      const plain = await aStoredSession(store, { amr: [], acr: undefined });
      assert.deepEqual(await store.sessions.findLive(plain.idHash, T0), plain);
    });

    test('countLive counts the sessions live at now by both deadlines, no further than the limit', async () => {
      // Far past the other tests' sessions, so only these count.
      const at = T0 + 1000 * 24 * 60 * MINUTE;
      assert.equal(await store.sessions.countLive(at, 100), 0);
      for (let i = 0; i < 3; i++) await aStoredSession(store, { expiresAt: at + MINUTE, maxExpiresAt: at + 60 * MINUTE });
      await aStoredSession(store, { expiresAt: at, maxExpiresAt: at + 60 * MINUTE });
      await aStoredSession(store, { expiresAt: at + MINUTE, maxExpiresAt: at });
      assert.equal(await store.sessions.countLive(at, 100), 3);
      assert.equal(await store.sessions.countLive(at, 2), 2);
      assert.equal(await store.sessions.countLive(at - 1, 100), 5);
    });

    test('unknown ids and indexes find nothing', async () => {
      assert.equal(await store.sessions.findLive(aHash(), T0), undefined);
      assert.equal(await store.sessions.findLiveByIndex(aSessionIndex(), T0), undefined);
    });

    test('findLive honours the inactivity deadline, relative to the given now', async () => {
      const session = await aStoredSession(store, { expiresAt: T0 + 10 * MINUTE, maxExpiresAt: T0 + 60 * MINUTE });
      assert.ok(await store.sessions.findLive(session.idHash, T0 + 10 * MINUTE - 1));
      assert.equal(await store.sessions.findLive(session.idHash, T0 + 10 * MINUTE + 1), undefined);
      assert.ok(await store.sessions.findLiveByIndex(session.sessionIndex, T0 + 10 * MINUTE - 1));
      assert.equal(await store.sessions.findLiveByIndex(session.sessionIndex, T0 + 10 * MINUTE + 1), undefined);
      // Expiry is judged by the now given, not by the database's clock: far in the past it is live.
      assert.ok(await store.sessions.findLive(session.idHash, 0));
    });

    test('findLive honours the absolute deadline even when the inactivity one is later', async () => {
      const session = await aStoredSession(store, { expiresAt: T0 + 60 * MINUTE, maxExpiresAt: T0 + 10 * MINUTE });
      assert.ok(await store.sessions.findLive(session.idHash, T0 + 10 * MINUTE - 1));
      assert.equal(await store.sessions.findLive(session.idHash, T0 + 10 * MINUTE + 1), undefined);
      assert.equal(await store.sessions.findLiveByIndex(session.sessionIndex, T0 + 10 * MINUTE + 1), undefined);
    });

    test('findUsable: a live session of an enabled user, by both deadlines; not one whose user is not enabled', async () => {
      const session = await aStoredSession(store, { expiresAt: T0 + 10 * MINUTE, maxExpiresAt: T0 + 60 * MINUTE });
      assert.deepEqual(await store.sessions.findUsable(session.idHash, T0 + 10 * MINUTE - 1), session);
      assert.equal(await store.sessions.findUsable(session.idHash, T0 + 10 * MINUTE + 1), undefined);
      const capped = await aStoredSession(store, { expiresAt: T0 + 60 * MINUTE, maxExpiresAt: T0 + 10 * MINUTE });
      assert.equal(await store.sessions.findUsable(capped.idHash, T0 + 10 * MINUTE + 1), undefined);
      for (const status of ['disabled', 'locked', 'pending'] as const) {
        const user = await aStoredUser(store, { status });
        const ofUser = await aStoredSession(store, { userId: user.id, expiresAt: T0 + 10 * MINUTE, maxExpiresAt: T0 + 60 * MINUTE });
        assert.ok(await store.sessions.findLive(ofUser.idHash, T0), `${status}: the session is live`);
        assert.equal(await store.sessions.findUsable(ofUser.idHash, T0), undefined, `${status}: but not usable`);
      }
      assert.equal(await store.sessions.findUsable(aHash(), T0), undefined);
    });

    test('touch moves the inactivity deadline forward, never back', async () => {
      const session = await aStoredSession(store, { expiresAt: T0 + 10 * MINUTE, maxExpiresAt: T0 + 60 * MINUTE });
      await store.sessions.touch(session.idHash, T0 + 20 * MINUTE);
      assert.equal((await store.sessions.findLive(session.idHash, T0))?.expiresAt, T0 + 20 * MINUTE);
      assert.ok(await store.sessions.findLive(session.idHash, T0 + 15 * MINUTE), 'alive past the old deadline');
      await store.sessions.touch(session.idHash, T0 + 5 * MINUTE);
      assert.equal((await store.sessions.findLive(session.idHash, T0))?.expiresAt, T0 + 20 * MINUTE, 'an earlier deadline is ignored');
      assert.ok(await store.sessions.findLive(session.idHash, T0 + 15 * MINUTE));
    });

    test('touch never moves the inactivity deadline past the absolute one', async () => {
      const session = await aStoredSession(store, { expiresAt: T0 + 10 * MINUTE, maxExpiresAt: T0 + 30 * MINUTE });
      await store.sessions.touch(session.idHash, T0 + 90 * MINUTE);
      const touched = await store.sessions.findLive(session.idHash, T0);
      assert.ok(touched && touched.expiresAt > T0 + 10 * MINUTE, 'moved forward');
      assert.ok(touched.expiresAt <= touched.maxExpiresAt, `expiresAt ${touched.expiresAt} is past maxExpiresAt ${touched.maxExpiresAt}`);
      assert.equal(touched.maxExpiresAt, T0 + 30 * MINUTE);
      assert.equal(await store.sessions.findLive(session.idHash, T0 + 30 * MINUTE + 1), undefined);
    });

    test('touch of an unknown session is harmless', async () => {
      await assert.doesNotReject(store.sessions.touch(aHash(), T0 + MINUTE));
    });

    test('end returns the session once, then undefined; it is no longer found', async () => {
      const session = await aStoredSession(store);
      const other = await aStoredSession(store, { userId: session.userId });
      assert.deepEqual(await store.sessions.end(session.idHash), session);
      assert.equal(await store.sessions.end(session.idHash), undefined);
      assert.equal(await store.sessions.findLive(session.idHash, T0), undefined);
      assert.equal(await store.sessions.findLiveByIndex(session.sessionIndex, T0), undefined);
      assert.deepEqual(await store.sessions.findLive(other.idHash, T0), other, "the user's other session lives on");
    });

    test('end returns an expired session too', async () => {
      const session = await aStoredSession(store, { expiresAt: T0 - 1, maxExpiresAt: T0 - 1 });
      assert.deepEqual(await store.sessions.end(session.idHash), session);
    });

    test("endAllOfUser ends every session of the user, returns their indexes, and leaves other users' alone", async () => {
      const user = await aStoredUser(store);
      const sessions = [await aStoredSession(store, { userId: user.id }), await aStoredSession(store, { userId: user.id }), await aStoredSession(store, { userId: user.id, expiresAt: T0 - 1 })];
      const bystander = await aStoredSession(store);
      assert.deepEqual([...(await store.sessions.endAllOfUser(user.id))].sort(), sessions.map((s) => s.sessionIndex).sort());
      for (const s of sessions) assert.equal(await store.sessions.end(s.idHash), undefined);
      assert.deepEqual(await store.sessions.endAllOfUser(user.id), []);
      assert.deepEqual(await store.sessions.findLive(bystander.idHash, T0), bystander);
    });

    test('session indexes are unique', async () => {
      const session = await aStoredSession(store);
      await assert.rejects(aStoredSession(store, { sessionIndex: session.sessionIndex }));
      await assert.rejects(aStoredSession(store, { idHash: session.idHash }));
    });

    test('endOthersOfUser ends every session of the user but the one kept, in one statement, and returns them; describe records the browser and address', async () => {
      const user = await aStoredUser(store);
      const kept = await aStoredSession(store, { userId: user.id });
      const others = [await aStoredSession(store, { userId: user.id }), await aStoredSession(store, { userId: user.id })];
      const otherUser = await aStoredSession(store);
      await store.sessions.describe(others[0]!.idHash, { userAgent: 'Mozilla/5.0 Firefox/128.0', ip: '192.0.2.7' });
      const ended = await store.sessions.endOthersOfUser(user.id, kept.idHash);
      assert.deepEqual(
        ended.map((s) => s.sessionIndex).sort(),
        others.map((s) => s.sessionIndex).sort(),
      );
      assert.deepEqual(ended.find((s) => s.idHash === others[0]!.idHash), { ...others[0], userAgent: 'Mozilla/5.0 Firefox/128.0', ip: '192.0.2.7' });
      assert.deepEqual(await store.sessions.findLive(kept.idHash, T0), kept);
      assert.ok(await store.sessions.findLive(otherUser.idHash, T0), 'another user\'s session stays');
      assert.deepEqual(await store.sessions.endOthersOfUser(user.id, kept.idHash), []);
      await store.sessions.describe(kept.idHash, { userAgent: undefined, ip: undefined });
      assert.deepEqual(await store.sessions.findLive(kept.idHash, T0), kept, 'nothing recorded reads back as nothing');
    });
  });
}
