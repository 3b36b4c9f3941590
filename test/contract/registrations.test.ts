import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { ConflictError, MissingReferenceError, type InitialAccessToken, type Store } from '../../src/storage/ports.ts';
import { DATABASES } from '../helpers/databases.ts';
import { aClient, aHash, openTestStore, T0, warmUp, type TestStore } from '../helpers/store.ts';

const RACERS = 20;

function aToken(overrides: Partial<InitialAccessToken> = {}): InitialAccessToken {
  return { id: randomUUID(), tokenHash: aHash(), description: undefined, createdBy: 'cli:test', createdAt: T0, expiresAt: T0 + 3600_000, usesLeft: 1, ...overrides };
}

for (const kind of DATABASES) {
  describe(`registration store on ${kind.name}`, () => {
    let harness: TestStore;
    let other: Store;
    before(async () => {
      harness = await openTestStore(kind, { poolSize: RACERS });
      other = await harness.open({ poolSize: RACERS });
    });
    after(async () => harness.close());

    test('an initial access token is found by its hash and spent one use at a time until used up; expired or unknown ones spend nothing (DR-04)', async () => {
      const token = aToken({ usesLeft: 2, description: 'CI' });
      await harness.store.registrations.insertInitialAccessToken(token);
      assert.deepEqual(await harness.store.registrations.findInitialAccessToken(token.tokenHash), token);
      assert.deepEqual(await harness.store.registrations.useInitialAccessToken(token.tokenHash, T0), { ...token, usesLeft: 1 });
      assert.deepEqual(await harness.store.registrations.useInitialAccessToken(token.tokenHash, T0), { ...token, usesLeft: 0 });
      assert.equal(await harness.store.registrations.useInitialAccessToken(token.tokenHash, T0), undefined);
      assert.equal((await harness.store.registrations.findInitialAccessToken(token.tokenHash))?.usesLeft, 0);

      const expiring = aToken({ usesLeft: 3 });
      await harness.store.registrations.insertInitialAccessToken(expiring);
      assert.equal(await harness.store.registrations.useInitialAccessToken(expiring.tokenHash, expiring.expiresAt), undefined, 'expired at its expires_at');
      assert.equal((await harness.store.registrations.findInitialAccessToken(expiring.tokenHash))?.usesLeft, 3);
      assert.equal(await harness.store.registrations.useInitialAccessToken(aHash(), T0), undefined);
      await assert.rejects(harness.store.registrations.insertInitialAccessToken(aToken({ tokenHash: token.tokenHash })), ConflictError);
    });

    test('concurrent uses of a five-use token from two instances spend exactly five (DR-05)', async () => {
      const token = aToken({ usesLeft: 5 });
      await harness.store.registrations.insertInitialAccessToken(token);
      await Promise.all([warmUp(harness.store, RACERS), warmUp(other, RACERS)]);
      const results = await Promise.all(Array.from({ length: RACERS }, (_, i) => (i % 2 ? other : harness.store).transaction((tx) => tx.registrations.useInitialAccessToken(token.tokenHash, T0))));
      assert.equal(results.filter((r) => r !== undefined).length, 5);
      assert.deepEqual(results.filter((r) => r !== undefined).map((r) => r!.usesLeft).sort(), [0, 1, 2, 3, 4]);
      assert.equal((await harness.store.registrations.findInitialAccessToken(token.tokenHash))?.usesLeft, 0);
    });

    test('a use in a unit of work that fails is not spent (DR-04)', async () => {
      const token = aToken();
      await harness.store.registrations.insertInitialAccessToken(token);
      await assert.rejects(
        harness.store.transaction(async (tx) => {
          assert.ok(await tx.registrations.useInitialAccessToken(token.tokenHash, T0));
          throw new Error('registration refused');
        }),
        /registration refused/,
      );
      assert.equal((await harness.store.registrations.findInitialAccessToken(token.tokenHash))?.usesLeft, 1);
    });

    test('tokens list by id, keyset-paged; delete revokes (DR-12)', async () => {
      const ids = [];
      for (let i = 0; i < 3; i++) {
        const token = aToken();
        await harness.store.registrations.insertInitialAccessToken(token);
        ids.push(token.id);
      }
      const all: string[] = [];
      for (let after: string | undefined; ; ) {
        const page = await harness.store.registrations.listInitialAccessTokens({ after, limit: 2 });
        all.push(...page.map((t) => t.id));
        if (page.length < 2) break;
        after = page.at(-1)!.id;
      }
      assert.deepEqual(all, [...all].sort());
      for (const id of ids) assert.ok(all.includes(id));
      assert.equal(await harness.store.registrations.deleteInitialAccessToken(ids[0]!), true);
      assert.equal(await harness.store.registrations.deleteInitialAccessToken(ids[0]!), false);
    });

    test('a registration access token belongs to one client and goes with it (DR-09)', async () => {
      const client = aClient();
      await harness.store.clients.insert(client);
      const hash = aHash();
      await harness.store.registrations.insertRegistrationToken(client.clientId, hash, T0);
      assert.equal(await harness.store.registrations.registrationTokenHash(client.clientId), hash);
      await assert.rejects(harness.store.registrations.insertRegistrationToken(client.clientId, aHash(), T0), ConflictError);
      await assert.rejects(harness.store.registrations.insertRegistrationToken(randomUUID(), aHash(), T0), MissingReferenceError);
      await harness.store.clients.delete(client.clientId);
      assert.equal(await harness.store.registrations.registrationTokenHash(client.clientId), undefined);
    });
  });
}
