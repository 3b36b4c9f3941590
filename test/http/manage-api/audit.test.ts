/**
 * `GET /manage/api/v1/audit-events` against a real server on every database: events emitted
 * through the server's own audit sink (the tee of the log copy and the batching store sink) and by
 * a real token request, made visible with the sink's `flush()` (no sleeps); the wire shape,
 * newest first, every filter, keyset paging that does not shift while new events arrive, who may
 * read, and bad parameters answered 400 naming the field.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { ManualClock } from '../../../src/lib/clock.ts';
import { CONSOLE_CLIENT_ID } from '../../../src/manage/management-clients.ts';
import type { AuditEvent } from '../../../src/observability/audit.ts';
import { addClient, basic, postForm } from '../../helpers/back-channel.ts';
import { DATABASES } from '../../helpers/databases.ts';
import { manageCall, manageTokens, type ManageResponse, type ManageTokens } from '../../helpers/manage.ts';
import { startServer, type RunningServer } from '../../helpers/server.ts';
import { unique } from '../../helpers/store.ts';
import { createTestUser } from '../../helpers/fixtures.ts';

const START = Date.UTC(2026, 10, 24, 7, 0, 0);
const iso = (ms: number) => new Date(ms).toISOString();

for (const db of DATABASES) {
  describe(`GET /manage/api/v1/audit-events (${db.name})`, () => {
    let server: RunningServer;
    let tokens: ManageTokens;
    const clock = new ManualClock(START);

    before(async () => {
      server = await startServer(db, { clock });
      tokens = await manageTokens(server);
    });
    after(async () => server.close());

    /** Emits through the server's own sink, one clock step apart, and waits until they are stored. */
    async function emit(...events: AuditEvent[]): Promise<void> {
      for (const event of events) {
        clock.advance(1000);
        server.gatehouse.deps.audit.emit(event);
      }
      await server.gatehouse.auditStore!.flush();
    }

    const list = (query: string, token = tokens.admin): Promise<ManageResponse> => manageCall(server, 'GET', `/audit-events${query}`, { token });
    const events = (answer: ManageResponse) => (answer.json.items ?? []).map((i) => i.event);

    test('items newest first in the wire shape: time, user_id, client_id, actor, snake_case data; fingerprints only', async () => {
      const userId = randomUUID();
      const clientId = unique('rp-');
      const t = clock.now();
      await emit(
        { event: 'user.created', userId, username: 'alice', actor: { via: 'manage-api', caller: tokens.adminUser.id, clientId: CONSOLE_CLIENT_ID } },
        { event: 'token.issued', grantType: 'authorization_code', clientId, userId, scope: 'openid', family: 'fam123456789', accessToken: 'abcdefabcdef', idToken: true, ip: '203.0.113.7' },
      );
      const answer = await list(`?user=${userId}`);
      assert.equal(answer.status, 200, answer.text);
      assert.equal(answer.headers.get('cache-control'), 'no-store');
      assert.equal(answer.json.next_cursor, null);
      const [issued, created] = answer.json.items!;
      assert.match(String(issued!.id), /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      assert.deepEqual({ ...issued, id: undefined }, {
        id: undefined,
        time: iso(t + 2000),
        event: 'token.issued',
        user_id: userId,
        client_id: clientId,
        data: { grant_type: 'authorization_code', scope: 'openid', family: 'fam123456789', access_token: 'abcdefabcdef', id_token: true, ip: '203.0.113.7' },
      });
      assert.deepEqual({ ...created, id: undefined }, {
        id: undefined,
        time: iso(t + 1000),
        event: 'user.created',
        user_id: userId,
        actor: { via: 'manage-api', caller: tokens.adminUser.id, username: tokens.adminUser.username, client_id: CONSOLE_CLIENT_ID },
        data: { username: 'alice' },
      });
    });

    test('people are named by their current username while they exist: the subject and a caller, never the CLI account (issue 22 item 11)', async () => {
      const store = server.gatehouse.store;
      const bob = await createTestUser(store, { password: 'audit names pw 1' });
      const gone = await createTestUser(store, { password: 'audit names pw 1' });
      const clientId = unique('rp-');
      const t = clock.now();
      await emit(
        { event: 'user.updated', userId: bob.id, username: bob.username, fields: ['email'], actor: { via: 'manage-api', caller: tokens.adminUser.id, clientId: CONSOLE_CLIENT_ID } },
        { event: 'user.deleted', userId: gone.id, username: gone.username, actor: { via: 'cli', caller: bob.id } },
        { event: 'token.issued', grantType: 'client_credentials', clientId, scope: '', family: 'fam000000000', accessToken: '000000000000', idToken: false },
      );
      await store.users.delete(gone.id);
      const answer = await list(`?since=${encodeURIComponent(iso(t + 1000))}`);
      assert.equal(answer.status, 200, answer.text);
      const people = answer.json.items!.map((i) => ({ event: i.event, user_id: i.user_id, username: i.username, actor: i.actor }));
      assert.deepEqual(people, [
        { event: 'token.issued', user_id: undefined, username: undefined, actor: undefined },
        { event: 'user.deleted', user_id: gone.id, username: undefined, actor: { via: 'cli', caller: bob.id } },
        { event: 'user.updated', user_id: bob.id, username: bob.username, actor: { via: 'manage-api', caller: tokens.adminUser.id, username: tokens.adminUser.username, client_id: CONSOLE_CLIENT_ID } },
      ]);
    });

    test('a real token request with a wrong secret is listed as client_auth.failed for its client', async () => {
      const { client } = await addClient(server.gatehouse.store);
      const refused = await postForm(`${server.url}/uas/oauth2/token`, { grant_type: 'client_credentials' }, { authorization: basic(client.clientId, 'wrong secret') });
      assert.equal(refused.status, 401);
      await server.gatehouse.auditStore!.flush();
      const answer = await list(`?client=${client.clientId}`);
      assert.deepEqual(events(answer), ['client_auth.failed']);
      assert.equal(answer.json.items![0]!.client_id, client.clientId);
      assert.ok(!answer.text.includes('wrong secret'));
    });

    test('filters: since (inclusive) and until (exclusive), type exact, repeated, comma-separated and prefix.*, client, and user = subject OR administrator', async () => {
      const alice = randomUUID();
      const admin = randomUUID();
      const clientId = unique('rp-');
      const t0 = clock.now();
      await emit(
        { event: 'client.created', clientId, authorizationPolicy: null, actor: { via: 'manage-api', caller: admin, clientId: CONSOLE_CLIENT_ID } }, // t0+1s
        { event: 'login.succeeded', userId: alice, username: 'alice', clientId, session: 'sess12345678' }, // t0+2s
        { event: 'user.updated', userId: alice, username: 'alice', fields: ['email'], actor: { via: 'cli', caller: admin } }, // t0+3s
        { event: 'client.status_changed', clientId, active: false, actor: { via: 'cli', caller: 'root' } }, // t0+4s
        { event: 'login.failed', reason: 'wrong_password', userId: alice, username: 'alice', clientId }, // t0+5s
      );
      const c = `client=${clientId}`;
      assert.deepEqual(events(await list(`?${c}`)), ['login.failed', 'client.status_changed', 'login.succeeded', 'client.created']);
      assert.deepEqual(events(await list(`?${c}&since=${iso(t0 + 2000)}&until=${iso(t0 + 5000)}`)), ['client.status_changed', 'login.succeeded']);
      const atPlusTwo = `${new Date(t0 + 4000 + 2 * 3600_000).toISOString().slice(0, 19)}+02:00`;
      assert.deepEqual(events(await list(`?${c}&since=${encodeURIComponent(atPlusTwo)}`)), ['login.failed', 'client.status_changed'], 'an offset is honoured');
      assert.deepEqual(events(await list(`?${c}&type=login.failed`)), ['login.failed']);
      assert.deepEqual(events(await list(`?${c}&type=login.failed&type=client.created`)), ['login.failed', 'client.created']);
      assert.deepEqual(events(await list(`?${c}&type=login.failed,client.created`)), ['login.failed', 'client.created']);
      assert.deepEqual(events(await list(`?${c}&type=client.*`)), ['client.status_changed', 'client.created']);
      assert.deepEqual(events(await list(`?${c}&type=login.*,client.created`)), ['login.failed', 'login.succeeded', 'client.created']);
      assert.deepEqual(events(await list(`?user=${alice}`)), ['login.failed', 'user.updated', 'login.succeeded']);
      assert.deepEqual(events(await list(`?user=${admin}`)), ['user.updated', 'client.created'], 'what the administrator did');
      assert.deepEqual(events(await list(`?user=${alice}&type=login.*&until=${iso(t0 + 5000)}`)), ['login.succeeded']);
      assert.deepEqual(events(await list(`?user=${randomUUID()}`)), []);
    });

    test('paging: limit and next_cursor walk every event once, newest first, while new events keep arriving', async () => {
      const clientId = unique('rp-');
      const burst = (n: number): AuditEvent[] => Array.from({ length: n }, (_, i) => ({ event: 'client_auth.failed', endpoint: 'token', clientId, reason: `r${i}` }));
      await emit(...burst(7));
      // Three more in one millisecond: the id orders them.
      for (const e of burst(3)) server.gatehouse.deps.audit.emit(e);
      await server.gatehouse.auditStore!.flush();
      const all = (await list(`?client=${clientId}&limit=200`)).json.items!.map((i) => i.id);
      assert.equal(all.length, 10);

      const seen: unknown[] = [];
      let cursor: string | null | undefined;
      let pages = 0;
      do {
        const answer = await list(`?client=${clientId}&limit=3${cursor ? `&cursor=${cursor}` : ''}`);
        assert.equal(answer.status, 200, answer.text);
        seen.push(...answer.json.items!.map((i) => i.id));
        cursor = answer.json.next_cursor;
        pages++;
        assert.ok(pages <= 4, 'the cursor does not advance');
        // Newer events arrive between pages (and some in the same millisecond as the last one).
        await emit(...burst(2));
        for (const e of burst(1)) server.gatehouse.deps.audit.emit(e);
        await server.gatehouse.auditStore!.flush();
      } while (cursor);
      assert.deepEqual(seen, all, 'the first listing, exactly, in order');
      assert.equal(pages, 4);
      const times = (await list(`?client=${clientId}&limit=200`)).json.items!.map((i) => String(i.time));
      assert.deepEqual(times, [...times].sort().reverse(), 'newest first');
    });

    test('a reader and a client token may read; a user in neither group is 403; no token or another audience is 401', async () => {
      assert.equal((await list('?limit=1', tokens.reader)).status, 200);
      assert.equal((await list('?limit=1', tokens.automation)).status, 200);
      const nobody = await list('', tokens.nobody);
      assert.equal(nobody.status, 403);
      assert.match(nobody.headers.get('content-type') ?? '', /^application\/problem\+json/);
      const none = await manageCall(server, 'GET', '/audit-events');
      assert.equal(none.status, 401);
      assert.equal(none.headers.get('www-authenticate'), 'Bearer realm="gatehouse management API"');
      assert.equal((await list('', tokens.otherAudience)).status, 401);
      assert.equal((await manageCall(server, 'DELETE', '/audit-events', { token: tokens.admin })).status, 405, 'the trail is read-only');
    });

    test('bad parameters: 400 problems naming the field', async () => {
      const cursorOf = (key: unknown) => Buffer.from(JSON.stringify(key)).toString('base64url');
      const cases: [string, string][] = [
        ['since=yesterday', 'since'],
        ['since=2026-11-24', 'since'],
        ['since=2026-11-24T07:00:00', 'since'],
        ['since=2026-02-30T07:00:00Z', 'since'],
        ['since=2026-11-24T25:00:00Z', 'since'],
        [`since=${'9'.repeat(41)}`, 'since'],
        ['until=2026-13-01T00:00:00Z', 'until'],
        [`since=${iso(START + 5000)}&until=${iso(START)}`, 'until'],
        ['type=login.nothing', 'type'],
        ['type=nothing.*', 'type'],
        ['type=', 'type'],
        ['type=login.failed,', 'type'],
        ['type=*', 'type'],
        [`type=${'login.failed,'.repeat(70)}login.failed`, 'type'],
        ['cursor=not!base64', 'cursor'],
        [`cursor=${cursorOf({ at: 'x', id: 'y' })}`, 'cursor'],
        [`cursor=${cursorOf({ at: 1, id: 'y', more: 1 })}`, 'cursor'],
        [`cursor=${cursorOf(['a'])}`, 'cursor'],
        [`cursor=${Buffer.from('{"at":').toString('base64url')}`, 'cursor'],
        ['limit=0', 'limit'],
        ['limit=201', 'limit'],
        ['limit=ten', 'limit'],
        [`user=${'u'.repeat(256)}`, 'user'],
        ['client=', 'client'],
        ['unknown=1', 'unknown'],
      ];
      for (const [query, field] of cases) {
        const answer = await list(`?${query}`);
        assert.equal(answer.status, 400, `${query}: ${answer.text}`);
        assert.match(answer.headers.get('content-type') ?? '', /^application\/problem\+json/);
        // An item of a repeatable parameter is named with its index: `type[0]`.
        assert.ok(answer.json.errors?.some((e) => e.field === field || e.field.startsWith(`${field}[`)), `${query}: ${answer.text}`);
      }
    });

    test('the OpenAPI document lists the route with its filters and the event names', async () => {
      const doc = await manageCall(server, 'GET', '/openapi.json');
      const operation = (doc.json.paths as Record<string, Record<string, { operationId: string; parameters: { name: string; description?: string; schema?: { description?: string } }[] }>>)['/manage/api/v1/audit-events']!.get!;
      assert.equal(operation.operationId, 'listAuditEvents');
      assert.deepEqual(operation.parameters.map((p) => p.name).sort(), ['client', 'cursor', 'limit', 'since', 'type', 'until', 'user']);
      assert.match(JSON.stringify(operation), /client_auth\.failed/);
    });
  });

  describe(`GATEHOUSE_AUDIT_STORE=off (${db.name})`, () => {
    test('events go to the log only: no store sink, no row, an empty list', async () => {
      const server = await startServer(db, { env: { GATEHOUSE_AUDIT_STORE: 'off' } });
      try {
        assert.equal(server.gatehouse.auditStore, undefined);
        const tokens = await manageTokens(server);
        const { client } = await addClient(server.gatehouse.store);
        assert.equal((await postForm(`${server.url}/uas/oauth2/token`, { grant_type: 'client_credentials' }, { authorization: basic(client.clientId, 'nope') })).status, 401);
        const answer = await manageCall(server, 'GET', '/audit-events', { token: tokens.admin });
        assert.equal(answer.status, 200);
        assert.deepEqual(answer.json, { items: [], next_cursor: null });
      } finally {
        await server.close();
      }
    });
  });
}
