/**
 * The use cases of users, groups, sessions and consents (src/manage/users.ts, groups.ts,
 * sessions.ts, consents.ts; issue 23 item 1) on every database: each change emits its one audit
 * event naming who acts, after it commits — and none when it is refused or changes nothing — and
 * the reads that moved out of the front ends answer as the front ends did.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { IdentityError } from '../../src/identity/errors.ts';
import { ManualClock } from '../../src/lib/clock.ts';
import { cryptoRandom } from '../../src/lib/random.ts';
import type { Acting } from '../../src/manage/acting.ts';
import { consentAdministration } from '../../src/manage/consents.ts';
import { groupAdministration } from '../../src/manage/groups.ts';
import { sessionAdministration } from '../../src/manage/sessions.ts';
import { userAdministration } from '../../src/manage/users.ts';
import type { AuditEvent } from '../../src/observability/audit.ts';
import { fingerprint } from '../../src/observability/audit.ts';
import { grantConsent } from '../../src/oauth/consents.ts';
import { DATABASES } from '../helpers/databases.ts';
import { aClient, aGroup, aStoredSession, aStoredUser, aToken, openTestStore, T0, unique, type TestStore } from '../helpers/store.ts';

const settings = { manageAdminGroup: 'Administrators', manageReadonlyGroup: 'Administrators (read-only)', keyEncryptionKey: undefined };
const groups = { admin: settings.manageAdminGroup, readonly: settings.manageReadonlyGroup };
const operator: Acting = { actor: { via: 'cli', caller: 'root' }, authority: { groups, administrator: true } };
const apiAccount: Acting = { actor: { via: 'identity-api', method: 'basic' }, authority: { groups, administrator: false } };
const PASSWORD = 'correct horse battery';

for (const kind of DATABASES) {
  describe(`users, groups, sessions and consents as use cases on ${kind.name}`, () => {
    let harness: TestStore;
    const events: AuditEvent[] = [];
    const build = () => {
      const ports = { store: harness.store, clock: new ManualClock(T0), random: cryptoRandom, audit: { emit: (event: AuditEvent) => void events.push(event) }, settings };
      return { users: userAdministration(ports), groups: groupAdministration(ports), sessions: sessionAdministration(ports), consents: consentAdministration(ports) };
    };
    let admin: ReturnType<typeof build>;
    before(async () => {
      harness = await openTestStore(kind);
      admin = build();
      for (const name of [groups.admin, groups.readonly]) await harness.store.groups.insert(aGroup({ name, administrator: true }));
    });
    after(async () => harness.close());
    beforeEach(() => {
      events.length = 0;
    });

    test('each change of a user emits its event, naming who acts; update names the fields given and the status set', async () => {
      const created = await admin.users.create(operator, { username: unique('ann-'), password: PASSWORD });
      const updated = await admin.users.update(apiAccount, created.id, { email: 'ann@example.com', status: 'locked', password: 'another password' });
      await admin.users.setPassword(operator, created.username, 'a third password');
      await admin.users.setStatus(operator, created.id, 'enabled');
      await admin.users.delete(operator, created.id);
      const who = { userId: created.id, username: created.username };
      assert.deepEqual(events, [
        { event: 'user.created', ...who, actor: operator.actor },
        { event: 'user.updated', ...who, fields: ['email', 'status', 'password'], status: 'locked', actor: apiAccount.actor },
        { event: 'user.password_changed', ...who, actor: operator.actor },
        { event: 'user.status_changed', ...who, status: 'enabled', actor: operator.actor },
        { event: 'user.deleted', ...who, actor: operator.actor },
      ]);
      assert.equal(updated.status, 'locked');
      await assert.rejects(admin.users.get(created.id), (error: unknown) => error instanceof IdentityError && error.code === 'not_found');
    });

    test('the last enabled administrator can be neither disabled, deleted nor removed from the administrators group, and no event says otherwise', async () => {
      const group = (await harness.store.groups.getByName(groups.admin))!;
      for (const id of await harness.store.groups.members(group.id)) await harness.store.groups.removeMember(group.id, id);
      const sole = await admin.users.create(operator, { username: unique('root-'), password: PASSWORD, groups: [groups.admin] });
      events.length = 0;
      const lastAdministrator = (error: unknown) => error instanceof IdentityError && error.code === 'last_administrator';
      await assert.rejects(admin.users.setStatus(operator, sole.id, 'disabled'), lastAdministrator);
      await assert.rejects(admin.users.update(operator, sole.id, { status: 'locked' }), lastAdministrator);
      await assert.rejects(admin.users.delete(operator, sole.id), lastAdministrator);
      await assert.rejects(admin.groups.removeMember(operator, groups.admin, sole.username), lastAdministrator);
      await assert.rejects(admin.groups.delete(operator, groups.admin), lastAdministrator);
      // And someone who is not an administrator (the identity API's account) cannot reach them at all.
      await assert.rejects(admin.groups.removeMember(apiAccount, groups.admin, sole.id), (error: unknown) => error instanceof IdentityError && error.code === 'administrators_only');
      assert.deepEqual(events, []);
      assert.equal(await admin.users.isAdministrator(sole.id), true);
      assert.equal((await admin.users.get(sole.id)).status, 'enabled');
    });

    test('groups: create, add, add again, remove, remove again and delete emit one event per change, none for a change of nothing', async () => {
      const user = await aStoredUser(harness.store);
      const name = unique('team-');
      await admin.groups.create(operator, { name });
      assert.equal((await admin.groups.addMember(operator, name, user.username)).changed, true);
      assert.equal((await admin.groups.addMember(operator, name, user.id)).changed, false);
      assert.deepEqual((await admin.groups.members(name)).map((u) => u.id), [user.id]);
      assert.deepEqual((await admin.groups.memberPage(name, { limit: 1 })).map((u) => u.id), [user.id]);
      assert.deepEqual((await admin.users.page({ limit: 10, group: name })).map((u) => u.id), [user.id]);
      assert.equal((await admin.groups.removeMember(operator, name, user.id)).changed, true);
      assert.equal((await admin.groups.removeMember(operator, name, user.id)).changed, false);
      await admin.groups.addMember(operator, name, user.id);
      await admin.groups.delete(apiAccount, name);
      const member = { userId: user.id, username: user.username, group: name };
      assert.deepEqual(events, [
        { event: 'group.created', group: name, actor: operator.actor },
        { event: 'user.group_added', ...member, actor: operator.actor },
        { event: 'user.group_removed', ...member, actor: operator.actor },
        { event: 'user.group_added', ...member, actor: operator.actor },
        { event: 'group.deleted', group: name, members: 1, actor: apiAccount.actor },
      ]);
    });

    test('a page of users filtered by a group that does not exist is empty, not every user', async () => {
      await aStoredUser(harness.store);
      assert.deepEqual(await admin.users.page({ limit: 10, group: unique('no-such-group-') }), []);
    });

    test("ending a session revokes its tokens and emits session.ended with the session's fingerprint; another user's session is not ended", async () => {
      const session = await aStoredSession(harness.store);
      const other = await aStoredSession(harness.store);
      const token = aToken({ userId: session.userId, sessionIndex: session.sessionIndex });
      await harness.store.tokens.insert(token);
      assert.equal(await admin.sessions.end(operator, other.userId, session.sessionIndex), false, "not that user's session");
      assert.equal(await admin.sessions.end(operator, session.userId, session.sessionIndex), true);
      assert.equal(await admin.sessions.end(operator, session.userId, session.sessionIndex), false, 'already ended');
      assert.deepEqual(events, [{ event: 'session.ended', userId: session.userId, session: fingerprint(session.sessionIndex), revoked: 1, actor: operator.actor }]);
      assert.notEqual((await harness.store.tokens.find(token.tokenHash))?.revokedAt, undefined);
    });

    test('withdrawing a consent revokes the client\'s tokens for the user and emits consent.withdrawn; an unknown client is not_found; nothing to withdraw emits nothing', async () => {
      const user = await aStoredUser(harness.store);
      const [b, a] = [aClient({ clientId: unique('b-'), name: 'B' }), aClient({ clientId: unique('a-'), name: 'A' })];
      for (const client of [b, a]) {
        await harness.store.clients.insert(client);
        await grantConsent(harness.store, { userId: user.id, clientId: client.clientId, scope: ['openid'] }, T0);
      }
      assert.deepEqual((await admin.consents.page(user.id, { after: undefined, limit: 1 })).map((c) => c.clientId), [a.clientId, b.clientId]);
      assert.deepEqual((await admin.consents.page(user.id, { after: a.clientId, limit: 1 })).map((c) => c.clientId), [b.clientId]);
      assert.deepEqual((await admin.consents.list(user.id)).map((c) => c.clientName), ['A', 'B']);
      const token = aToken({ userId: user.id, clientId: a.clientId });
      await harness.store.tokens.insert(token);
      assert.deepEqual(await admin.consents.withdraw(operator, user.id, a.clientId), { withdrawn: true, revoked: 1 });
      assert.deepEqual(await admin.consents.withdraw(operator, user.id, a.clientId), { withdrawn: false, revoked: 0 });
      await assert.rejects(admin.consents.withdraw(operator, user.id, 'no-such-client'), (error: unknown) => error instanceof IdentityError && error.code === 'not_found' && error.message === 'no client has the client_id "no-such-client"');
      assert.deepEqual(events, [{ event: 'consent.withdrawn', userId: user.id, clientId: a.clientId, revoked: 1, actor: operator.actor }]);
      assert.equal(await admin.consents.find(user.id, a.clientId), undefined);
    });
  });
}
