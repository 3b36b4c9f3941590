import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { Token, UserToken } from '../../src/domain/grant.ts';
import type { TokenStore } from '../../src/storage/ports.ts';
import { DATABASES } from '../helpers/databases.ts';
import { aClient, aClientToken, aHash, aSessionIndex, aStoredUser, aToken, openTestStore, T0, warmUp, type TestStore } from '../helpers/store.ts';

const RACERS = 20;

for (const kind of DATABASES) {
  describe(`token store on ${kind.name}`, () => {
    let harness: TestStore;
    let tokens: TokenStore;
    /** A second store on the same database: another instance with its own connections. */
    let otherTokens: TokenStore;
    /** Opens every connection both pools may use, so the races below run on separate connections. */
    let warm: () => Promise<void>;
    before(async () => {
      harness = await openTestStore(kind, { poolSize: RACERS });
      tokens = harness.store.tokens;
      const other = await harness.open({ poolSize: 10 });
      otherTokens = other.tokens;
      warm = async () => {
        await Promise.all([warmUp(harness.store, RACERS), warmUp(other, 10)]);
      };
    });
    after(async () => harness.close());

    async function stored(overrides: Partial<UserToken> = {}): Promise<Token> {
      const token = aToken(overrides);
      await tokens.insert(token);
      return token;
    }

    /** Whether each token is still unrevoked, in order. */
    async function live(...list: Token[]): Promise<boolean[]> {
      return Promise.all(list.map(async (t) => (await tokens.find(t.tokenHash))?.revokedAt === undefined));
    }

    test('an access token round-trips every field', async () => {
      const token = await stored({ acr: 'urn:example:mfa', amr: ['pwd', 'otp'], scope: 'openid email' });
      assert.deepEqual(await tokens.find(token.tokenHash), token);
    });

    test('a refresh token with no expiry, code or acr round-trips with those undefined', async () => {
      const token = await stored({ kind: 'refresh_token', expiresAt: undefined, codeHash: undefined, acr: undefined, amr: [] });
      assert.deepEqual(await tokens.find(token.tokenHash), token);
    });

    test('rekey gives a token a new key, keeping the revocation it got under the old one; an unknown hash changes nothing (JA-11)', async () => {
      const token = await stored();
      await tokens.revokeFamily(token.familyId, T0 + 9);
      const newHash = aHash();
      assert.equal(await tokens.rekey(token.tokenHash, newHash), true);
      assert.equal(await tokens.find(token.tokenHash), undefined);
      assert.deepEqual(await tokens.find(newHash), { ...token, tokenHash: newHash, revokedAt: T0 + 9 });
      assert.equal(await tokens.rekey(aHash(), aHash()), false);
    });

    test('find returns revoked and rotated tokens as they are; an unknown hash is undefined', async () => {
      const token = await stored({ kind: 'refresh_token', revokedAt: T0 + 5, rotatedAt: T0 + 4 });
      assert.deepEqual(await tokens.find(token.tokenHash), token);
      assert.equal(await tokens.find(aHash()), undefined);
    });

    test('findWithUser reads the token with its user\'s profile; the user undefined when gone; an unknown hash is undefined', async () => {
      const { attributes: _attributes, ...profile } = await aStoredUser(harness.store, { givenName: 'Ada', attributes: { colour: ['blue'] } });
      const token = await stored({ userId: profile.id, revokedAt: T0 + 7 });
      assert.deepEqual(await tokens.findWithUser(token.tokenHash), { token, user: profile, clientActive: false, clientUserinfoAlg: undefined, clientPolicy: undefined, clientPolicySubject: undefined });
      const orphan = await stored();
      assert.deepEqual(await tokens.findWithUser(orphan.tokenHash), { token: orphan, user: undefined, clientActive: false, clientUserinfoAlg: undefined, clientPolicy: undefined, clientPolicySubject: undefined });
      assert.equal(await tokens.findWithUser(aHash()), undefined);
    });

    test("findWithUser tells whether the token's client is registered and active now, as another instance changed it", async () => {
      const client = aClient();
      await harness.store.clients.insert(client);
      const token = await stored({ clientId: client.clientId });
      const other = await harness.open();
      assert.equal((await tokens.findWithUser(token.tokenHash))?.clientActive, true);
      assert.equal(await other.clients.update({ ...client, active: false, updatedAt: client.updatedAt + 1 }), true);
      assert.equal((await tokens.findWithUser(token.tokenHash))?.clientActive, false);
      assert.equal(await other.clients.update({ ...client, active: true, updatedAt: client.updatedAt + 2 }), true);
      assert.equal((await tokens.findWithUser(token.tokenHash))?.clientActive, true);
      assert.equal(await other.clients.delete(client.clientId), true);
      assert.deepEqual(await tokens.findWithUser(token.tokenHash), { token, user: undefined, clientActive: false, clientUserinfoAlg: undefined, clientPolicy: undefined, clientPolicySubject: undefined });
    });

    test('introspectionRead reads the caller as clients.get does, the token as findWithUser does, and the owners of its scope values, in one statement (issue 27)', async () => {
      const caller = aClient();
      const resourceServer = aClient({ metadata: { resource_server: true, resource_scopes: [`files:read:${randomUUID()}`] } });
      await harness.store.clients.insert(caller);
      await harness.store.clients.insert(resourceServer);
      const declared = (resourceServer.metadata.resource_scopes as string[])[0]!;
      const { attributes: _attributes, ...profile } = await aStoredUser(harness.store);
      const token = await stored({ userId: profile.id, clientId: caller.clientId, scope: `openid ${declared} ${resourceServer.clientId} undeclared` });
      const read = await tokens.introspectionRead(caller.clientId, token.tokenHash);
      assert.deepEqual(read, { caller: await harness.store.clients.get(caller.clientId), found: await tokens.findWithUser(token.tokenHash), scopeOwners: new Map([[declared, resourceServer.clientId]]) });
      assert.deepEqual(await tokens.introspectionRead(caller.clientId, aHash()), { caller: await harness.store.clients.get(caller.clientId), found: undefined, scopeOwners: undefined });
      assert.deepEqual(await tokens.introspectionRead(`unknown-${randomUUID()}`, token.tokenHash), { caller: undefined, found: undefined, scopeOwners: undefined });
      // A token with no scope value a resource server declared: an empty map, not a question left open.
      const plain = await stored({ userId: profile.id, scope: 'openid' });
      assert.deepEqual((await tokens.introspectionRead(caller.clientId, plain.tokenHash)).scopeOwners, new Map());
      // A stored scope that no scope value can be (a quote): SQLite cannot split it as JSON and leaves the owners to the clients.
      const odd = await stored({ userId: profile.id, scope: `openid ${declared} a"b` });
      const oddOwners = (await tokens.introspectionRead(caller.clientId, odd.tokenHash)).scopeOwners;
      assert.deepEqual(oddOwners, kind.name === 'sqlite' ? undefined : new Map([[declared, resourceServer.clientId]]));
    });

    test("findWithUser reports the client's userinfo_signed_response_alg as stored now (AL-07)", async () => {
      const client = aClient({ userinfoSignedResponseAlg: 'ES256' });
      await harness.store.clients.insert(client);
      const token = await stored({ clientId: client.clientId });
      assert.equal((await tokens.findWithUser(token.tokenHash))?.clientUserinfoAlg, 'ES256');
      assert.equal(await harness.store.clients.update({ ...client, userinfoSignedResponseAlg: undefined, updatedAt: client.updatedAt + 1 }), true);
      assert.equal((await tokens.findWithUser(token.tokenHash))?.clientUserinfoAlg, undefined);
    });

    test('insertMany stores every token of a grant; an empty list is a no-op', async () => {
      const familyId = randomUUID();
      const grant = [aToken({ familyId }), aToken({ familyId, kind: 'refresh_token', expiresAt: undefined })];
      await tokens.insertMany(grant);
      for (const t of grant) assert.deepEqual(await tokens.find(t.tokenHash), t);
      await assert.doesNotReject(tokens.insertMany([]));
    });

    test('insertMany is all or nothing: a duplicate hash stores none of the batch', async () => {
      const existing = await stored();
      const fresh = aToken();
      await assert.rejects(tokens.insertMany([fresh, aToken({ tokenHash: existing.tokenHash })]));
      assert.equal(await tokens.find(fresh.tokenHash), undefined);
      assert.deepEqual(await tokens.find(existing.tokenHash), existing);
    });

    test('markRotated succeeds once, then fails; the rotation time is kept', async () => {
      const token = await stored({ kind: 'refresh_token' });
      assert.equal(await tokens.markRotated(token.tokenHash, T0 + 10), true);
      assert.equal(await tokens.markRotated(token.tokenHash, T0 + 20), false);
      assert.equal(await otherTokens.markRotated(token.tokenHash, T0 + 30), false);
      assert.deepEqual(await tokens.find(token.tokenHash), { ...token, rotatedAt: T0 + 10 });
    });

    test('markRotated fails on a revoked token and on an unknown one', async () => {
      const token = await stored({ kind: 'refresh_token' });
      assert.equal(await tokens.revoke(token.tokenHash, T0 + 1), true);
      assert.equal(await tokens.markRotated(token.tokenHash, T0 + 2), false);
      assert.equal((await tokens.find(token.tokenHash))?.rotatedAt, undefined);
      assert.equal(await tokens.markRotated(aHash(), T0), false);
    });

    test(`${RACERS} concurrent markRotated calls on one token: exactly one wins`, async () => {
      const token = await stored({ kind: 'refresh_token' });
      await warm();
      const results = await Promise.all(Array.from({ length: RACERS }, (_, i) => tokens.markRotated(token.tokenHash, T0 + i)));
      assert.equal(results.filter(Boolean).length, 1);
      const winner = results.indexOf(true);
      assert.equal((await tokens.find(token.tokenHash))?.rotatedAt, T0 + winner);
    });

    test(`${RACERS} concurrent markRotated calls spread over two store instances: exactly one wins`, async () => {
      for (let round = 0; round < 3; round++) {
        const token = await stored({ kind: 'refresh_token' });
        await warm();
        const results = await Promise.all(Array.from({ length: RACERS }, (_, i) => (i % 2 === 0 ? tokens : otherTokens).markRotated(token.tokenHash, T0 + i)));
        assert.equal(results.filter(Boolean).length, 1, `round ${round}`);
      }
    });

    test('revoke is true once, then false; the first revocation time is kept; unknown is false', async () => {
      const token = await stored();
      const bystander = await stored({ familyId: token.familyId, codeHash: token.codeHash, sessionIndex: token.sessionIndex });
      assert.equal(await tokens.revoke(token.tokenHash, T0 + 1), true);
      assert.equal(await tokens.revoke(token.tokenHash, T0 + 2), false);
      assert.deepEqual(await tokens.find(token.tokenHash), { ...token, revokedAt: T0 + 1 });
      assert.deepEqual(await live(bystander), [true]);
      assert.equal(await tokens.revoke(aHash(), T0), false);
    });

    test('revokeFamily revokes the live tokens of that family only and counts them', async () => {
      const familyId = randomUUID();
      const members = [await stored({ familyId, kind: 'refresh_token' }), await stored({ familyId, kind: 'refresh_token', rotatedAt: T0 + 1 }), await stored({ familyId })];
      const alreadyRevoked = await stored({ familyId, revokedAt: T0 + 2 });
      const stranger = await stored({ kind: 'refresh_token' });
      assert.equal(await tokens.revokeFamily(familyId, T0 + 100), 3);
      for (const t of members) assert.equal((await tokens.find(t.tokenHash))?.revokedAt, T0 + 100);
      assert.equal((await tokens.find(alreadyRevoked.tokenHash))?.revokedAt, T0 + 2, 'an earlier revocation time is kept');
      assert.deepEqual(await live(stranger), [true]);
      assert.equal(await tokens.revokeFamily(familyId, T0 + 200), 0);
      assert.equal(await tokens.revokeFamily(randomUUID(), T0), 0);
    });

    test('revokeBySession revokes the live tokens of that user\'s session only and counts them', async () => {
      const session = { userId: randomUUID(), sessionIndex: aSessionIndex() };
      const ofSession = [await stored(session), await stored({ ...session, kind: 'refresh_token' }), await stored({ ...session, clientId: 'another-client' })];
      const otherSession = await stored({ userId: session.userId });
      const otherUser = await stored({ sessionIndex: session.sessionIndex });
      assert.equal(await tokens.revokeBySession(session, T0 + 100), 3);
      assert.deepEqual(await live(...ofSession), [false, false, false]);
      assert.deepEqual(await live(otherSession, otherUser), [true, true]);
      assert.equal(await tokens.revokeBySession(session, T0 + 200), 0);
      assert.equal(await tokens.revokeBySession({ userId: session.userId, sessionIndex: aSessionIndex() }, T0), 0);
    });

    test('revokeByUserExceptSession revokes the user\'s live tokens of every other session, keeps that session\'s, and counts them', async () => {
      const userId = randomUUID();
      const keep = aSessionIndex();
      const kept = [await stored({ userId, sessionIndex: keep }), await stored({ userId, sessionIndex: keep, kind: 'refresh_token' })];
      const others = [await stored({ userId, sessionIndex: aSessionIndex(), kind: 'refresh_token' }), await stored({ userId })];
      const otherUser = await stored({ sessionIndex: aSessionIndex() });
      assert.equal(await tokens.revokeByUserExceptSession(userId, keep, T0 + 100), 2);
      assert.deepEqual(await live(...kept, ...others, otherUser), [true, true, false, false, true]);
      assert.equal(await tokens.revokeByUserExceptSession(userId, keep, T0 + 200), 0);
    });

    test('revokeByUser revokes every live token of that user, across sessions, and counts them', async () => {
      const userId = randomUUID();
      const ofUser = [await stored({ userId }), await stored({ userId, kind: 'refresh_token', sessionIndex: aSessionIndex() })];
      const alreadyRevoked = await stored({ userId, revokedAt: T0 });
      const otherUser = await stored();
      assert.equal(await tokens.revokeByUser(userId, T0 + 100), 2);
      assert.deepEqual(await live(...ofUser, alreadyRevoked), [false, false, false]);
      assert.equal((await tokens.find(alreadyRevoked.tokenHash))?.revokedAt, T0, 'an earlier revocation keeps its time');
      assert.deepEqual(await live(otherUser), [true]);
      assert.equal(await tokens.revokeByUser(userId, T0 + 200), 0);
    });

    // A token's subject is a user or its client (migration 008, client_credentials).
    test('a client token (no user, no session) round-trips with its user fields undefined; findWithUser gives no user (CC-12)', async () => {
      const client = aClient();
      await harness.store.clients.insert(client);
      const token = aClientToken({ clientId: client.clientId, scope: 'identity-api' });
      await tokens.insert(token);
      assert.deepEqual(await tokens.find(token.tokenHash), token);
      assert.deepEqual(await otherTokens.find(token.tokenHash), token);
      assert.deepEqual(await tokens.findWithUser(token.tokenHash), { token, user: undefined, clientActive: true, clientUserinfoAlg: undefined, clientPolicy: undefined, clientPolicySubject: undefined });
      const batch = [aClientToken(), aToken()];
      await tokens.insertMany(batch);
      for (const t of batch) assert.deepEqual(await tokens.find(t.tokenHash), t);
    });

    test('a client token is revoked by itself or its family, never by a user\'s or a session\'s revocation (CC-12)', async () => {
      const user = { userId: randomUUID(), sessionIndex: aSessionIndex() };
      const ofClient = aClientToken();
      const ofUser = await stored(user);
      await tokens.insert(ofClient);
      assert.equal(await tokens.revokeBySession(user, T0 + 1), 1);
      assert.equal(await tokens.revokeByUser(user.userId, T0 + 1), 0);
      assert.deepEqual(await live(ofClient, ofUser), [true, false]);
      assert.equal(await tokens.revokeFamily(ofClient.familyId, T0 + 2), 1);
      assert.deepEqual(await tokens.find(ofClient.tokenHash), { ...ofClient, revokedAt: T0 + 2 });
      const single = aClientToken();
      await tokens.insert(single);
      assert.equal(await tokens.revoke(single.tokenHash, T0 + 3), true);
    });

    test('an expired client token is deleted by the cleanup like any other (CC-12)', async () => {
      const expired = aClientToken({ expiresAt: T0 - 10 });
      const fresh = aClientToken({ expiresAt: T0 + 3_600_000 });
      await tokens.insertMany([expired, fresh]);
      await tokens.deleteExpired(T0, T0 - 86_400_000, 1000);
      assert.equal(await tokens.find(expired.tokenHash), undefined);
      assert.deepEqual(await tokens.find(fresh.tokenHash), fresh);
    });

    test('the schema refuses a row that is half user, half client: the four user columns are all set or all null (CC-12)', async () => {
      const halves: Record<string, unknown>[] = [
        { sessionIndex: aSessionIndex() },
        { authTime: T0 },
        { amr: ['pwd'] },
        { acr: 'urn:example:mfa' },
      ];
      for (const half of halves) {
        const token = { ...aClientToken(), ...half } as unknown as Token;
        await assert.rejects(tokens.insert(token), JSON.stringify(half));
        assert.equal(await tokens.find(token.tokenHash), undefined);
      }
      const noSession = { ...aToken(), sessionIndex: undefined } as unknown as Token;
      await assert.rejects(tokens.insert(noSession));
    });
  });
}
