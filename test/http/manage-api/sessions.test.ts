/**
 * `/manage/api/v1/users/{id}/sessions` and `/consents`: listing a user's live SSO sessions
 * (newest first, named by session_index, never by what the cookie holds), ending one — after
 * which that session's access token is refused at UserInfo while another session's still works —
 * and listing and withdrawing consents; roles, audit and hostile input.
 */
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { SsoSession } from '../../../src/domain/session.ts';
import type { User } from '../../../src/domain/user.ts';
import { ManualClock } from '../../../src/lib/clock.ts';
import { hashSecret } from '../../../src/lib/hash.ts';
import { fingerprint } from '../../../src/observability/audit.ts';
import { AuditCapture } from '../../helpers/audit.ts';
import { addClient, addUser } from '../../helpers/back-channel.ts';
import { DATABASES } from '../../helpers/databases.ts';
import { manageCall, manageTokens, type ManageTokens } from '../../helpers/manage.ts';
import { startServer, type RunningServer } from '../../helpers/server.ts';

const HOUR = 3_600_000;

for (const db of DATABASES) {
  describe(`management API sessions and consents (${db.name})`, () => {
    let server: RunningServer;
    let tokens: ManageTokens;
    const audit = new AuditCapture();
    const clock = new ManualClock(Date.now());
    before(async () => {
      server = await startServer(db, { audit, clock });
      tokens = await manageTokens(server);
    });
    after(async () => server.close());

    const call = (method: string, path: string, token = tokens.admin) => manageCall(server, method, path, { token });
    const now = () => server.gatehouse.deps.clock.now();

    async function aSession(user: User, createdAgo: number, idleMs = HOUR): Promise<SsoSession> {
      const at = now() - createdAgo;
      const session: SsoSession = {
        idHash: hashSecret(randomBytes(32).toString('base64url')),
        sessionIndex: `_${randomBytes(20).toString('hex')}`,
        userId: user.id,
        authTime: at,
        amr: ['pwd'],
        acr: undefined,
        createdAt: at,
        expiresAt: now() + idleMs,
        maxExpiresAt: now() + 8 * HOUR,
      };
      await server.gatehouse.store.sessions.insert(session);
      return session;
    }

    /** An access token of `clientId` for the user, issued in `sessionIndex`, as the token endpoint stores one. */
    async function anAccessToken(user: User, clientId: string, sessionIndex: string): Promise<string> {
      const raw = randomBytes(32).toString('base64url');
      await server.gatehouse.store.tokens.insert({
        tokenHash: hashSecret(raw),
        kind: 'access_token',
        clientId,
        userId: user.id,
        sessionIndex,
        authTime: now(),
        amr: ['pwd'],
        acr: undefined,
        scope: 'openid profile',
        codeHash: undefined,
        familyId: randomUUID(),
        createdAt: now(),
        expiresAt: now() + HOUR,
        revokedAt: undefined,
        rotatedAt: undefined,
      });
      return raw;
    }

    const userinfo = (token: string) => fetch(`${server.url}/uas/oauth2/userinfo`, { headers: { authorization: `Bearer ${token}` } });

    test("lists a user's live sessions newest first, named by session_index, never by the cookie's hash", async () => {
      const user = await addUser(server.gatehouse.store);
      const older = await aSession(user, 3000);
      const newer = await aSession(user, 1000);
      await aSession(await addUser(server.gatehouse.store), 0); // another user's
      const expired = { ...(await aSession(user, 500)) };
      await server.gatehouse.store.sessions.end(expired.idHash);
      const page1 = await call('GET', `/users/${user.id}/sessions?limit=1`, tokens.reader);
      assert.equal(page1.status, 200, page1.text);
      assert.deepEqual(page1.json.items?.map((s) => s.id), [newer.sessionIndex]);
      const page2 = await call('GET', `/users/${user.id}/sessions?limit=1&cursor=${page1.json.next_cursor as string}`, tokens.reader);
      assert.deepEqual(page2.json.items?.map((s) => s.id), [older.sessionIndex]);
      assert.equal(page2.json.next_cursor, null);
      assert.deepEqual(page2.json.items?.[0], {
        id: older.sessionIndex,
        user_id: user.id,
        created_at: new Date(older.createdAt).toISOString(),
        expires_at: new Date(older.expiresAt).toISOString(),
        auth_time: new Date(older.authTime).toISOString(),
        amr: ['pwd'],
        acr: null,
        clients: [],
      });
      assert.equal(page1.text.includes(newer.idHash) || page2.text.includes(older.idHash), false, 'the cookie hash is never shown');
    });

    test("ending a session refuses that session's access token at UserInfo, while another session's still works; audited with the administrator", async () => {
      const user = await addUser(server.gatehouse.store);
      const { client } = await addClient(server.gatehouse.store);
      const ended = await aSession(user, 2000);
      const kept = await aSession(user, 1000);
      const endedToken = await anAccessToken(user, client.clientId, ended.sessionIndex);
      const keptToken = await anAccessToken(user, client.clientId, kept.sessionIndex);
      assert.equal((await userinfo(endedToken)).status, 200);
      const before = await call('GET', `/users/${user.id}/sessions`);
      assert.deepEqual(before.json.items?.map((s) => [s.id, s.clients]), [[kept.sessionIndex, [client.clientId]], [ended.sessionIndex, [client.clientId]]], 'each session names (newest first) the client holding its token');

      const answer = await call('DELETE', `/users/${user.id}/sessions/${ended.sessionIndex}`);
      assert.equal(answer.status, 204, answer.text);
      assert.equal((await userinfo(endedToken)).status, 401, "the ended session's token is refused");
      assert.equal((await userinfo(keptToken)).status, 200, "another session's token still works");
      assert.equal(await server.gatehouse.store.sessions.findLive(ended.idHash, now()), undefined);
      assert.ok(await server.gatehouse.store.sessions.findLive(kept.idHash, now()));
      const list = await call('GET', `/users/${user.id}/sessions`);
      assert.deepEqual(list.json.items?.map((s) => s.id), [kept.sessionIndex]);

      const event = audit.all().filter((e) => e.event === 'session.ended').at(-1) as unknown as { userId: string; session: string; revoked: number; actor: { via: string; caller: string } };
      assert.deepEqual({ ...event, actor: { via: event.actor.via, caller: event.actor.caller } }, {
        ...event,
        userId: user.id,
        session: fingerprint(ended.sessionIndex),
        revoked: 1,
        actor: { via: 'manage-api', caller: tokens.adminUser.id },
      });
      assert.equal(audit.lines.some((line) => line.includes(ended.sessionIndex)), false, 'the event names the session by fingerprint');

      assert.equal((await call('DELETE', `/users/${user.id}/sessions/${ended.sessionIndex}`)).status, 404, 'already ended');
    });

    test('a session past its deadline is not listed; ending its row (not yet cleaned up) still revokes what was issued in it', async () => {
      const user = await addUser(server.gatehouse.store);
      const session = await aSession(user, 0, 60_000);
      assert.deepEqual((await call('GET', `/users/${user.id}/sessions`)).json.items?.map((s) => s.id), [session.sessionIndex]);
      clock.advance(61_000);
      assert.deepEqual((await call('GET', `/users/${user.id}/sessions`)).json.items, []);
      assert.equal((await call('DELETE', `/users/${user.id}/sessions/${session.sessionIndex}`)).status, 204);
      assert.equal((await call('DELETE', `/users/${user.id}/sessions/${session.sessionIndex}`)).status, 404);
    });

    test("a session is ended only through its own user: another user's path is 404 and ends nothing", async () => {
      const owner = await addUser(server.gatehouse.store);
      const other = await addUser(server.gatehouse.store);
      const session = await aSession(owner, 0);
      assert.equal((await call('DELETE', `/users/${other.id}/sessions/${session.sessionIndex}`)).status, 404);
      assert.ok(await server.gatehouse.store.sessions.findLive(session.idHash, now()));
      assert.equal((await call('GET', `/users/${other.id}/sessions`)).json.items?.length, 0);
    });

    test('consents: listed by client_id; withdrawing one revokes that client’s tokens for the user, audited; a missing one is 404', async () => {
      const store = server.gatehouse.store;
      const user = await addUser(store);
      const t = now();
      const { client: b } = await addClient(store, { clientId: `b-${randomUUID()}` });
      const { client: a } = await addClient(store, { clientId: `a-${randomUUID()}` });
      await store.consents.put({ userId: user.id, clientId: b.clientId, scope: ['openid', 'profile'], grantedAt: t - 10, updatedAt: t });
      await store.consents.put({ userId: user.id, clientId: a.clientId, scope: ['openid'], grantedAt: t - 10, updatedAt: t });
      const session = await aSession(user, 0);
      const bToken = await anAccessToken(user, b.clientId, session.sessionIndex);
      const aToken = await anAccessToken(user, a.clientId, session.sessionIndex);

      const first = await call('GET', `/users/${user.id}/consents?limit=1`, tokens.reader);
      assert.equal(first.status, 200, first.text);
      assert.deepEqual(first.json.items?.map((c) => c.client_id), [a.clientId]);
      const second = await call('GET', `/users/${user.id}/consents?limit=1&cursor=${first.json.next_cursor as string}`, tokens.reader);
      assert.deepEqual(second.json.items, [{ client_id: b.clientId, scope: ['openid', 'profile'], granted_at: new Date(t - 10).toISOString(), updated_at: new Date(t).toISOString() }]);
      assert.equal(second.json.next_cursor, null);

      const withdrawn = await call('DELETE', `/users/${user.id}/consents/${b.clientId}`);
      assert.equal(withdrawn.status, 204, withdrawn.text);
      assert.equal((await userinfo(bToken)).status, 401);
      assert.equal((await userinfo(aToken)).status, 200);
      const event = audit.all().filter((e) => e.event === 'consent.withdrawn').at(-1) as unknown as { userId: string; clientId: string; revoked: number; actor: { via: string; caller: string } };
      assert.equal(event.clientId, b.clientId);
      assert.equal(event.revoked, 1);
      assert.equal(event.actor.caller, tokens.adminUser.id);
      assert.equal((await call('DELETE', `/users/${user.id}/consents/${b.clientId}`)).status, 404);
      // A client the user never consented to (first-party) keeps its tokens.
      assert.equal((await call('DELETE', `/users/${user.id}/consents/no-such-client`)).status, 404);
    });

    test('roles: a reader lists but cannot end or withdraw; a user in no administrators group 403; another audience 401', async () => {
      const user = await addUser(server.gatehouse.store);
      const session = await aSession(user, 0);
      const { client } = await addClient(server.gatehouse.store);
      await server.gatehouse.store.consents.put({ userId: user.id, clientId: client.clientId, scope: ['openid'], grantedAt: now(), updatedAt: now() });
      for (const path of [`/users/${user.id}/sessions`, `/users/${user.id}/consents`]) {
        assert.equal((await call('GET', path, tokens.reader)).status, 200);
        assert.equal((await call('GET', path, tokens.nobody)).status, 403);
        assert.equal((await call('GET', path, tokens.otherAudience)).status, 401);
      }
      for (const path of [`/users/${user.id}/sessions/${session.sessionIndex}`, `/users/${user.id}/consents/${client.clientId}`]) {
        assert.equal((await call('DELETE', path, tokens.reader)).status, 403);
        assert.equal((await call('DELETE', path, tokens.nobody)).status, 403);
        assert.equal((await call('DELETE', path, tokens.otherAudience)).status, 401);
      }
      assert.ok(await server.gatehouse.store.sessions.findLive(session.idHash, now()));
      assert.ok(await server.gatehouse.store.consents.find(user.id, client.clientId));
    });

    test('hostile input is a 4xx, never a 5xx', async () => {
      const user = await addUser(server.gatehouse.store);
      const session = await aSession(user, 0);
      const paths: [string, string][] = [
        ['GET', '/users/not-a-uuid/sessions'],
        ['GET', `/users/${user.id}/sessions?cursor=${Buffer.from('{"c":"x","i":1}').toString('base64url')}`],
        ['GET', `/users/${user.id}/sessions?cursor=${Buffer.from('[1,2]').toString('base64url')}`],
        ['GET', `/users/${user.id}/sessions?cursor=${Buffer.from('{"c":1e400,"i":"_"}').toString('base64url')}`],
        ['DELETE', `/users/${user.id}/sessions/${session.idHash}`],
        ['DELETE', `/users/${user.id}/sessions/${encodeURIComponent("' or '1'='1")}`],
        ['DELETE', `/users/${user.id}/sessions/${'_'.repeat(500)}`],
        ['DELETE', `/users/${user.id}/consents/${'c'.repeat(1000)}`],
        ['GET', `/users/${user.id}/consents?cursor=${Buffer.from('{}').toString('base64url')}`],
      ];
      for (const [method, path] of paths) {
        const answer = await call(method, path);
        assert.ok(answer.status >= 400 && answer.status < 500, `${method} ${path.slice(0, 80)}: ${answer.status} ${answer.text.slice(0, 200)}`);
      }
      assert.ok(await server.gatehouse.store.sessions.findLive(session.idHash, now()), 'the cookie hash cannot end a session');
    });
  });
}
