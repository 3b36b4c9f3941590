import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { SIGNING_ALGS } from '../../src/protocol/constants.ts';
import { KeyRing } from '../../src/crypto/key-ring.ts';
import type { SigningKey } from '../../src/domain/signing-key.ts';
import { ManualClock } from '../../src/lib/clock.ts';
import { DATABASES } from '../helpers/databases.ts';
import { aSigningKey, T0, warmUp, withTestStore } from '../helpers/store.ts';

const kids = (keys: SigningKey[]) => keys.map((k) => k.kid);

// Rotation retires every active key in the database, so each test here has a database of its own.
for (const kind of DATABASES) {
  describe(`key store on ${kind.name}`, () => {
    test('a key round-trips every field', async () => {
      await withTestStore(kind, async (store) => {
        const active = aSigningKey({ encrypted: true, privateJwk: 'v1.aXY.Ym9keQ.dGFn' });
        const retired = aSigningKey({ createdAt: T0 - 10, retiredAt: T0 - 5, publishUntil: T0 + 1000 });
        await store.keys.insert(active);
        await store.keys.insert(retired);
        assert.deepEqual(await store.keys.list(T0), [active, retired]);
      });
    });

    test('list returns the active and still-published keys, newest first, and hides the expired ones', async () => {
      await withTestStore(kind, async (store) => {
        const active = aSigningKey({ createdAt: T0 + 300 });
        const recent = aSigningKey({ createdAt: T0 + 200, retiredAt: T0 + 300, publishUntil: T0 + 2000 });
        const older = aSigningKey({ createdAt: T0 + 100, retiredAt: T0 + 200, publishUntil: T0 + 1000 });
        const gone = aSigningKey({ createdAt: T0, retiredAt: T0 + 100, publishUntil: T0 + 500 });
        for (const k of [older, active, gone, recent]) await store.keys.insert(k);
        assert.deepEqual(kids(await store.keys.list(T0 + 400)), kids([active, recent, older, gone]));
        assert.deepEqual(kids(await store.keys.list(T0 + 500)), kids([active, recent, older]), 'hidden from its publishUntil on');
        assert.deepEqual(kids(await store.keys.list(T0 + 999)), kids([active, recent, older]));
        assert.deepEqual(kids(await store.keys.list(T0 + 1500)), kids([active, recent]));
        assert.deepEqual(kids(await store.keys.list(T0 + 10_000_000)), kids([active]), 'the active key never expires');
      });
    });

    test('list of an empty store is empty', async () => {
      await withTestStore(kind, async (store) => {
        assert.deepEqual(await store.keys.list(T0), []);
      });
    });

    test('rotate makes the new key active and retires the previous one, published until publishUntil', async () => {
      await withTestStore(kind, async (store) => {
        const first = aSigningKey({ createdAt: T0 });
        await store.keys.insert(first);
        const second = aSigningKey({ createdAt: T0 + 1000 });
        await store.keys.rotate(second, T0 + 5000);
        assert.deepEqual(await store.keys.list(T0 + 1000), [second, { ...first, retiredAt: T0 + 1000, publishUntil: T0 + 5000 }]);
        assert.deepEqual(await store.keys.list(T0 + 5000), [second]);

        const third = aSigningKey({ createdAt: T0 + 2000 });
        await store.keys.rotate(third, T0 + 9000);
        assert.deepEqual(await store.keys.list(T0 + 2000), [
          third,
          { ...second, retiredAt: T0 + 2000, publishUntil: T0 + 9000 },
          { ...first, retiredAt: T0 + 1000, publishUntil: T0 + 5000 },
        ], 'an already retired key keeps its own publishUntil');
      });
    });

    test('rotate on an empty store inserts the key; with several active keys it retires them all', async () => {
      await withTestStore(kind, async (store) => {
        const first = aSigningKey({ createdAt: T0 });
        await store.keys.rotate(first, T0 + 100);
        assert.deepEqual(await store.keys.list(T0), [first]);
        const twin = aSigningKey({ createdAt: T0 + 1 });
        await store.keys.insert(twin);
        const next = aSigningKey({ createdAt: T0 + 10 });
        await store.keys.rotate(next, T0 + 100);
        const listed = await store.keys.list(T0 + 10);
        assert.deepEqual(kids(listed), kids([next, twin, first]));
        assert.deepEqual(listed.filter((k) => k.retiredAt === undefined), [next]);
      });
    });

    test('rotate is atomic: when the new key cannot be stored, the active key stays active', async () => {
      await withTestStore(kind, async (store) => {
        const active = aSigningKey({ createdAt: T0 });
        await store.keys.insert(active);
        await assert.rejects(store.keys.rotate(aSigningKey({ kid: active.kid, createdAt: T0 + 1000 }), T0 + 5000));
        assert.deepEqual(await store.keys.list(T0 + 1000), [active]);
      });
    });

    test('a rotation through one instance reaches a KeyRing on another instance once its cache expires', async () => {
      await withTestStore(kind, async (store, harness) => {
        const clock = new ManualClock(T0);
        const options = { encryptionSecret: 'shared secret', retiredKeyGraceMs: 3_600_000, cacheMs: 30_000, activationDelayMs: 0 };
        const ringA = new KeyRing(store.keys, clock, options);
        const ringB = new KeyRing((await harness.open()).keys, clock, options);
        await Promise.all([ringA.ensureActiveKey(), ringB.ensureActiveKey()]);
        const first = (await ringB.activeKey()).kid;
        assert.equal((await ringA.activeKey()).kid, first, 'both instances sign with the same key');

        clock.advance(1000);
        const rotated = await ringA.rotate();
        assert.equal((await ringA.activeKey()).kid, rotated.kid);
        assert.equal((await ringB.activeKey()).kid, first, 'B still trusts its cache');
        clock.advance(30_000);
        assert.equal((await ringB.activeKey()).kid, rotated.kid);
        const published = (await ringB.jwks()).keys.map((k) => k.kid);
        assert.equal(published[0], rotated.kid);
        assert.ok(published.includes(first), 'the old key is still published');
      });
    });

    test('listUnsealed lists every key in the clear, published or not, oldest first (security test finding 11)', async () => {
      await withTestStore(kind, async (store) => {
        const gone = aSigningKey({ createdAt: T0, retiredAt: T0 + 1, publishUntil: T0 + 2 });
        const active = aSigningKey({ createdAt: T0 + 10 });
        const sealed = aSigningKey({ createdAt: T0 + 5, retiredAt: T0 + 10, publishUntil: T0 + 1000, encrypted: true, privateJwk: 'v1.aXY.Ym9keQ.dGFn' });
        for (const k of [active, sealed, gone]) await store.keys.insert(k);
        assert.deepEqual(await store.keys.listUnsealed(), [gone, active]);
      });
    });

    test('seal: of instances sealing one key at once exactly one wins, and the key stays sealed with its value (security test finding 11)', async () => {
      await withTestStore(kind, async (store, harness) => {
        // PostgreSQL: three instances with pools of their own. SQLite: one store; instances are processes.
        const instances = kind.name === 'postgres' ? [store, await harness.open(), await harness.open()] : [store, store, store];
        await Promise.all(instances.map((s) => warmUp(s, 2)));
        const TRIALS = 20;
        for (let trial = 0; trial < TRIALS; trial++) {
          const key = aSigningKey({ createdAt: T0 + trial, retiredAt: T0 + trial, publishUntil: T0 + 10_000 });
          await store.keys.insert(key);
          const won = await Promise.all(instances.map((s, i) => s.keys.seal(key.kid, `v1.sealed.by.${i}`)));
          assert.equal(won.filter(Boolean).length, 1, `trial ${trial}: ${JSON.stringify(won)}`);
          const stored = (await store.keys.list(T0)).find((k) => k.kid === key.kid);
          assert.deepEqual(stored, { ...key, encrypted: true, privateJwk: `v1.sealed.by.${won.indexOf(true)}` });
          assert.equal(await store.keys.seal(key.kid, 'v1.again.and.again'), false, 'a sealed key is never sealed again');
        }
        assert.deepEqual(await store.keys.listUnsealed(), []);
      });
    });

    test('insertFirst: of instances starting at once on an empty store exactly one stores its key; none once a key is active', async () => {
      await withTestStore(kind, async (store, harness) => {
        // Two instances with pools of their own (on SQLite: two stores on one file take turns).
        const instances = [store, await harness.open()];
        await Promise.all(instances.map((s) => warmUp(s, 3)));
        const first = await Promise.all(Array.from({ length: 6 }, (_, i) => instances[i % 2]!.keys.insertFirst(aSigningKey({ createdAt: T0 + i }))));
        assert.equal(first.filter(Boolean).length, 1, JSON.stringify(first));
        assert.equal((await store.keys.list(T0)).length, 1);
        assert.equal(await store.keys.insertFirst(aSigningKey()), false);
      });
    });

    test('two rotations at once from two instances leave exactly one unretired key (repeated)', async () => {
      await withTestStore(kind, async (store, harness) => {
        const other = await harness.open();
        await Promise.all([warmUp(store, 2), warmUp(other, 2)]);
        await store.keys.insert(aSigningKey({ createdAt: T0 }));
        const TRIALS = 15;
        for (let trial = 1; trial <= TRIALS; trial++) {
          const at = T0 + trial * 10;
          await Promise.all([store.keys.rotate(aSigningKey({ createdAt: at }), at + 1000), other.keys.rotate(aSigningKey({ createdAt: at + 1 }), at + 1000)]);
          const active = (await store.keys.list(at)).filter((k) => k.retiredAt === undefined);
          assert.equal(active.length, 1, `trial ${trial}: ${active.length} unretired keys`);
        }
      });
    });

    test('insertFirst is per algorithm: of instances creating every algorithm\'s first key at once, exactly one key of each is stored (AL-01)', async () => {
      await withTestStore(kind, async (store, harness) => {
        // PostgreSQL: three instances with pools of their own; SQLite: two stores on one file take turns.
        const instances = kind.name === 'postgres' ? [store, await harness.open(), await harness.open()] : [store, await harness.open()];
        await Promise.all(instances.map((s) => warmUp(s, 3)));
        const attempts = instances.flatMap((s, i) => SIGNING_ALGS.flatMap((alg) => [0, 1].map((n) => () => s.keys.insertFirst(aSigningKey({ alg, createdAt: T0 + i * 10 + n })))));
        const stored = await Promise.all(attempts.map((attempt) => attempt()));
        assert.equal(stored.filter(Boolean).length, SIGNING_ALGS.length, JSON.stringify(stored));
        const listed = await store.keys.list(T0);
        assert.deepEqual(listed.map((k) => k.alg).sort(), [...SIGNING_ALGS].sort(), 'one key of each algorithm');
        for (const alg of SIGNING_ALGS) assert.equal(await store.keys.insertFirst(aSigningKey({ alg })), false, `${alg} has its key`);
      });
    });

    test('rotate retires only the keys of its own algorithm (AL-03)', async () => {
      await withTestStore(kind, async (store) => {
        const firsts = SIGNING_ALGS.map((alg) => aSigningKey({ alg, createdAt: T0 }));
        for (const k of firsts) assert.equal(await store.keys.insertFirst(k), true);
        const es256 = aSigningKey({ alg: 'ES256', createdAt: T0 + 1000 });
        await store.keys.rotate(es256, T0 + 5000);
        const listed = await store.keys.list(T0 + 1000);
        const unretired = listed.filter((k) => k.retiredAt === undefined);
        assert.deepEqual(kids(unretired).sort(), kids([...firsts.filter((k) => k.alg !== 'ES256'), es256]).sort());
        assert.deepEqual(listed.find((k) => k.kid === firsts.find((f) => f.alg === 'ES256')!.kid), { ...firsts.find((f) => f.alg === 'ES256')!, retiredAt: T0 + 1000, publishUntil: T0 + 5000 });
      });
    });

    test('rotations of two algorithms at once from two instances leave exactly one unretired key of each (repeated, AL-03)', async () => {
      await withTestStore(kind, async (store, harness) => {
        const other = await harness.open();
        await Promise.all([warmUp(store, 2), warmUp(other, 2)]);
        for (const alg of SIGNING_ALGS) await store.keys.insert(aSigningKey({ alg, createdAt: T0 }));
        const TRIALS = 8;
        for (let trial = 1; trial <= TRIALS; trial++) {
          const at = T0 + trial * 10;
          await Promise.all(
            SIGNING_ALGS.flatMap((alg) => [store.keys.rotate(aSigningKey({ alg, createdAt: at }), at + 1000), other.keys.rotate(aSigningKey({ alg, createdAt: at + 1 }), at + 1000)]),
          );
          const active = (await store.keys.list(at)).filter((k) => k.retiredAt === undefined);
          assert.deepEqual(active.map((k) => k.alg).sort(), [...SIGNING_ALGS].sort(), `trial ${trial}`);
        }
      });
    });

    test('KeyRing.prepare on instances starting at once creates one first key of every algorithm, and they sign with the same keys (AL-01)', async () => {
      await withTestStore(kind, async (store, harness) => {
        const clock = new ManualClock(T0);
        const options = { encryptionSecret: undefined, retiredKeyGraceMs: 3_600_000, cacheMs: 30_000 };
        const rings = [new KeyRing(store.keys, clock, options), new KeyRing((await harness.open()).keys, clock, options)];
        await Promise.all(rings.map((ring) => ring.prepare()));
        const listed = await store.keys.list(T0);
        assert.deepEqual(listed.map((k) => k.alg).sort(), [...SIGNING_ALGS].sort());
        for (const alg of SIGNING_ALGS) {
          const [a, b] = await Promise.all(rings.map((ring) => ring.activeKey(alg)));
          assert.equal(a!.alg, alg);
          assert.equal(a!.kid, b!.kid, `${alg}: both instances sign with one key`);
          assert.equal(a!.kid, listed.find((k) => k.alg === alg)!.kid);
        }
      });
    });
  });
}
