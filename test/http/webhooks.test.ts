/**
 * Webhooks (issue 26 item 4; docs/webhooks.md; decisions WH1–WH30) on both databases, end to
 * end: endpoints registered through the management API, audit events of the server become signed
 * deliveries POSTed by the outbox sender to a real HTTP receiver, which checks every signature
 * with the Standard Webhooks reference library (test/helpers/webhook-receiver.ts). The clock is
 * injected and the sender's ticks are called; `webhooks.flush()` writes the waiting audit batch.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ManualClock } from '../../src/lib/clock.ts';
import { webhookTransport } from '../../src/adapters/webhook-transport.ts';
import { DeliveryFailure } from '../../src/oauth/outbox/transport.ts';
import { DATABASES } from '../helpers/databases.ts';
import { createTestUser } from '../helpers/fixtures.ts';
import { ensureManagementSetup, issueManageToken, manageCall, type ManageResponse } from '../helpers/manage.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.ts';

const HOUR = 3_600_000;

for (const db of DATABASES) {
  describe(`webhooks on ${db.name}`, () => {
    let server: RunningServer;
    let clock: ManualClock;
    let receiver: WebhookReceiver;

    before(async () => {
      clock = new ManualClock(Date.now());
      receiver = await startWebhookReceiver(() => clock.now());
      server = await startServer(db, { clock, env: { GATEHOUSE_OUTBOUND_LOOPBACK: 'on', GATEHOUSE_OUTBOX_INTERVAL: '0', GATEHOUSE_OUTBOUND_TIMEOUT: '1', GATEHOUSE_WEBHOOK_SECRET_OVERLAP: '3600' } });
      await ensureManagementSetup(server);
    });
    after(async () => {
      await server.close();
      await receiver.stop();
    });

    // A token per call: the tests move the clock past a token's lifetime.
    const call = async (method: string, path: string, body?: unknown): Promise<ManageResponse> => manageCall(server, method, path, { token: await issueManageToken(server), ...(body === undefined ? {} : { body }) });
    /** Registers an endpoint at `path` of the receiver; its id and secret (the receiver verifies with it). */
    const register = async (path: string, events: string[]) => {
      const made = await call('POST', '/webhooks', { url: receiver.url(path), description: `test ${path}`, events });
      assert.equal(made.status, 201, made.text);
      const secret = made.json.secret as string;
      receiver.secrets.push(secret);
      return { id: (made.json.endpoint as { id: string }).id, secret };
    };
    /** Writes the audit batch (and the webhooks it causes), then runs the sender until it has nothing due; what arrived meanwhile. */
    const deliver = async (path?: string) => {
      await server.gatehouse.webhooks.flush();
      receiver.received.length = 0;
      for (let i = 0; i < 10; i++) {
        const report = await server.gatehouse.outbox.sender.tick();
        if (report.delivered + report.retried + report.dead === 0) break;
      }
      return receiver.received.filter((r) => path === undefined || r.path === path);
    };
    const renameUser = async (userId: string, givenName: string) => {
      const changed = await call('PATCH', `/users/${userId}`, { given_name: givenName });
      assert.equal(changed.status, 200, changed.text);
    };

    test('registration refuses a bad URL, an http URL to a host that is not loopback, a private address, an unknown event type and oversized fields with 400 naming the field', async () => {
      const refused = async (body: Record<string, unknown>, field: string) => {
        const answer = await call('POST', '/webhooks', { url: 'https://hooks.example.com/in', events: ['user.created'], ...body });
        assert.equal(answer.status, 400, answer.text);
        assert.equal(answer.headers.get('content-type'), 'application/problem+json; charset=utf-8');
        assert.deepEqual(answer.json.errors?.map((e) => e.field), [field], answer.text);
        return answer.json.detail as string;
      };
      assert.equal(await refused({ url: 'not a url' }, 'url'), 'url: is not an absolute URL');
      assert.match(await refused({ url: 'http://hooks.example.com/in' }, 'url'), /^url: refused: http:\/\/hooks\.example\.com is not https and not a loopback host/);
      assert.match(await refused({ url: 'https://10.1.2.3/in' }, 'url'), /^url: refused: 10\.1\.2\.3 is not a public address \(GATEHOUSE_OUTBOUND_PRIVATE\)/);
      assert.match(await refused({ url: 'https://user:pw@hooks.example.com/in' }, 'url'), /must not hold a user name or password/);
      await refused({ events: ['user.exploded'] }, 'events[0]');
      await refused({ events: [] }, 'events');
      await refused({ description: 'x'.repeat(501) }, 'description');
      await refused({ url: `https://hooks.example.com/${'a'.repeat(2000)}` }, 'url');
      await refused({ secret: 'whsec_mine' }, 'secret');
      const patch = await call('PATCH', '/webhooks/00000000-0000-4000-8000-000000000000', { events: ['nope'] });
      assert.equal(patch.status, 400, patch.text);
    });

    test('only subscribed events arrive, each signed (Standard Webhooks, reference library) with the payload {type, timestamp, data} and no secret', async () => {
      const created = await register('/created', ['user.created']);
      await register('/updated', ['user.updated']);
      const made = await call('POST', '/users', { username: `wh-${Date.now()}`, given_name: 'Ada' });
      assert.equal(made.status, 201, made.text);
      const userId = made.json.id as string;
      await renameUser(userId, 'Grace');
      const received = await deliver();
      const byPath = (path: string) => received.filter((r) => r.path === path);
      assert.deepEqual(byPath('/created').map((r) => r.payload.type), ['user.created']);
      assert.deepEqual(byPath('/updated').map((r) => r.payload.type), ['user.updated'], 'the user.created event never reaches the endpoint that did not subscribe to it');
      const delivery = byPath('/created')[0]!;
      assert.deepEqual(delivery.verifiedWith, [created.secret], 'the reference library accepts the signature with this endpoint\'s secret, and only with it');
      assert.equal(delivery.contentType, 'application/json');
      assert.equal(delivery.timestamp, String(Math.floor(clock.now() / 1000)));
      assert.equal(delivery.payload.data.user_id, userId);
      assert.equal(delivery.payload.timestamp, new Date(clock.now()).toISOString());
      assert.deepEqual(Object.keys(delivery.payload).sort(), ['data', 'timestamp', 'type']);
      assert.ok(!delivery.body.includes('whsec_'), 'no secret in a payload');
      const log = await call('GET', `/webhooks/${created.id}/deliveries`);
      assert.deepEqual(log.json.items?.map((m) => [m.id, m.status, m.attempts, m.response_status, m.kind]), [[delivery.id, 'delivered', 1, 200, 'webhook.user.created']]);
      assert.deepEqual(await deliver(), [], 'nothing is sent twice');
    });

    test('a 500 and a timeout are retried with back-off, with the same webhook id, until a 2xx; the log shows status, attempts, last error', async () => {
      const endpoint = await register('/flaky', ['user.updated']);
      const user = await createTestUser(server.gatehouse.store, { password: 'webhook password 1' });
      receiver.answer = (d) => (d.path === '/flaky' ? 500 : 200);
      await renameUser(user.id, 'One');
      const first = await deliver('/flaky');
      assert.equal(first.length, 1);
      const [entry] = (await call('GET', `/webhooks/${endpoint.id}/deliveries`)).json.items!;
      assert.deepEqual([entry!.status, entry!.attempts, entry!.response_status, entry!.last_error], ['pending', 1, 500, 'the endpoint answered 500: receiver failed']);
      receiver.answer = (d) => (d.path === '/flaky' ? 'hang' : 200);
      clock.advance(HOUR);
      const second = await deliver('/flaky');
      assert.deepEqual(second.map((r) => r.id), [first[0]!.id]);
      const [timedOut] = (await call('GET', `/webhooks/${endpoint.id}/deliveries`)).json.items!;
      assert.deepEqual([timedOut!.status, timedOut!.attempts, timedOut!.last_error], ['pending', 2, 'timed out']);
      receiver.answer = () => 200;
      clock.advance(HOUR);
      const third = await deliver('/flaky');
      assert.deepEqual(third.map((r) => r.id), [first[0]!.id], 'the same webhook-id on every attempt');
      assert.deepEqual(third[0]!.verifiedWith, [endpoint.secret]);
      const [done] = (await call('GET', `/webhooks/${endpoint.id}/deliveries`)).json.items!;
      assert.deepEqual([done!.status, done!.attempts, done!.response_status, done!.last_error], ['delivered', 3, 200, null]);

      const again = await call('POST', `/webhooks/${endpoint.id}/deliveries/${String(done!.id)}/redeliver`);
      assert.deepEqual([again.status, again.json.status], [200, 'pending'], again.text);
      const pendingAgain = await call('POST', `/webhooks/${endpoint.id}/deliveries/${String(done!.id)}/redeliver`);
      assert.equal(pendingAgain.status, 409, pendingAgain.text);
      const redelivered = await deliver('/flaky');
      assert.deepEqual(redelivered.map((r) => r.id), [first[0]!.id], 'a redelivery carries the same webhook-id: at least once, de-duplicable');
    });

    test('in order per subject: a later event of the same user waits while an earlier one is retried; another user\'s does not', async () => {
      await register('/ordered', ['user.updated']);
      const [u, v] = [await createTestUser(server.gatehouse.store, { password: 'webhook password 1' }), await createTestUser(server.gatehouse.store, { password: 'webhook password 1' })];
      let failFirst = true;
      receiver.answer = (d) => (d.path === '/ordered' && failFirst && d.payload.data.user_id === u.id ? 500 : 200);
      for (const name of ['u1', 'u2', 'u3']) await renameUser(u.id, name);
      await renameUser(v.id, 'v1');
      const names = (list: { payload: { data: Record<string, unknown> } }[]) => list.map((r) => ((r.payload.data.fields as string[] | undefined) ? r.payload.data.user_id === u.id ? 'u' : 'v' : '?'));
      const firstRound = await deliver('/ordered');
      assert.deepEqual(names(firstRound).sort(), ['u', 'v'], 'u\'s first (refused) and v\'s only: u\'s later ones wait');
      failFirst = false;
      clock.advance(HOUR);
      const rest = await deliver('/ordered');
      assert.deepEqual(names(rest), ['u', 'u', 'u']);
      const uEvents = [...firstRound, ...rest].filter((r) => r.payload.data.user_id === u.id);
      const ids = uEvents.map((r) => r.id);
      assert.deepEqual(ids.slice(1), [...ids.slice(1)].sort(), 'u\'s events arrive in the order they happened');
      assert.equal(ids[0], ids[1], 'the refused first one is retried before the second is sent');
    });

    test('rotation: both secrets verify during the overlap, then only the new one', async () => {
      const endpoint = await register('/rotating', ['user.updated']);
      const user = await createTestUser(server.gatehouse.store, { password: 'webhook password 1' });
      const rotated = await call('POST', `/webhooks/${endpoint.id}/rotate-secret`);
      assert.equal(rotated.status, 200, rotated.text);
      const newSecret = rotated.json.secret as string;
      assert.notEqual(newSecret, endpoint.secret);
      assert.match(newSecret, /^whsec_[A-Za-z0-9+/]{43}=$/);
      receiver.secrets.push(newSecret);
      await renameUser(user.id, 'During');
      const during = await deliver('/rotating');
      assert.deepEqual(during.map((r) => [r.verifiedWith.sort(), r.signature.split(' ').length]), [[[endpoint.secret, newSecret].sort(), 2]]);
      clock.advance(HOUR + 1000);
      await renameUser(user.id, 'After');
      const afterOverlap = await deliver('/rotating');
      assert.deepEqual(afterOverlap.map((r) => [r.verifiedWith, r.signature.split(' ').length]), [[[newSecret], 1]]);
      const shown = await call('GET', `/webhooks/${endpoint.id}`);
      assert.equal(shown.json.secret, undefined, 'the secret is shown only when made');
    });

    test('what one process queued and never sent, a process started later sends (restart with deliveries pending), once', async () => {
      const endpoint = await register('/restart', ['user.updated']);
      const user = await createTestUser(server.gatehouse.store, { password: 'webhook password 1' });
      await renameUser(user.id, 'Before restart');
      // Queued in the store, and this process never ticks again for it.
      await server.gatehouse.webhooks.flush();
      const later = await startServer(db, { database: server.database, clock, env: { GATEHOUSE_OUTBOUND_LOOPBACK: 'on', GATEHOUSE_OUTBOX_INTERVAL: '0' } });
      try {
        receiver.received.length = 0;
        await later.gatehouse.outbox.sender.tick();
        await later.gatehouse.outbox.sender.tick();
        const arrived = receiver.received.filter((r) => r.path === '/restart');
        assert.deepEqual(arrived.map((r) => [r.payload.type, r.payload.data.user_id, r.verifiedWith]), [['user.updated', user.id, [endpoint.secret]]]);
        assert.deepEqual(await deliver('/restart'), [], 'and the first process does not send it again');
      } finally {
        await later.close();
      }
    });

    test('a disabled or deleted endpoint is sent nothing; a host that resolves to a refused address is refused at delivery', async () => {
      const endpoint = await register('/off', ['user.updated']);
      const user = await createTestUser(server.gatehouse.store, { password: 'webhook password 1' });
      assert.equal((await call('PATCH', `/webhooks/${endpoint.id}`, { enabled: false })).status, 200);
      await renameUser(user.id, 'Quiet');
      assert.deepEqual(await deliver('/off'), []);
      assert.equal((await call('DELETE', `/webhooks/${endpoint.id}`)).status, 204);
      assert.equal((await call('GET', `/webhooks/${endpoint.id}`)).status, 404);

      // `localhost` is a host name: registration cannot judge it; delivery resolves it and refuses loopback.
      const transport = webhookTransport({ webhooks: server.gatehouse.store.webhooks, clock, outbound: { allowLoopback: false, allowPrivate: false, timeoutMs: 1000 }, keyEncryptionKey: undefined });
      const local = await register('/local', ['user.updated']);
      await server.gatehouse.store.webhooks.update(local.id, { url: receiver.url('/local').replace('http://127.0.0.1', 'https://localhost') }, clock.now());
      await assert.rejects(transport.deliver({ id: 'x', channel: 'webhook', kind: 'webhook.user.updated', destination: '', payload: {}, dedupeKey: 'x', createdAt: 0, nextAttemptAt: 0, status: 'pending', attempts: 1, leaseOwner: undefined, leaseUntil: undefined, lastError: undefined, updatedAt: 0, deliveredAt: undefined, endpointId: local.id }), (error: unknown) => {
        assert.ok(error instanceof DeliveryFailure);
        assert.equal(error.permanent, true);
        assert.match(error.message, /^refused: 127\.0\.0\.1 is a loopback address \(GATEHOUSE_OUTBOUND_LOOPBACK\)$|^refused: ::1 is a loopback address/);
        return true;
      });
      await call('DELETE', `/webhooks/${local.id}`);

      // A private address (the URL changed in the store behind the API's back, as DNS would):
      // refused by the server's own sender before any connection, a permanent failure: dead after
      // the outbox's few permanent attempts (3), said in the log.
      const inside = await register('/inside', ['user.updated']);
      await server.gatehouse.store.webhooks.update(inside.id, { url: 'https://10.1.2.3/in' }, clock.now());
      await renameUser(user.id, 'Inside');
      const states: unknown[] = [];
      for (let attempt = 1; attempt <= 3; attempt++) {
        assert.deepEqual(await deliver('/inside'), []);
        const [refused] = (await call('GET', `/webhooks/${inside.id}/deliveries`)).json.items!;
        states.push([refused!.status, refused!.attempts, refused!.last_error]);
        clock.advance(HOUR);
      }
      const why = 'refused: 10.1.2.3 is not a public address (GATEHOUSE_OUTBOUND_PRIVATE)';
      assert.deepEqual(states, [['pending', 1, why], ['pending', 2, why], ['dead', 3, why]]);
      await call('DELETE', `/webhooks/${inside.id}`);
    });
  });
}

describe('webhooks with GATEHOUSE_AUDIT_STORE=off', () => {
  let server: RunningServer;
  let receiver: WebhookReceiver;
  before(async () => {
    receiver = await startWebhookReceiver(() => Date.now());
    server = await startServer(DATABASES[0]!, { env: { GATEHOUSE_OUTBOUND_LOOPBACK: 'on', GATEHOUSE_OUTBOX_INTERVAL: '0', GATEHOUSE_AUDIT_STORE: 'off' } });
    await ensureManagementSetup(server);
  });
  after(async () => {
    await server.close();
    await receiver.stop();
  });

  test('subscribed events are still delivered, and no audit event is stored', async () => {
    const token = await issueManageToken(server);
    const made = await manageCall(server, 'POST', '/webhooks', { token, body: { url: receiver.url('/no-store'), events: ['user.updated'] } });
    receiver.secrets.push(made.json.secret as string);
    const user = await createTestUser(server.gatehouse.store, { password: 'webhook password 1' });
    assert.equal((await manageCall(server, 'PATCH', `/users/${user.id}`, { token, body: { given_name: 'Off' } })).status, 200);
    await server.gatehouse.webhooks.flush();
    await server.gatehouse.outbox.sender.tick();
    assert.deepEqual(receiver.received.map((r) => [r.payload.type, r.payload.data.user_id, r.verifiedWith.length]), [['user.updated', user.id, 1]]);
    assert.deepEqual(await server.gatehouse.store.audit.page({ limit: 10 }), []);
  });
});

describe('webhook secrets with GATEHOUSE_KEY_ENCRYPTION_KEY', () => {
  let server: RunningServer;
  let receiver: WebhookReceiver;
  before(async () => {
    receiver = await startWebhookReceiver(() => Date.now());
    server = await startServer(DATABASES[0]!, { env: { GATEHOUSE_OUTBOUND_LOOPBACK: 'on', GATEHOUSE_OUTBOX_INTERVAL: '0', GATEHOUSE_KEY_ENCRYPTION_KEY: 'w'.repeat(40) } });
    await ensureManagementSetup(server);
  });
  after(async () => {
    await server.close();
    await receiver.stop();
  });

  test('are sealed in the store (never the secret itself), and still sign every delivery', async () => {
    const token = await issueManageToken(server);
    const made = await manageCall(server, 'POST', '/webhooks', { token, body: { url: receiver.url('/sealed'), events: ['user.updated'] } });
    const secret = made.json.secret as string;
    receiver.secrets.push(secret);
    const id = (made.json.endpoint as { id: string }).id;
    const stored = (await server.gatehouse.store.webhooks.get(id))!;
    assert.match(stored.secret, /^v1\./);
    assert.ok(!stored.secret.includes(secret.slice('whsec_'.length)));
    const user = await createTestUser(server.gatehouse.store, { password: 'webhook password 1' });
    assert.equal((await manageCall(server, 'PATCH', `/users/${user.id}`, { token, body: { given_name: 'Sealed' } })).status, 200);
    await server.gatehouse.webhooks.flush();
    await server.gatehouse.outbox.sender.tick();
    assert.deepEqual(receiver.received.map((r) => r.verifiedWith), [[secret]]);
  });
});
