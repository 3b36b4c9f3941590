/**
 * Initial access tokens (RFC 7591 §3) through the management API: minted by an administrator
 * (the value answered once), listed by any manager without their values, revoked; the minted
 * token registers a client at the registration endpoint, and each change is audited with the
 * administrator as `gatehouse registration-token` audits it with the CLI's actor.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { hashSecret } from '../../../src/lib/hash.ts';
import { CONSOLE_CLIENT_ID } from '../../../src/manage/management-clients.ts';
import { AuditCapture } from '../../helpers/audit.ts';
import { DATABASES } from '../../helpers/databases.ts';
import { manageCall, manageTokens, type ManageTokens } from '../../helpers/manage.ts';
import { startServer, type RunningServer } from '../../helpers/server.ts';

for (const db of DATABASES) {
  describe(`management API: initial access tokens (${db.name})`, () => {
    let server: RunningServer;
    let tokens: ManageTokens;
    const audit = new AuditCapture();
    before(async () => {
      server = await startServer(db, { audit, env: { GATEHOUSE_DYNAMIC_REGISTRATION: 'initial_access_token' } });
      tokens = await manageTokens(server);
    });
    after(async () => server.close());

    const register = (token: string) =>
      fetch(`${server.url}/uas/oauth2/register`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ client_name: 'Automation', grant_types: ['client_credentials'] }) });

    test('an administrator mints a token (value once), a reader lists it without the value, it registers a client, revoked it registers none; audited with the administrator (DR-13)', async () => {
      audit.clear();
      const created = await manageCall(server, 'POST', '/initial-access-tokens', { token: tokens.admin, body: { expires_in: 3600, uses: 2, description: 'CI' } });
      assert.equal(created.status, 201, created.text);
      assert.match(created.json.token as string, /^[A-Za-z0-9_-]{43}$/);
      assert.equal(created.json.uses_left, 2);
      assert.equal(created.json.created_by, tokens.adminUser.id);
      assert.equal(created.json.description, 'CI');
      const { token, ...view } = created.json;

      const listed = await manageCall(server, 'GET', '/initial-access-tokens', { token: tokens.reader });
      assert.equal(listed.status, 200, listed.text);
      assert.deepEqual(listed.json.items!.find((t) => t.id === view.id), view);
      assert.ok(!listed.text.includes(token as string) && !listed.text.includes(hashSecret(token as string)));

      assert.equal((await register(token as string)).status, 201);
      assert.equal((await manageCall(server, 'GET', '/initial-access-tokens', { token: tokens.reader })).json.items!.find((t) => t.id === view.id)?.uses_left, 1);

      assert.equal((await manageCall(server, 'DELETE', `/initial-access-tokens/${view.id as string}`, { token: tokens.reader })).status, 403, 'a reader cannot revoke');
      const revoked = await manageCall(server, 'DELETE', `/initial-access-tokens/${view.id as string}`, { token: tokens.admin });
      assert.equal(revoked.status, 204);
      assert.equal((await register(token as string)).status, 401);
      assert.equal((await manageCall(server, 'DELETE', `/initial-access-tokens/${view.id as string}`, { token: tokens.admin })).status, 404);

      const actor = { via: 'manage-api', caller: tokens.adminUser.id, clientId: CONSOLE_CLIENT_ID };
      const events = audit.all().filter((e) => e.event.startsWith('initial_access_token.'));
      assert.deepEqual(events.map((e) => [e.event, (e as { id?: string }).id, (e as { actor?: unknown }).actor]), [
        ['initial_access_token.created', view.id, actor],
        ['initial_access_token.revoked', view.id, actor],
      ]);
      assert.ok(!audit.lines.join('\n').includes(token as string));
    });

    test('a reader cannot mint; bad settings are 400 naming the field; the list is keyset-paged by id (DR-13)', async () => {
      assert.equal((await manageCall(server, 'POST', '/initial-access-tokens', { token: tokens.reader, body: { expires_in: 60 } })).status, 403);
      for (const [body, field] of [
        [{ expires_in: 0 }, 'expires_in'],
        [{ expires_in: 400 * 86_400 }, 'expires_in'],
        [{ expires_in: 60, uses: 0 }, 'uses'],
        [{ expires_in: 60, uses: 'many' }, 'uses'],
        [{ expires_in: 60, description: 'x'.repeat(201) }, 'description'],
        [{ expires_in: 60, description: 'bell\u0007' }, 'description'],
        [{ uses: 1 }, 'expires_in'],
      ] as [Record<string, unknown>, string][]) {
        const refused = await manageCall(server, 'POST', '/initial-access-tokens', { token: tokens.admin, body });
        assert.equal(refused.status, 400, `${JSON.stringify(body)}: ${refused.text}`);
        assert.ok(refused.json.errors?.some((e) => e.field === field), `${JSON.stringify(body)}: ${refused.text}`);
      }
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) ids.push((await manageCall(server, 'POST', '/initial-access-tokens', { token: tokens.automation, body: { expires_in: 60 } })).json.id as string);
      const seen: string[] = [];
      let cursor: string | null | undefined;
      do {
        const page = await manageCall(server, 'GET', `/initial-access-tokens?limit=1${cursor ? `&cursor=${cursor}` : ''}`, { token: tokens.reader });
        assert.equal(page.status, 200, page.text);
        seen.push(...page.json.items!.map((t) => t.id as string));
        cursor = page.json.next_cursor;
      } while (cursor);
      assert.deepEqual(seen, [...seen].sort());
      for (const id of ids) assert.ok(seen.includes(id));
    });
  });
}
