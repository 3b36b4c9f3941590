/**
 * A new user's id is never a client's client_id, through every front end that creates users over
 * HTTP (issue 22, item 4; RFC 9068 §5): the identity API and the management API. The server's
 * random source is made to draw an imported client's client_id first; the user gets the next id.
 * (The import side, a client_id that is a user's id, is in test/http/manage-api/clients.test.ts
 * and test/http/console.test.ts; the race and the CLI's and bootstrap's use cases in
 * test/contract/subject-ids.test.ts.)
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { cryptoRandom, type Random } from '../../src/lib/random.ts';
import { addClient } from '../helpers/back-channel.ts';
import { DATABASES } from '../helpers/databases.ts';
import { manageCall, manageTokens, type ManageTokens } from '../helpers/manage.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';
import { API_PASSWORD, API_USERNAME, call } from './identity-api/helpers.ts';

for (const db of DATABASES) {
  describe(`a new user never gets a client's client_id on ${db.name}`, () => {
    let server: RunningServer;
    let tokens: ManageTokens;
    /** What uuid() hands out next, before it draws at random again. */
    const queued: string[] = [];
    const random: Random = { ...cryptoRandom, uuid: () => queued.shift() ?? randomUUID() };

    before(async () => {
      const apiClientId = `identity-api-${randomUUID()}`;
      server = await startServer(db, { random, env: { GATEHOUSE_API_USERNAME: API_USERNAME, GATEHOUSE_API_PASSWORD: API_PASSWORD, GATEHOUSE_API_CLIENT_ID: apiClientId } });
      await addClient(server.gatehouse.store, { clientId: apiClientId, name: 'Identity API', grantTypes: [], redirectUris: [], refreshTokens: false, metadata: { resource_server: true } });
      tokens = await manageTokens(server);
    });
    after(async () => server.close());

    /** A client registered under a UUID no user has, as an import may do. */
    async function importedClientId(): Promise<string> {
      const clientId = randomUUID();
      await addClient(server.gatehouse.store, { clientId, grantTypes: ['client_credentials'], redirectUris: [] });
      return clientId;
    }

    test('the identity API: POST /2.0/users/ draws another id than the client_id', async () => {
      const clientId = await importedClientId();
      const next = randomUUID();
      queued.push(clientId, next);
      const response = await call(server, 'POST', '/2.0/users/', { contentType: 'application/json', body: JSON.stringify({ type: 'user', attributes: { login: `u-${next}`, password: 'a user password 1' } }) });
      assert.equal(response.status, 201, response.text);
      assert.deepEqual(response.json.users, [next]);
      assert.equal(await server.gatehouse.store.users.get(clientId), undefined);
      assert.deepEqual(queued, []);
    });

    test('the management API: POST /users draws another id than the client_id', async () => {
      const clientId = await importedClientId();
      const next = randomUUID();
      queued.push(clientId, next);
      const response = await manageCall(server, 'POST', '/users', { token: tokens.admin, body: { username: `m-${next}`, password: 'a user password 1' } });
      assert.equal(response.status, 201, response.text);
      assert.equal(response.json.id, next);
      assert.equal(await server.gatehouse.store.users.get(clientId), undefined);
      assert.deepEqual(queued, []);
    });
  });
}
