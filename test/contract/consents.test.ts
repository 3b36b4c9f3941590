import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Client } from '../../src/domain/client.ts';
import type { User } from '../../src/domain/user.ts';
import { grantConsent, withdrawConsent } from '../../src/oauth/consents.ts';
import { MissingReferenceError } from '../../src/storage/ports.ts';
import { DATABASES } from '../helpers/databases.ts';
import { aClient, aCode, aStoredUser, aToken, openTestStore, T0, warmUp, type TestStore } from '../helpers/store.ts';

const RACERS = 20;

for (const kind of DATABASES) {
  describe(`consent store on ${kind.name}`, () => {
    let harness: TestStore;
    let other: TestStore['store'];
    before(async () => {
      harness = await openTestStore(kind, { poolSize: RACERS });
      other = await harness.open({ poolSize: 10 });
    });
    after(async () => harness.close());

    async function userAndClient(): Promise<{ user: User; client: Client }> {
      const user = await aStoredUser(harness.store);
      const client = aClient();
      await harness.store.clients.insert(client);
      return { user, client };
    }

    test('a grant is found as a sorted set with its times; another user or client has none', async () => {
      const { user, client } = await userAndClient();
      const stored = await grantConsent(harness.store, { userId: user.id, clientId: client.clientId, scope: ['profile', 'openid', 'profile'] }, T0);
      const expected = { userId: user.id, clientId: client.clientId, scope: ['openid', 'profile'], grantedAt: T0, updatedAt: T0 };
      assert.deepEqual(stored, expected);
      assert.deepEqual(await harness.store.consents.find(user.id, client.clientId), expected);
      assert.equal(await harness.store.consents.find(user.id, 'another-client'), undefined);
      assert.equal(await harness.store.consents.find((await aStoredUser(harness.store)).id, client.clientId), undefined);
    });

    test('a later grant widens the set and keeps the first grant time; a narrower one never narrows it', async () => {
      const { user, client } = await userAndClient();
      await grantConsent(harness.store, { userId: user.id, clientId: client.clientId, scope: ['openid'] }, T0);
      await grantConsent(harness.store, { userId: user.id, clientId: client.clientId, scope: ['email', 'openid'] }, T0 + 10);
      await grantConsent(harness.store, { userId: user.id, clientId: client.clientId, scope: ['openid'] }, T0 + 20);
      assert.deepEqual(await harness.store.consents.find(user.id, client.clientId), {
        userId: user.id,
        clientId: client.clientId,
        scope: ['email', 'openid'],
        grantedAt: T0,
        updatedAt: T0 + 20,
      });
    });

    test('an empty scope set is stored and read back as empty', async () => {
      const { user, client } = await userAndClient();
      await grantConsent(harness.store, { userId: user.id, clientId: client.clientId, scope: [] }, T0);
      assert.deepEqual((await harness.store.consents.find(user.id, client.clientId))?.scope, []);
    });

    test('concurrent grants of different values, from two instances, all survive', async () => {
      const { user, client } = await userAndClient();
      await Promise.all([warmUp(harness.store, RACERS), warmUp(other, 10)]);
      const values = Array.from({ length: RACERS }, (_, i) => `scope-${String(i).padStart(2, '0')}`);
      await Promise.all(values.map((value, i) => grantConsent(i % 2 === 0 ? harness.store : other, { userId: user.id, clientId: client.clientId, scope: [value] }, T0 + i)));
      assert.deepEqual((await harness.store.consents.find(user.id, client.clientId))?.scope, values);
    });

    test('a consent to an unknown user or client is refused', async () => {
      const { user, client } = await userAndClient();
      await assert.rejects(grantConsent(harness.store, { userId: user.id, clientId: 'no-such-client', scope: ['openid'] }, T0), MissingReferenceError);
      await assert.rejects(grantConsent(harness.store, { userId: '00000000-0000-4000-8000-000000000000', clientId: client.clientId, scope: ['openid'] }, T0), MissingReferenceError);
    });

    test('listForUser lists exactly that user\'s consents, by client_id', async () => {
      const { user, client } = await userAndClient();
      const second = aClient({ clientId: `${client.clientId}-b` });
      await harness.store.clients.insert(second);
      await grantConsent(harness.store, { userId: user.id, clientId: second.clientId, scope: ['email'] }, T0 + 1);
      await grantConsent(harness.store, { userId: user.id, clientId: client.clientId, scope: ['openid'] }, T0);
      await grantConsent(harness.store, { userId: (await aStoredUser(harness.store)).id, clientId: client.clientId, scope: ['openid'] }, T0);
      assert.deepEqual(await harness.store.consents.listForUser(user.id), [
        { userId: user.id, clientId: client.clientId, scope: ['openid'], grantedAt: T0, updatedAt: T0 },
        { userId: user.id, clientId: second.clientId, scope: ['email'], grantedAt: T0 + 1, updatedAt: T0 + 1 },
      ]);
    });

    test('withdraw deletes the consent, spends the client\'s codes for the user and revokes its tokens for the user, and no others', async () => {
      const { user, client } = await userAndClient();
      await grantConsent(harness.store, { userId: user.id, clientId: client.clientId, scope: ['openid'] }, T0);
      const mine = [aToken({ userId: user.id, clientId: client.clientId }), aToken({ userId: user.id, clientId: client.clientId, kind: 'refresh_token', expiresAt: undefined })];
      const otherClient = aToken({ userId: user.id });
      const otherUser = aToken({ clientId: client.clientId });
      await harness.store.tokens.insertMany([...mine, otherClient, otherUser]);
      const code = aCode({ userId: user.id, clientId: client.clientId });
      const otherCode = aCode({ userId: user.id });
      await harness.store.codes.insert(code);
      await harness.store.codes.insert(otherCode);

      assert.deepEqual(await withdrawConsent(harness.store, user.id, client.clientId, T0 + 5), { withdrawn: true, revoked: 2 });
      assert.equal(await harness.store.consents.find(user.id, client.clientId), undefined);
      const revokedAt = async (hash: string) => (await harness.store.tokens.find(hash))?.revokedAt;
      assert.deepEqual(await Promise.all([...mine, otherClient, otherUser].map((t) => revokedAt(t.tokenHash))), [T0 + 5, T0 + 5, undefined, undefined]);
      const consumedAt = async (hash: string) =>
        (await harness.store.database.db.selectFrom('authorization_codes').select('consumed_at').where('code_hash', '=', hash).executeTakeFirstOrThrow()).consumed_at;
      assert.deepEqual([Number(await consumedAt(code.codeHash)), await consumedAt(otherCode.codeHash)], [T0 + 5, null]);
      assert.deepEqual(await withdrawConsent(harness.store, user.id, client.clientId, T0 + 6), { withdrawn: false, revoked: 0 });
    });

    test('deleting the user or the client deletes their consents', async () => {
      const { user, client } = await userAndClient();
      const { user: second } = await userAndClient();
      await grantConsent(harness.store, { userId: user.id, clientId: client.clientId, scope: ['openid'] }, T0);
      await grantConsent(harness.store, { userId: second.id, clientId: client.clientId, scope: ['openid'] }, T0);
      await harness.store.users.delete(user.id);
      assert.equal(await harness.store.consents.find(user.id, client.clientId), undefined);
      assert.notEqual(await harness.store.consents.find(second.id, client.clientId), undefined);
      await harness.store.clients.delete(client.clientId);
      assert.equal(await harness.store.consents.find(second.id, client.clientId), undefined);
    });
  });
}
