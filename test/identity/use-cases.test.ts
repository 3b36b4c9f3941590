/**
 * The identity use cases over the real store on every database: the rules that involve the
 * store (uniqueness, references, sessions and tokens) rather than plain validation.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Token } from '../../src/domain/grant.ts';
import { IdentityError } from '../../src/identity/errors.ts';
import { addMember, createGroup, groupsOfUser, removeMember } from '../../src/identity/groups.ts';
import { createOrganization } from '../../src/identity/organizations.ts';
import { verifyPassword } from '../../src/identity/passwords.ts';
import { createUser, deleteUser, getUser, setPassword, setStatus } from '../../src/identity/users.ts';
import { ManualClock } from '../../src/lib/clock.ts';
import { cryptoRandom } from '../../src/lib/random.ts';
import type { Store } from '../../src/storage/ports.ts';
import { openSqlStore } from '../../src/storage/sql/store.ts';
import { DATABASES, type TestDatabase } from '../helpers/databases.ts';
import { AS_OPERATOR } from '../helpers/authority.ts';

function identityError(code: IdentityError['code'], message?: RegExp) {
  return (error: unknown) => {
    assert.ok(error instanceof IdentityError, String(error));
    assert.equal(error.code, code, error.message);
    if (message) assert.match(error.message, message);
    return true;
  };
}

for (const kind of DATABASES) {
  describe(`identity use cases on ${kind.name}`, () => {
    let database: TestDatabase;
    let store: Store;
    const clock = new ManualClock();
    const deps = () => ({ ...store, clock, random: cryptoRandom });

    before(async () => {
      database = await kind.create();
      store = await openSqlStore(database.url);
    });
    after(async () => {
      await store.close();
      await database.drop();
    });

    test('usernames are trimmed, unique case-insensitively, and found by id or username', async () => {
      const alice = await createUser(deps(), { username: '  Alice ', password: 'password-1' }, AS_OPERATOR);
      assert.equal(alice.username, 'Alice');
      assert.equal(alice.status, 'enabled');
      await assert.rejects(createUser(deps(), { username: 'ALICE', password: 'password-2' }, AS_OPERATOR), identityError('already_exists', /usernames compare case-insensitively/));
      assert.equal((await getUser(deps(), 'alice')).id, alice.id);
      assert.equal((await getUser(deps(), alice.id)).username, 'Alice');
      await assert.rejects(getUser(deps(), 'nobody'), identityError('not_found'));
    });

    test('input is validated before anything is stored', async () => {
      await assert.rejects(createUser(deps(), { username: ' ', password: 'password-1' }, AS_OPERATOR), identityError('invalid_argument', /username is required/));
      await assert.rejects(createUser(deps(), { username: 'a\u0007b', password: 'password-1' }, AS_OPERATOR), identityError('invalid_argument', /control characters/));
      await assert.rejects(createUser(deps(), { username: 'x'.repeat(256), password: 'password-1' }, AS_OPERATOR), identityError('invalid_argument', /255/));
      await assert.rejects(createUser(deps(), { username: 'carol', password: 'short' }, AS_OPERATOR), identityError('invalid_argument', /at least 8/));
      await assert.rejects(createUser(deps(), { username: 'carol', password: 'password-1', email: 'not-an-email' }, AS_OPERATOR), identityError('invalid_argument', /email/));
      await assert.rejects(createUser(deps(), { username: 'carol', password: 'password-1', organizationId: 'missing' }, AS_OPERATOR), identityError('invalid_reference'));
      await assert.rejects(createUser(deps(), { username: 'carol', password: 'password-1', groups: ['missing'] }, AS_OPERATOR), identityError('invalid_reference'));
      await assert.rejects(getUser(deps(), 'carol'), identityError('not_found'));
    });

    test('organizations: defaults, parents, and no users in a virtual one', async () => {
      const root = await createOrganization(deps(), {});
      assert.equal(root.technicalName, root.id);
      assert.equal(root.friendlyName, root.id);
      const virtual = await createOrganization(deps(), { technicalName: 'holding', virtual: true });
      const child = await createOrganization(deps(), { technicalName: 'sales', parentId: virtual.id });
      assert.equal(child.parentId, virtual.id);
      await assert.rejects(createOrganization(deps(), { technicalName: 'sales', parentId: virtual.id }), identityError('already_exists'));
      await assert.rejects(createOrganization(deps(), { parentId: 'missing' }), identityError('invalid_reference'));
      await assert.rejects(createUser(deps(), { username: 'dave', password: 'password-1', organizationId: virtual.id }, AS_OPERATOR), identityError('invalid_argument', /virtual/));
      const dave = await createUser(deps(), { username: 'dave', password: 'password-1', organizationId: child.id }, AS_OPERATOR);
      assert.equal(dave.organizationId, child.id);
    });

    test('groups: unique names, membership by username or id, idempotent', async () => {
      await createGroup(deps(), { name: 'Staff' }, AS_OPERATOR);
      await assert.rejects(createGroup(deps(), { name: 'staff' }, AS_OPERATOR), identityError('already_exists'));
      const erin = await createUser(deps(), { username: 'erin', password: 'password-1', groups: ['STAFF'] }, AS_OPERATOR);
      assert.deepEqual((await groupsOfUser(deps(), erin.id)).map((g) => g.name), ['Staff']);
      assert.equal((await addMember(deps(), 'staff', 'Erin', AS_OPERATOR)).changed, false);
      assert.equal((await removeMember(deps(), 'Staff', erin.id, AS_OPERATOR)).changed, true);
      assert.equal((await removeMember(deps(), 'Staff', erin.id, AS_OPERATOR)).changed, false);
      await assert.rejects(addMember(deps(), 'nope', 'erin', AS_OPERATOR), identityError('not_found'));
    });

    test('setPassword replaces the argon2id hash', async () => {
      await createUser(deps(), { username: 'frank', password: 'first-password' }, AS_OPERATOR);
      await setPassword(deps(), 'frank', 'second-password', AS_OPERATOR);
      const { passwordHash } = (await store.users.getCredentials('frank'))!;
      assert.equal(await verifyPassword(passwordHash, 'second-password'), true);
      assert.equal(await verifyPassword(passwordHash, 'first-password'), false);
    });

    test('disabling or deleting a user ends their sessions and revokes the tokens issued in them', async () => {
      for (const [username, end] of [
        ['grace', (u: string) => setStatus(deps(), u, 'disabled', AS_OPERATOR)],
        ['heidi', (u: string) => deleteUser(deps(), u, AS_OPERATOR)],
      ] as const) {
        const user = await createUser(deps(), { username, password: 'password-1' }, AS_OPERATOR);
        const sessionIndex = `_${cryptoRandom.hex(20)}`;
        const now = clock.now();
        await store.sessions.insert({ idHash: cryptoRandom.token(), sessionIndex, userId: user.id, authTime: now, amr: ['pwd'], acr: undefined, createdAt: now, expiresAt: now + 3_600_000, maxExpiresAt: now + 86_400_000 });
        const token: Token = {
          tokenHash: cryptoRandom.token(),
          kind: 'access_token',
          clientId: 'c',
          userId: user.id,
          scope: 'openid',
          sessionIndex,
          authTime: now,
          amr: ['pwd'],
          acr: undefined,
          codeHash: undefined,
          familyId: cryptoRandom.uuid(),
          createdAt: now,
          expiresAt: now + 3_600_000,
          revokedAt: undefined,
          rotatedAt: undefined,
        };
        // A refresh token whose session expired long ago: it outlives sessions, and must not outlive this.
        const orphan: Token = { ...token, tokenHash: cryptoRandom.token(), kind: 'refresh_token', sessionIndex: `_${cryptoRandom.hex(20)}`, expiresAt: undefined };
        await store.tokens.insertMany([token, orphan]);
        await end(username);
        assert.equal(await store.sessions.findLiveByIndex(sessionIndex, now), undefined, username);
        assert.notEqual((await store.tokens.find(token.tokenHash))?.revokedAt, undefined, username);
        assert.notEqual((await store.tokens.find(orphan.tokenHash))?.revokedAt, undefined, `${username}: a token of an expired session`);
      }
      assert.equal((await getUser(deps(), 'grace')).status, 'disabled');
      await assert.rejects(getUser(deps(), 'heidi'), identityError('not_found'));
    });
  });
}
