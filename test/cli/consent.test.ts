/**
 * `gatehouse consent list | withdraw` and `client create/update --[no-]consent-required`, run as
 * the real command against a fresh database of every kind (issue 13, item 4).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { grantConsent } from '../../src/oauth/consents.ts';
import { openSqlStore, type SqlStore } from '../../src/storage/sql/store.ts';
import { runGatehouse as gatehouse, storeLineOf } from '../helpers/cli.ts';
import { DATABASES, type TestDatabase } from '../helpers/databases.ts';
import { aToken, T0 } from '../helpers/store.ts';

for (const kind of DATABASES) {
  describe(`gatehouse consent on ${kind.name}`, () => {
    let database: TestDatabase;
    let env: Record<string, string>;
    let store: SqlStore;
    const run = async (...args: string[]) => {
      const result = await gatehouse(args, env);
      assert.equal(result.stderr, storeLineOf(env), result.stderr);
      assert.equal(result.code, 0);
      return JSON.parse(result.stdout) as Record<string, unknown> & Record<string, unknown>[];
    };

    before(async () => {
      database = await kind.create();
      env = { GATEHOUSE_DATABASE_URL: database.url };
      assert.equal((await gatehouse(['migrate'], env)).code, 0);
      store = await openSqlStore(database.url);
    });
    after(async () => {
      await store.close();
      await database.drop();
    });

    test('client create --consent-required registers a third-party client; update --no-consent-required makes it first-party (CN-14)', async () => {
      const created = await run('client', 'create', '--name', 'Partner', '--redirect-uri', 'https://partner.example/cb', '--consent-required', '--json');
      assert.equal(created.consent_required, true);
      const updated = await run('client', 'update', created.client_id as string, '--no-consent-required', '--json');
      assert.equal(updated.consent_required, false);
      const plain = await run('client', 'create', '--name', 'Own app', '--redirect-uri', 'https://own.example/cb', '--json');
      assert.equal(plain.consent_required, undefined, 'first-party by default');
    });

    test('consent list shows a user\'s consents; withdraw deletes one and revokes that client\'s tokens for the user in the same transaction (CN-15)', async () => {
      const user = await run('user', 'create', '--username', 'carol', '--password', 'correct horse battery', '--json');
      const client = await run('client', 'create', '--name', 'Partner B', '--redirect-uri', 'https://b.example/cb', '--consent-required', '--json');
      const userId = user.id as string;
      const clientId = client.client_id as string;
      await grantConsent(store, { userId, clientId, scope: ['profile', 'openid'] }, T0);
      const token = aToken({ userId, clientId });
      const otherClients = aToken({ userId });
      await store.tokens.insertMany([token, otherClients]);

      assert.deepEqual(await run('consent', 'list', '--user', 'carol', '--json'), [
        { client_id: clientId, client_name: 'Partner B', scope: 'openid profile', granted_at: new Date(T0).toISOString(), updated_at: new Date(T0).toISOString() },
      ]);
      assert.deepEqual(await run('consent', 'withdraw', '--user', userId, '--client', clientId, '--json'), { user_id: userId, client_id: clientId, withdrawn: true, tokens_revoked: 1 });
      assert.notEqual((await store.tokens.find(token.tokenHash))?.revokedAt, undefined);
      assert.equal((await store.tokens.find(otherClients.tokenHash))?.revokedAt, undefined);
      assert.deepEqual(await run('consent', 'list', '--user', 'carol', '--json'), []);
      assert.deepEqual(await run('consent', 'withdraw', '--user', 'carol', '--client', clientId, '--json'), { user_id: userId, client_id: clientId, withdrawn: false, tokens_revoked: 0 });
    });

    test('an unknown user or client is one error line, exit 2 (CN-15)', async () => {
      const unknownUser = await gatehouse(['consent', 'list', '--user', 'nobody-here'], env);
      assert.equal(unknownUser.code, 2);
      assert.equal(unknownUser.stderr, `${storeLineOf(env)}gatehouse: no user has the id or username "nobody-here"\n`);
      await run('user', 'create', '--username', 'dave', '--password', 'correct horse battery', '--json');
      const unknownClient = await gatehouse(['consent', 'withdraw', '--user', 'dave', '--client', 'no-such-client'], env);
      assert.equal(unknownClient.code, 2);
      assert.equal(unknownClient.stderr, `${storeLineOf(env)}gatehouse: no client has the client_id "no-such-client"\n`);
    });
  });
}
