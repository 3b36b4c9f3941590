/**
 * `/manage/api/v1/users/{id}/factors`: listing a user's second factors (never a secret, code or
 * hash), removing one, resetting all, importing a TOTP secret from another server — the use cases
 * the CLI calls (src/manage/user-factors.ts); roles, audit events (never the secret) and hostile input.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { ManualClock } from '../../../src/lib/clock.ts';
import { CONSOLE_CLIENT_ID } from '../../../src/manage/management-clients.ts';
import { AuditCapture } from '../../helpers/audit.ts';
import { addUser } from '../../helpers/back-channel.ts';
import { DATABASES } from '../../helpers/databases.ts';
import { capturedLogger } from '../../helpers/log.ts';
import { enrolTotp, giveRecoveryCodes } from '../../helpers/factors.ts';
import { manageCall, manageTokens, type ManageResponse, type ManageTokens } from '../../helpers/manage.ts';
import { startServer, type RunningServer } from '../../helpers/server.ts';

/** A base32 secret as another server exports one (spaces and padding as some do). */
const SECRET = 'JBSW Y3DP EHPK 3PXP JBSW Y3DP EHPK 3PXP';
const SECRET_BASE32 = SECRET.replace(/ /g, '');

function assertProblem(answer: ManageResponse, status: number, field?: string): void {
  assert.equal(answer.status, status, answer.text);
  assert.match(answer.headers.get('content-type') ?? '', /^application\/problem\+json/);
  assert.equal(answer.json.status, status);
  if (field !== undefined) assert.deepEqual(answer.json.errors?.map((e) => e.field), [field], answer.text);
}

for (const db of DATABASES) {
  describe(`management API second factors (${db.name})`, () => {
    let server: RunningServer;
    let tokens: ManageTokens;
    const audit = new AuditCapture();
    const clock = new ManualClock(Date.UTC(2026, 10, 27, 12, 0, 0));
    before(async () => {
      server = await startServer(db, { audit, clock });
      tokens = await manageTokens(server);
    });
    after(async () => server.close());

    const call = (method: string, path: string, body?: unknown, token = tokens.admin) => manageCall(server, method, path, { token, body });
    const store = () => server.gatehouse.store;

    test("lists a user's factors oldest first with the codes left, never a secret or a hash; a reader may list", async () => {
      const user = await addUser(store());
      const secret = await enrolTotp(store(), user.id, clock.now() - 2000);
      const codes = await giveRecoveryCodes(store(), user.id, clock.now() - 1000);
      const [totp, recovery] = await store().factors.list(user.id);
      const answer = await call('GET', `/users/${user.id}/factors`, undefined, tokens.reader);
      assert.equal(answer.status, 200, answer.text);
      assert.deepEqual(answer.json.items, [
        { id: totp!.id, kind: 'totp', name: 'phone', created_at: new Date(clock.now() - 2000).toISOString(), last_used_at: null },
        { id: recovery!.id, kind: 'recovery_codes', name: 'Recovery codes', created_at: new Date(clock.now() - 1000).toISOString(), last_used_at: null, codes_left: 10 },
      ]);
      assert.equal(answer.text.includes(secret), false, 'no TOTP secret');
      assert.equal(codes.some((c) => answer.text.includes(c)), false, 'no recovery code');
      const none = await call('GET', `/users/${(await addUser(store())).id}/factors`);
      assert.deepEqual(none.json, { items: [] });
    });

    test('removing one factor leaves the others; audited as factor.removed naming the administrator', async () => {
      const user = await addUser(store());
      await enrolTotp(store(), user.id, clock.now() - 2000);
      await giveRecoveryCodes(store(), user.id, clock.now() - 1000);
      const [totp, recovery] = await store().factors.list(user.id);
      audit.clear();
      const answer = await call('DELETE', `/users/${user.id}/factors/${totp!.id}`);
      assert.equal(answer.status, 204, answer.text);
      assert.deepEqual((await store().factors.list(user.id)).map((f) => f.id), [recovery!.id]);
      const actor = { via: 'manage-api', caller: tokens.adminUser.id, clientId: CONSOLE_CLIENT_ID };
      assert.deepEqual(
        audit.all().map((e) => { const { event, userId, kind, factorId, actor } = e as Record<string, unknown>; return { event, userId, kind, factorId, actor }; }),
        [{ event: 'factor.removed', userId: user.id, kind: 'totp', factorId: totp!.id, actor }],
      );
      assertProblem(await call('DELETE', `/users/${user.id}/factors/${totp!.id}`), 404);
    });

    test('PATCH renames one factor: 200 with the record, audited as factor.renamed; bad names 400 naming name; a reader 403; another user\'s factor 404', async () => {
      const user = await addUser(store());
      const other = await addUser(store());
      await enrolTotp(store(), user.id, clock.now() - 2000);
      const [totp] = await store().factors.list(user.id);
      audit.clear();
      const answer = await call('PATCH', `/users/${user.id}/factors/${totp!.id}`, { name: ' work phone ' });
      assert.equal(answer.status, 200, answer.text);
      assert.deepEqual(answer.json, { id: totp!.id, kind: 'totp', name: 'work phone', created_at: new Date(clock.now() - 2000).toISOString(), last_used_at: null });
      assert.deepEqual((await store().factors.list(user.id)).map((f) => f.name), ['work phone']);
      const actor = { via: 'manage-api', caller: tokens.adminUser.id, clientId: CONSOLE_CLIENT_ID };
      assert.deepEqual(
        audit.all().map((e) => { const { event, userId, kind, factorId, name, actor } = e as Record<string, unknown>; return { event, userId, kind, factorId, name, actor }; }),
        [{ event: 'factor.renamed', userId: user.id, kind: 'totp', factorId: totp!.id, name: 'work phone', actor }],
      );
      for (const body of [{ name: '' }, { name: 'x'.repeat(65) }, { name: 'line\nbreak' }, { name: 5 }, {}, { name: 'ok', extra: 1 }]) {
        assertProblem(await call('PATCH', `/users/${user.id}/factors/${totp!.id}`, body), 400, Object.keys(body).includes('extra') ? 'extra' : 'name');
      }
      assert.equal((await call('PATCH', `/users/${user.id}/factors/${totp!.id}`, { name: 'reader' }, tokens.reader)).status, 403);
      assertProblem(await call('PATCH', `/users/${other.id}/factors/${totp!.id}`, { name: 'stolen' }), 404);
      assert.deepEqual((await store().factors.list(user.id)).map((f) => f.name), ['work phone']);
    });

    test('reset removes every factor and answers how many; audited as factor.reset; a user without any: 0', async () => {
      const user = await addUser(store());
      await enrolTotp(store(), user.id);
      await enrolTotp(store(), user.id);
      await giveRecoveryCodes(store(), user.id);
      audit.clear();
      const answer = await call('POST', `/users/${user.id}/factors/reset`);
      assert.equal(answer.status, 200, answer.text);
      assert.deepEqual(answer.json, { removed: 3 });
      assert.deepEqual(await store().factors.list(user.id), []);
      assert.deepEqual(audit.all().map((e) => [e.event, (e as { removed?: number }).removed]), [['factor.reset', 3]]);
      assert.deepEqual((await call('POST', `/users/${user.id}/factors/reset`, {})).json, { removed: 0 }, 'an empty body too');
    });

    test('importing a TOTP secret stores it with its parameters; the secret is in no answer and no audit event', async () => {
      const user = await addUser(store());
      audit.clear();
      const answer = await call('POST', `/users/${user.id}/factors/totp`, { secret: SECRET, name: 'Old server', digits: 8, period: 60, algorithm: 'SHA256' });
      assert.equal(answer.status, 201, answer.text);
      const [stored] = await store().factors.totpFactors(user.id);
      assert.deepEqual(answer.json, { id: stored!.factor.id, kind: 'totp', name: 'Old server', created_at: new Date(clock.now()).toISOString(), last_used_at: null });
      assert.deepEqual([stored!.secret, stored!.digits, stored!.period, stored!.algorithm], [{ form: 'clear', value: SECRET_BASE32 }, 8, 60, 'SHA256']);
      const events = audit.all();
      assert.deepEqual(events.map((e) => e.event), ['factor.enrolled']);
      // The captured audit events are the log lines themselves: the log has no secret either.
      for (const text of [answer.text, JSON.stringify(events)]) assert.equal(text.includes(SECRET_BASE32) || text.includes(SECRET.slice(0, 9)), false, 'the secret is never echoed');
      const defaults = await call('POST', `/users/${user.id}/factors/totp`, { secret: SECRET_BASE32 });
      assert.equal(defaults.json.name, 'Authenticator app');
    });

    test("a reader's or a nobody's token is refused every change (403) and nothing changes", async () => {
      const user = await addUser(store());
      await enrolTotp(store(), user.id);
      const [factor] = await store().factors.list(user.id);
      audit.clear();
      for (const token of [tokens.reader, tokens.nobody]) {
        assertProblem(await call('DELETE', `/users/${user.id}/factors/${factor!.id}`, undefined, token), 403);
        assertProblem(await call('POST', `/users/${user.id}/factors/reset`, undefined, token), 403);
        assertProblem(await call('POST', `/users/${user.id}/factors/totp`, { secret: SECRET }, token), 403);
      }
      assertProblem(await call('GET', `/users/${user.id}/factors`, undefined, tokens.nobody), 403);
      assert.equal((await store().factors.list(user.id)).length, 1);
      assert.deepEqual(audit.all().filter((e) => e.event.startsWith('factor.')), []);
    });

    test('unknown users and factors: 404, another user’s factor included', async () => {
      const user = await addUser(store());
      const other = await addUser(store());
      await enrolTotp(store(), other.id);
      const [othersFactor] = await store().factors.list(other.id);
      assertProblem(await call('GET', `/users/${randomUUID()}/factors`), 404);
      assertProblem(await call('GET', '/users/not-a-uuid/factors'), 404);
      assertProblem(await call('POST', `/users/${randomUUID()}/factors/reset`), 404);
      assertProblem(await call('POST', `/users/${randomUUID()}/factors/totp`, { secret: SECRET }), 404);
      assertProblem(await call('DELETE', `/users/${user.id}/factors/${othersFactor!.id}`), 404);
      assertProblem(await call('DELETE', `/users/${user.id}/factors/not-an-id`), 404);
      assertProblem(await call('DELETE', `/users/${user.id}/factors/${'x'.repeat(65)}`), 400, 'factor_id');
      assert.equal((await store().factors.list(other.id)).length, 1, "the other user's factor stays");
    });

    test('the OpenAPI document has the five routes, the secret write-only', async () => {
      const document = (await call('GET', '/openapi.json')).json as { paths: Record<string, Record<string, { operationId: string; requestBody?: { content: Record<string, { schema: { properties: Record<string, Record<string, unknown>> } }> } }>> };
      const factors = '/manage/api/v1/users/{id}/factors';
      assert.deepEqual(
        [document.paths[factors]?.get?.operationId, document.paths[`${factors}/{factor_id}`]?.delete?.operationId, document.paths[`${factors}/{factor_id}`]?.patch?.operationId, document.paths[`${factors}/reset`]?.post?.operationId, document.paths[`${factors}/totp`]?.post?.operationId],
        ['listUserFactors', 'removeUserFactor', 'renameUserFactor', 'resetUserFactors', 'importUserTotp'],
      );
      assert.equal(document.paths[`${factors}/totp`]!.post!.requestBody!.content['application/json']!.schema.properties.secret!.writeOnly, true);
    });

    test('hostile imports: 400 naming the field, the secret never echoed, nothing stored', async () => {
      const user = await addUser(store());
      const cases: [unknown, string][] = [
        [{ secret: 'not base32 at all!' }, 'secret'],
        [{ secret: 'JBSWY3DP' }, 'secret'],
        [{ secret: 'A'.repeat(2000) }, 'secret'],
        [{ secret: '' }, 'secret'],
        [{ secret: 5 }, 'secret'],
        [{}, 'secret'],
        [{ secret: SECRET, digits: 9 }, 'digits'],
        [{ secret: SECRET, digits: '6' }, 'digits'],
        [{ secret: SECRET, digits: 6.5 }, 'digits'],
        [{ secret: SECRET, period: 5 }, 'period'],
        [{ secret: SECRET, period: 1e12 }, 'period'],
        [{ secret: SECRET, algorithm: 'MD5' }, 'algorithm'],
        [{ secret: SECRET, name: 'x'.repeat(300) }, 'name'],
        [{ secret: SECRET, name: 'a\u0000b' }, 'name'],
        [{ secret: SECRET, issuer: 'x' }, 'issuer'],
      ];
      for (const [body, field] of cases) {
        const answer = await call('POST', `/users/${user.id}/factors/totp`, body);
        assertProblem(answer, 400, field);
        assert.equal(answer.text.includes('not base32 at all') || answer.text.includes('AAAAAAAA') || answer.text.includes(SECRET_BASE32), false, `no secret echoed: ${answer.text}`);
      }
      assertProblem(await manageCall(server, 'POST', `/users/${user.id}/factors/totp`, { token: tokens.admin, body: 'secret=JBSWY3DPEHPK3PXP', contentType: 'application/x-www-form-urlencoded' }), 415);
      assertProblem(await call('POST', `/users/${user.id}/factors/reset`, { all: true }), 400, 'all');
      assert.deepEqual(await store().factors.list(user.id), []);
    });
  });
}

describe('management API second factors: the log', () => {
  test('at debug, no log line carries an imported secret, accepted or refused', async () => {
    const captured = capturedLogger('debug');
    const server = await startServer(DATABASES[0]!, { logger: captured.logger });
    try {
      const tokens = await manageTokens(server);
      const user = await addUser(server.gatehouse.store);
      const secrets = [SECRET_BASE32, 'KRUGS4ZANFZSAYJAON2HE33OM4QHGZLDOJSXI', 'not base32 but a secret 1234'];
      for (const [i, secret] of secrets.entries()) {
        const answer = await manageCall(server, 'POST', `/users/${user.id}/factors/totp`, { token: tokens.admin, body: { secret, digits: i === 1 ? 9 : 6 } });
        assert.equal(answer.status, i === 0 ? 201 : 400, answer.text);
      }
      const text = captured.text();
      assert.match(text, /request completed/, 'the requests were logged');
      for (const secret of secrets) assert.equal(text.includes(secret), false, 'the secret is in no log line');
    } finally {
      await server.close();
    }
  });
});
