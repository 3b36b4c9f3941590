/**
 * Bugs the fuzzers found, each pinned by a plain deterministic test so it stays fixed whatever
 * seed the fuzz suite runs with. (Those in the HTTP layer's own limits are in
 * test/http/limits.test.ts.)
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { GRANT_TYPES_SUPPORTED } from '../../src/oauth/grants/registry.ts';
import { parseClientMetadata } from '../../src/oauth/client-metadata.ts';
import { DATABASES } from '../helpers/databases.ts';
import { send } from '../helpers/raw-http.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';
import { aStoredUser, anOrganization, withTestStore } from '../helpers/store.ts';

const API_USERNAME = 'regression-api';
const API_PASSWORD = 'regression api password';
const AUTH: [string, string] = ['authorization', `Basic ${Buffer.from(`${API_USERNAME}:${API_PASSWORD}`).toString('base64')}`];
const PROTOTYPE_NAMES = ['toString', 'constructor', 'valueOf', 'hasOwnProperty', 'isPrototypeOf', 'toLocaleString'];

test('a client registered with grant_types ["toString"] is told the grant is not supported, not shown Object.prototype.toString\'s source', () => {
  for (const grant of ['toString', 'constructor', '__proto__']) {
    assert.throws(() => parseClientMetadata({ client_name: 'x', redirect_uris: ['https://a.example/cb'], grant_types: [grant] }), { message: `grant_types: "${grant}" is not supported; the grants are ${GRANT_TYPES_SUPPORTED.join(', ')}` });
  }
});

for (const db of DATABASES) {
  describe(`fuzzer regressions on ${db.name}`, () => {
    let server: RunningServer;
    let port: number;
    before(async () => {
      server = await startServer(db, { env: { GATEHOUSE_API_USERNAME: API_USERNAME, GATEHOUSE_API_PASSWORD: API_PASSWORD } });
      port = Number(new URL(server.url).port);
    });
    after(async () => server.close());

    test("a listing filter named like an Object.prototype member is a custom attribute, not a 500 (the store looked it up in a plain object and built a column name from Function#toString)", async () => {
      for (const collection of ['users', 'organizations']) {
        for (const name of PROTOTYPE_NAMES) {
          const response = await send(port, { method: 'GET', target: `/customerid-rest/services/2.0/${collection}/?${name}=x`, headers: [AUTH] });
          assert.equal(response.status, 200, `${collection}?${name}: ${response.body}`);
          assert.deepEqual(JSON.parse(response.body), { [collection]: [] });
        }
      }
    });

    test('a user or organization with a custom attribute named like an Object.prototype member can be read and listed (reading attributes pushed onto Object.prototype.toString: every listing including them was a 500)', async () => {
      const created: [string, string][] = [];
      for (const [collection, query] of [['users', 'login=proto-user'], ['organizations', 'technicalName=proto-org']]) {
        const response = await send(port, { method: 'POST', target: `/customerid-rest/services/2.0/${collection}/?${query}&${PROTOTYPE_NAMES.map((n, i) => `${n}=v${i}`).join('&')}`, headers: [AUTH] });
        assert.equal(response.status, 201, response.body);
        created.push([collection!, (JSON.parse(response.body) as Record<string, string[]>)[collection!]![0]!]);
      }
      for (const [collection, id] of created) {
        const one = await send(port, { method: 'GET', target: `/customerid-rest/services/2.0/${collection}/${id}`, headers: [AUTH] });
        assert.equal(one.status, 200, one.body);
        const attributes = (JSON.parse(one.body) as { attributes: Record<string, string[]> }).attributes;
        for (const [i, name] of PROTOTYPE_NAMES.entries()) assert.deepEqual(attributes[name], [`v${i}`], name);
        const list = await send(port, { method: 'GET', target: `/customerid-rest/services/2.0/${collection}/`, headers: [AUTH] });
        assert.equal(list.status, 200, list.body);
        assert.ok(list.body.includes(id));
        const legacy = await send(port, { method: 'GET', target: `/eidm2/services/${collection}/${id}`, headers: [AUTH] });
        assert.equal(legacy.status, 200, legacy.body);
      }
    });

    test('the stores themselves: such a filter matches only a custom attribute of that name', async () => {
      await withTestStore(db, async (store) => {
        const user = await aStoredUser(store, { attributes: { toString: ['yes'] } });
        await aStoredUser(store);
        assert.deepEqual((await store.users.list({ filters: { toString: 'yes' }, exactMatch: true })).map((u) => u.id), [user.id]);
        assert.deepEqual(await store.users.list({ filters: { constructor: 'x' } }), []);
        const organization = anOrganization({ attributes: { valueOf: ['1'] } });
        await store.organizations.insert(organization);
        assert.deepEqual((await store.organizations.list({ filters: { valueOf: '1' } })).map((o) => o.id), [organization.id]);
        assert.deepEqual(await store.organizations.list({ filters: { hasOwnProperty: 'x' } }), []);
      });
    });

    test('XML nested deeper than the parser allows is 400 Invalid arguments, not a 500', async () => {
      const body = `${'<a>'.repeat(10)}${'</a>'.repeat(10)}`;
      const response = await send(port, { method: 'POST', target: '/customerid-rest/services/2.0/users/', headers: [AUTH, ['content-type', 'application/xml']], body });
      assert.equal(response.status, 400, response.body);
      assert.equal((JSON.parse(response.body) as { error: { code: string } }).error.code, 'Invalid arguments');
    });

    test('openapi.json answers a malformed query in the API error shape', async () => {
      const response = await send(port, { method: 'GET', target: '/customerid-rest/openapi.json?x=%FF' });
      assert.equal(response.status, 400);
      assert.deepEqual(Object.keys(JSON.parse(response.body) as object), ['error']);
    });
  });
}
