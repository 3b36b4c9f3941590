/**
 * OpenID Connect Back-Channel Logout 1.0 (issue 26 item 2; docs/logout.md; decisions LO3–LO8):
 * a user signs in to relying parties A, B and D (D registered no logout URI) in one browser; C
 * registered one but is never used. Ending the session — by logout, by an administrator, by
 * disabling the user — queues one logout token for A and for B and none for C or D, in the same
 * unit of work; the outbox sender POSTs each once to a real HTTP endpoint, and each is checked here
 * with jose against the JWKS, as a relying party checks it (§2.6). The clock is injected and the
 * sender's ticks are called.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createLocalJWKSet, decodeJwt, jwtVerify, type JSONWebKeySet } from 'jose';
import type { Client } from '../../src/domain/client.ts';
import type { User } from '../../src/domain/user.ts';
import { hashSecret } from '../../src/lib/hash.ts';
import { ManualClock } from '../../src/lib/clock.ts';
import { basic, postForm } from '../helpers/back-channel.ts';
import { DATABASES } from '../helpers/databases.ts';
import { browse, CookieJar, createTestClient, createTestUser, loginThroughForm } from '../helpers/fixtures.ts';
import { startLogoutReceiver, type LogoutReceiver, type ReceivedLogout } from '../helpers/logout-receiver.ts';
import { ensureManagementSetup, issueManageToken, manageCall } from '../helpers/manage.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';

const PASSWORD = 'bcl password 1';
const EVENT = 'http://schemas.openid.net/event/backchannel-logout';
const MINUTE = 60_000;

type Rp = { client: Client; clientSecret: string };

for (const db of DATABASES) {
  describe(`back-channel logout on ${db.name}`, () => {
    let server: RunningServer;
    let clock: ManualClock;
    let receiver: LogoutReceiver;
    let a: Rp, b: Rp, d: Rp;

    before(async () => {
      receiver = await startLogoutReceiver();
      clock = new ManualClock(Date.now());
      server = await startServer(db, { clock, env: { GATEHOUSE_OUTBOUND_LOOPBACK: 'on', GATEHOUSE_OUTBOX_INTERVAL: '0' } });
      const withUri = (path: string) => ({ metadata: { backchannel_logout_uri: receiver.url(path) } });
      a = await createTestClient(server.gatehouse.store, withUri('/a'));
      b = await createTestClient(server.gatehouse.store, withUri('/b?tenant=1'));
      // C registered a logout URI but the user never signs in to it: it must hear nothing.
      await createTestClient(server.gatehouse.store, withUri('/c'));
      d = await createTestClient(server.gatehouse.store);
      await ensureManagementSetup(server);
    });
    after(async () => {
      await server.close();
      await receiver.stop();
    });

    const query = (rp: Rp) => ({ client_id: rp.client.clientId, redirect_uri: rp.client.redirectUris[0]!, response_type: 'code', scope: 'openid' });
    const exchange = async (location: string | null, rp: Rp) => {
      const code = new URL(location!).searchParams.get('code')!;
      const answer = await postForm(`${server.issuer}/oauth2/token`, { grant_type: 'authorization_code', code, redirect_uri: rp.client.redirectUris[0]! }, { authorization: basic(rp.client.clientId, rp.clientSecret) });
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      return answer.body.id_token as string;
    };
    /** A user signed in to A, then (single sign-on) B and D: the browser, the user and each RP's ID token. */
    const signedIn = async () => {
      const user = await createTestUser(server.gatehouse.store, { password: PASSWORD });
      const jar = new CookieJar();
      const login = await loginThroughForm({ baseUrl: server.url, jar }, query(a), { username: user.username, password: PASSWORD });
      const idTokens = new Map<Rp, string>([[a, await exchange(login.headers.get('location'), a)]]);
      for (const rp of [b, d]) {
        const silent = await browse(`${server.url}/uas/oauth2/authorization?${new URLSearchParams(query(rp))}`, jar);
        idTokens.set(rp, await exchange(silent.headers.get('location'), rp));
      }
      const session = (await server.gatehouse.store.sessions.findLive(hashSecret(jar.cookies.get('gatehouse_session')!), clock.now()))!;
      return { user, jar, idTokens, session };
    };
    /** Runs the sender; what arrived meanwhile. */
    const deliver = async () => {
      receiver.received.length = 0;
      const report = await server.gatehouse.outbox.sender.tick();
      return { report, received: [...receiver.received].sort((x, y) => (x.path < y.path ? -1 : 1)) };
    };
    /** §2.6, as a relying party validates a logout token; its claims. */
    const validated = async (received: ReceivedLogout, rp: Rp, user: User, idToken: string) => {
      assert.equal(received.contentType, 'application/x-www-form-urlencoded');
      const jwks = (await (await fetch(`${server.issuer}/oauth2/metadata.jwks`)).json()) as JSONWebKeySet;
      const { payload, protectedHeader } = await jwtVerify(received.logoutToken!, createLocalJWKSet(jwks), {
        issuer: server.issuer,
        audience: rp.client.clientId,
        typ: 'logout+jwt',
        algorithms: [rp.client.idTokenSignedResponseAlg],
        currentDate: new Date(clock.now()),
      });
      assert.equal(protectedHeader.typ, 'logout+jwt');
      assert.deepEqual(Object.keys(payload).sort(), ['aud', 'events', 'exp', 'iat', 'iss', 'jti', 'sid', 'sub']);
      assert.deepEqual(payload.events, { [EVENT]: {} });
      assert.equal(payload.sub, user.id);
      assert.equal(payload.sid, decodeJwt(idToken).sid, "the sid of the RP's ID token");
      assert.equal(payload.iat, Math.floor(clock.now() / 1000));
      assert.equal((payload.exp as number) - (payload.iat as number), 120);
      return payload;
    };

    test('discovery says back-channel logout and sid in logout tokens are supported (§2.1)', async () => {
      const metadata = (await (await fetch(`${server.issuer}/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
      assert.deepEqual([metadata.backchannel_logout_supported, metadata.backchannel_logout_session_supported], [true, true]);
    });

    test('the management API registers and removes a back-channel logout URI, and refuses one with a fragment (§2.2)', async () => {
      const token = await issueManageToken(server);
      const body = { client_name: 'Logout app', redirect_uris: ['https://app.example.com/cb'], backchannel_logout_uri: 'https://app.example.com/bcl', backchannel_logout_session_required: true, frontchannel_logout_uri: 'https://app.example.com/fcl' };
      const created = await manageCall(server, 'POST', '/clients', { token, body });
      assert.equal(created.status, 201, created.text);
      assert.deepEqual([created.json.backchannel_logout_uri, created.json.backchannel_logout_session_required, created.json.frontchannel_logout_uri], ['https://app.example.com/bcl', true, 'https://app.example.com/fcl']);
      const removed = await manageCall(server, 'PATCH', `/clients/${String(created.json.client_id)}`, { token, body: { backchannel_logout_uri: null } });
      assert.deepEqual([removed.status, removed.json.backchannel_logout_uri], [200, undefined], removed.text);
      const bad = await manageCall(server, 'POST', '/clients', { token, body: { ...body, backchannel_logout_uri: 'https://app.example.com/bcl#x' } });
      assert.deepEqual([bad.status, bad.json.detail], [400, 'backchannel_logout_uri: must not contain a fragment'], bad.text);
    });

    test('RP-initiated logout at A: A and B each get one logout token, valid as §2.6 checks it; C and D nothing; nothing twice', async () => {
      const { user, jar, idTokens } = await signedIn();
      const logout = await browse(`${server.url}/uas/oauth2/logout?${new URLSearchParams({ id_token_hint: idTokens.get(a)! })}`, jar);
      assert.equal(logout.status, 200);
      const { report, received } = await deliver();
      assert.deepEqual(report, { delivered: 2, retried: 0, dead: 0, leaseLost: 0 });
      assert.deepEqual(received.map((r) => r.path), ['/a', '/b?tenant=1']);
      const claims = [await validated(received[0]!, a, user, idTokens.get(a)!), await validated(received[1]!, b, user, idTokens.get(b)!)];
      assert.notEqual(claims[0]!.jti, claims[1]!.jti);
      assert.deepEqual((await deliver()).received, [], 'nothing is sent twice');
    });

    test('an administrator ends the session (management API): the same two logout tokens', async () => {
      const { user, idTokens, session } = await signedIn();
      const token = await issueManageToken(server);
      const ended = await manageCall(server, 'DELETE', `/users/${user.id}/sessions/${session.sessionIndex}`, { token });
      assert.equal(ended.status, 204, ended.text);
      const { received } = await deliver();
      assert.deepEqual(received.map((r) => r.path), ['/a', '/b?tenant=1']);
      await validated(received[0]!, a, user, idTokens.get(a)!);
    });

    test('disabling the user ends every session of theirs: each RP of each session is told, by the sid it knows', async () => {
      const first = await signedIn();
      const jar = new CookieJar();
      const login = await loginThroughForm({ baseUrl: server.url, jar }, query(b), { username: first.user.username, password: PASSWORD });
      const secondB = await exchange(login.headers.get('location'), b);
      const token = await issueManageToken(server);
      assert.equal((await manageCall(server, 'POST', `/users/${first.user.id}/disable`, { token })).status, 200);
      const { received } = await deliver();
      assert.deepEqual(received.map((r) => r.path).sort(), ['/a', '/b?tenant=1', '/b?tenant=1']);
      const sids = await Promise.all(received.filter((r) => r.path === '/b?tenant=1').map(async (r) => decodeJwt(r.logoutToken!).sid));
      assert.deepEqual(sids.sort(), [decodeJwt(first.idTokens.get(b)!).sid, decodeJwt(secondB).sid].sort());
    });

    test('the RP answering 503, then down: retried with back-off, delivered once when it is back; 400 is given up (§2.8)', async () => {
      const { jar, idTokens } = await signedIn();
      await browse(`${server.url}/uas/oauth2/logout?${new URLSearchParams({ id_token_hint: idTokens.get(a)! })}`, jar);
      receiver.status = 503;
      assert.deepEqual((await deliver()).report, { delivered: 0, retried: 2, dead: 0, leaseLost: 0 });
      receiver.status = 200;
      await receiver.stop();
      clock.advance(2 * MINUTE);
      assert.deepEqual((await deliver()).report, { delivered: 0, retried: 2, dead: 0, leaseLost: 0 });
      await receiver.start();
      assert.deepEqual((await deliver()).report, { delivered: 0, retried: 0, dead: 0, leaseLost: 0 }, 'not before the back-off');
      clock.advance(10 * MINUTE);
      const back = await deliver();
      assert.deepEqual([back.report.delivered, back.received.map((r) => r.path)], [2, ['/a', '/b?tenant=1']]);
      assert.deepEqual((await deliver()).received, []);
    });

    test('the management API answers each client\'s last delivery: delivered with its jti, or failed with the error; none yet is null (LO13)', async () => {
      const token = await issueManageToken(server);
      const last = async (clientId: string) => {
        const answer = await manageCall(server, 'GET', `/clients/${clientId}/logout-delivery`, { token });
        assert.equal(answer.status, 200, answer.text);
        return answer.json as { client_id: string; last_delivery: Record<string, unknown> | null };
      };
      assert.deepEqual(await last(d.client.clientId), { client_id: d.client.clientId, last_delivery: null });
      assert.equal((await manageCall(server, 'GET', '/clients/no-such-client/logout-delivery', { token })).status, 404);
      const { jar, idTokens } = await signedIn();
      await browse(`${server.url}/uas/oauth2/logout?${new URLSearchParams({ id_token_hint: idTokens.get(a)! })}`, jar);
      receiver.status = 503;
      await deliver();
      const failedAt = new Date(clock.now()).toISOString();
      const failed = await last(a.client.clientId);
      const jti = String(failed.last_delivery?.jti);
      assert.match(jti, /^bcl-/);
      assert.deepEqual(failed, { client_id: a.client.clientId, last_delivery: { status: 'failed', attempted_at: failedAt, jti, error: 'the relying party answered 503: logout failed' } });
      receiver.status = 200;
      clock.advance(10 * MINUTE);
      const { received } = await deliver();
      assert.equal(received.length, 2);
      assert.deepEqual(await last(a.client.clientId), { client_id: a.client.clientId, last_delivery: { status: 'delivered', attempted_at: new Date(clock.now()).toISOString(), jti } });
      assert.equal((await last(b.client.clientId)).last_delivery?.status, 'delivered');
    });

    test('a relying party that answers 400 could not log out: the message is dead after the permanent-failure attempts, for an administrator to see', async () => {
      const { jar, idTokens } = await signedIn();
      await browse(`${server.url}/uas/oauth2/logout?${new URLSearchParams({ id_token_hint: idTokens.get(a)! })}`, jar);
      receiver.status = 400;
      let dead = 0;
      for (let round = 0; round < 5; round++) {
        dead += (await deliver()).report.dead;
        clock.advance(60 * MINUTE);
      }
      receiver.status = 200;
      assert.equal(dead, 2);
      const messages = (await server.gatehouse.store.outbox.page({ status: 'dead', limit: 10 })).filter((m) => m.channel === 'backchannel_logout');
      assert.deepEqual(messages.map((m) => m.lastError).sort(), ['the relying party answered 400: logout failed', 'the relying party answered 400: logout failed']);
    });
    test('the same user signing in again in the browser keeps the RPs of the session replaced (LO4): a later logout tells them by the sid they know', async () => {
      const { user, jar, idTokens } = await signedIn();
      const again = await loginThroughForm({ baseUrl: server.url, jar }, { ...query(d), prompt: 'login' }, { username: user.username, password: PASSWORD });
      await exchange(again.headers.get('location'), d);
      assert.deepEqual((await deliver()).received, [], 'replacing the session told nobody');
      const logout = await browse(`${server.url}/uas/oauth2/logout?${new URLSearchParams({ id_token_hint: idTokens.get(a)! })}`, jar);
      assert.equal(logout.status, 200);
      const { received } = await deliver();
      assert.deepEqual(received.map((r) => r.path), ['/a', '/b?tenant=1']);
      await validated(received[0]!, a, user, idTokens.get(a)!);
      await validated(received[1]!, b, user, idTokens.get(b)!);
    });

    test('another user signing in where a session was (a shared computer): the previous user\'s RPs are told at once (LO14); the new user\'s logout tells only theirs', async () => {
      const first = await signedIn();
      const other = await createTestUser(server.gatehouse.store, { password: PASSWORD });
      const login = await loginThroughForm({ baseUrl: server.url, jar: first.jar }, { ...query(b), prompt: 'login' }, { username: other.username, password: PASSWORD });
      const otherToken = await exchange(login.headers.get('location'), b);
      const { received } = await deliver();
      assert.deepEqual(received.map((r) => r.path), ['/a', '/b?tenant=1']);
      await validated(received[0]!, a, first.user, first.idTokens.get(a)!);
      await validated(received[1]!, b, first.user, first.idTokens.get(b)!);
      const logout = await browse(`${server.url}/uas/oauth2/logout?${new URLSearchParams({ id_token_hint: otherToken })}`, first.jar);
      assert.equal(logout.status, 200);
      const after = await deliver();
      assert.deepEqual(after.received.map((r) => r.path), ['/b?tenant=1']);
      await validated(after.received[0]!, b, other, otherToken);
    });
  });
}
