/**
 * Client ids and user ids stay apart (issue 22, item 4): a client's own token carries its client_id
 * as `sub`, a user's token the user's id (RFC 9068 §2.2, §5). registerClient refuses a client_id
 * that is a user's id; a new user's id is never a client_id; and a client and a user racing for one
 * id never both get it, on every database (two instances on PostgreSQL).
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { IdentityError } from '../../src/identity/errors.ts';
import { createUser, type UserDeps } from '../../src/identity/users.ts';
import { ManualClock } from '../../src/lib/clock.ts';
import { cryptoRandom, type Random } from '../../src/lib/random.ts';
import { bootstrap } from '../../src/manage/bootstrap.ts';
import { ClientIdIsUserId, registerClient, type ClientRegistrationDeps } from '../../src/oauth/client-registration.ts';
import type { Store } from '../../src/storage/ports.ts';
import type { SqlStore } from '../../src/storage/sql/store.ts';
import { AS_OPERATOR } from '../helpers/authority.ts';
import { DATABASES } from '../helpers/databases.ts';
import { aStoredUser, openTestStore, T0, unique, warmUp, type TestStore } from '../helpers/store.ts';

const DOCUMENT = { client_name: 'Imported', grant_types: ['client_credentials'] };

/** cryptoRandom, except that uuid() first hands out `ids`, in order. */
function drawing(...ids: string[]): Random {
  return { ...cryptoRandom, uuid: () => ids.shift() ?? randomUUID() };
}

const clientDeps = (store: Store, random: Random = cryptoRandom): ClientRegistrationDeps => ({ clients: store.clients, transaction: store.transaction, clock: new ManualClock(T0), random });
const userDeps = (store: Store, random: Random = cryptoRandom): UserDeps => ({ users: store.users, organizations: store.organizations, groups: store.groups, transaction: store.transaction, clock: new ManualClock(T0), random });

for (const kind of DATABASES) {
  describe(`client ids and user ids stay apart on ${kind.name}`, () => {
    let harness: TestStore;
    let store: SqlStore;
    before(async () => {
      harness = await openTestStore(kind);
      store = harness.store;
    });
    after(async () => harness.close());

    test("registerClient refuses a user's id as client_id, in any letter case; a UUID no user has is taken", async () => {
      const user = await aStoredUser(store);
      for (const clientId of [user.id, user.id.toUpperCase()]) {
        await assert.rejects(registerClient(clientDeps(store), DOCUMENT, { clientId }), (error: unknown) => error instanceof ClientIdIsUserId && error.clientId === clientId && error.message === `the client_id ${JSON.stringify(clientId)} is the id of a user: a client's tokens would name that user as their subject (sub)`);
        assert.equal(await store.clients.get(clientId), undefined, 'nothing registered');
      }
      const free = randomUUID();
      assert.equal((await registerClient(clientDeps(store), DOCUMENT, { clientId: free })).client.clientId, free);
    });

    test("a new user's id is never a client's client_id: createUser and bootstrap draw again; a random source that repeats itself fails", async () => {
      const taken = randomUUID();
      await registerClient(clientDeps(store), DOCUMENT, { clientId: taken });
      const next = randomUUID();
      const user = await createUser(userDeps(store, drawing(taken, next)), { username: unique('u-') }, AS_OPERATOR);
      assert.equal(user.id, next);
      assert.equal((await store.users.get(next))?.username, user.username);

      // The bootstrap draws the two groups' ids first, then the administrator's.
      const admin = randomUUID();
      const result = await bootstrap({ transaction: store.transaction, clock: new ManualClock(T0), random: drawing(randomUUID(), randomUUID(), taken, admin) }, { issuer: 'https://op.example/uas', manageAdminGroup: 'Administrators', manageReadonlyGroup: 'Administrators (read-only)' }, { username: unique('admin-'), password: 'bootstrap password 1' });
      assert.equal(result.user?.id, admin);

      const username = unique('u-');
      await assert.rejects(createUser(userDeps(store, drawing(taken, taken, taken)), { username }, AS_OPERATOR), (error: unknown) => error instanceof IdentityError && error.code === 'inconsistent');
      assert.equal(await store.users.getByUsername(username), undefined, 'no user created');
    });

    test('a client imported with an id while a user is created with the same id, from two instances: never both', { timeout: 120_000 }, async () => {
      const TRIALS = 30;
      const [one, two] = kind.name === 'postgres' ? [await harness.open(), await harness.open()] : [store, store];
      await Promise.all([warmUp(one, 4), warmUp(two, 4)]);
      const both: string[] = [];
      const outcomes = { clientRefused: 0, userDrewAgain: 0 };
      for (let trial = 0; trial < TRIALS; trial++) {
        const id = randomUUID();
        const [client, user] = await Promise.allSettled([
          registerClient(clientDeps(one), DOCUMENT, { clientId: id }),
          createUser(userDeps(two, drawing(id)), { username: unique('racer-') }, AS_OPERATOR),
        ]);
        assert.equal(user.status, 'fulfilled', String(user.status === 'rejected' ? user.reason : ''));
        if ((await store.clients.get(id)) !== undefined && (await store.users.get(id)) !== undefined) both.push(`trial ${trial}`);
        if (client.status === 'rejected') {
          assert.ok(client.reason instanceof ClientIdIsUserId, String(client.reason));
          outcomes.clientRefused++;
        } else if (user.value.id !== id) outcomes.userDrewAgain++;
      }
      assert.deepEqual(both, [], 'an id is a client or a user, never both');
      assert.equal(outcomes.clientRefused + outcomes.userDrewAgain, TRIALS, JSON.stringify(outcomes));
    });
  });
}
