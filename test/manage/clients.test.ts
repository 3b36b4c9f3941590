/**
 * The client use cases of the application layer (src/manage/clients.ts) on every database: each
 * change emits its audit event with whoever acts, and the protected management clients are
 * refused deletion and deactivation whoever acts — the CLI's operator as much as a management-API
 * administrator (docs/decisions.md MA5a) — with one error class and one message.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { loadConfig } from '../../src/config.ts';
import { ProtectedClientError } from '../../src/domain/errors.ts';
import { ManualClock } from '../../src/lib/clock.ts';
import { cryptoRandom } from '../../src/lib/random.ts';
import type { Acting } from '../../src/manage/acting.ts';
import { clientAdministration, type ClientAdministration } from '../../src/manage/clients.ts';
import { CONSOLE_CLIENT_ID, ensureManagementClients, MANAGE_API_CLIENT_ID } from '../../src/manage/management-clients.ts';
import type { AuditEvent, AuditSink } from '../../src/observability/audit.ts';
import { ClientNotFound } from '../../src/oauth/client-registration.ts';
import { AS_OPERATOR } from '../helpers/authority.ts';
import { DATABASES } from '../helpers/databases.ts';
import { openTestStore, T0, type TestStore } from '../helpers/store.ts';

const config = loadConfig({ GATEHOUSE_ISSUER: 'https://sso.example.com/uas' });
const OPERATOR: Acting = { actor: { via: 'cli', caller: 'operator' }, authority: AS_OPERATOR };
const API_ADMINISTRATOR: Acting = { actor: { via: 'manage-api', caller: 'admin-id', clientId: CONSOLE_CLIENT_ID }, authority: AS_OPERATOR };
const DOCUMENT = { client_name: 'Web shop', redirect_uris: ['https://shop.example.com/callback'], grant_types: ['authorization_code'] };

for (const kind of DATABASES) {
  describe(`client use cases on ${kind.name}`, () => {
    let harness: TestStore;
    /** The events emitted, as the use cases hand them to the sink. */
    const events: AuditEvent[] = [];
    const audit: AuditSink = { emit: (event) => events.push(event) };
    let clients: ClientAdministration;
    before(async () => {
      harness = await openTestStore(kind);
      const clock = new ManualClock(T0);
      clients = clientAdministration({ store: harness.store, clock, random: cryptoRandom, audit, settings: config });
      await ensureManagementClients({ store: harness.store, clock }, config);
    });
    after(async () => harness.close());

    test('each change emits its audit event, naming whoever acts', async () => {
      events.length = 0;
      const { client, clientSecret } = await clients.create(OPERATOR, DOCUMENT);
      assert.ok(clientSecret, 'a confidential client gets a secret, answered once');
      const id = client.clientId;
      await clients.update(API_ADMINISTRATOR, id, { client_name: 'Web shop 2' });
      await clients.rotateSecret(OPERATOR, id);
      await clients.setActive(API_ADMINISTRATOR, id, false);
      await clients.setActive(OPERATOR, id, true);
      await clients.delete(API_ADMINISTRATOR, id);
      assert.deepEqual(
        events,
        [
          { event: 'client.created', clientId: id, authorizationPolicy: null, actor: OPERATOR.actor },
          { event: 'client.updated', clientId: id, authorizationPolicy: null, actor: API_ADMINISTRATOR.actor },
          { event: 'client.secret_rotated', clientId: id, actor: OPERATOR.actor },
          { event: 'client.status_changed', clientId: id, active: false, actor: API_ADMINISTRATOR.actor },
          { event: 'client.status_changed', clientId: id, active: true, actor: OPERATOR.actor },
          { event: 'client.deleted', clientId: id, actor: API_ADMINISTRATOR.actor },
        ],
      );
      await assert.rejects(clients.get(id), ClientNotFound);
    });

    test('replace: a member left out of the document is removed; export gives the document back', async () => {
      const { client } = await clients.create(OPERATOR, { ...DOCUMENT, scope: 'openid profile' });
      const exported = await clients.export(client.clientId);
      assert.equal(exported.scope, 'openid profile');
      assert.equal(exported.created_at, undefined, 'no times in an export');
      const { scope: _scope, client_id: _id, ...withoutScope } = exported;
      events.length = 0;
      const { client: replaced } = await clients.replace(API_ADMINISTRATOR, client.clientId, withoutScope);
      assert.equal(replaced.scope, undefined);
      assert.deepEqual(await clients.export(client.clientId), { ...withoutScope, client_id: client.clientId });
      assert.deepEqual(events.map((e) => [e.event, (e as { actor?: unknown }).actor]), [['client.updated', API_ADMINISTRATOR.actor]]);
    });

    test('the protected clients cannot be deleted or deactivated, whoever acts: one error, one message, nothing written or audited', async () => {
      const which: Record<string, string> = { [MANAGE_API_CLIENT_ID]: "the management API's own client", [CONSOLE_CLIENT_ID]: "the web console's client" };
      events.length = 0;
      for (const acting of [OPERATOR, API_ADMINISTRATOR]) {
        for (const id of [MANAGE_API_CLIENT_ID, CONSOLE_CLIENT_ID]) {
          const before = await clients.get(id);
          const refusal = (change: string) => (error: unknown) => {
            assert.ok(error instanceof ProtectedClientError, String(error));
            assert.equal(error.clientId, id);
            assert.equal(error.message, `${id} is ${which[id]}: ${change} it would lock every administrator out.`);
            return true;
          };
          await assert.rejects(clients.delete(acting, id), refusal('deleting'));
          await assert.rejects(clients.setActive(acting, id, false), refusal('deactivating'));
          await assert.rejects(clients.update(acting, id, { active: false }), refusal('deactivating'));
          const { client_id: _id, ...document } = await clients.export(id);
          await assert.rejects(clients.replace(acting, id, { ...document, active: false }), refusal('deactivating'));
          assert.deepEqual(await clients.get(id), before, `${id} unchanged`);
        }
      }
      assert.deepEqual(events, [], 'nothing refused is audited');
      // Everything else stays theirs to change: a name, activating again.
      const renamed = await clients.update(OPERATOR, CONSOLE_CLIENT_ID, { client_name: 'Our console' });
      assert.equal(renamed.client.name, 'Our console');
      assert.equal((await clients.setActive(API_ADMINISTRATOR, MANAGE_API_CLIENT_ID, true)).active, true);
    });

    test('managementClients: the two clients as the store has them', async () => {
      const { api, console } = await clients.managementClients();
      assert.equal(api?.clientId, MANAGE_API_CLIENT_ID);
      assert.equal(console?.clientId, CONSOLE_CLIENT_ID);
      assert.deepEqual(console?.postLogoutRedirectUris, ['https://sso.example.com/manage/']);
    });
  });
}
