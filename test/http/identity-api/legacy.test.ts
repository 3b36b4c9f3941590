/**
 * The legacy reads (`/eidm2/services/…`, schema 1.2, also answered under `/customerid-rest/services/`):
 * the same data as 2.x in the 1.2 shapes, XML unless JSON is asked for.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DATABASES } from '../../helpers/databases.ts';
import type { RunningServer } from '../../helpers/server.ts';
import { API_PASSWORD, API_USERNAME, assertCleanError, call, create, startApiServer } from './helpers.ts';

const legacy = { base: '/eidm2/services' };

for (const db of DATABASES) {
  describe(`identity API legacy reads on ${db.name}`, () => {
    let server: RunningServer;
    let org: string;
    let sub: string;
    let ada: string;
    let bob: string;
    before(async () => {
      server = await startApiServer(db);
      org = await create(server, 'organizations', { technicalName: 'legacy-org' });
      sub = await create(server, 'organizations', { technicalName: 'legacy-sub', parentOrganizationId: org });
      ada = await create(server, 'users', { login: 'legacy-ada', firstname: 'Ada', organization: org });
      bob = await create(server, 'users', { login: 'legacy-bob', organization: sub });
    });
    after(async () => server.close());

    test('the spec’s example: users/?username=…&password=…&recursive=true answers an <idlist>', async () => {
      const response = await call(server, 'GET', `/users/?username=${API_USERNAME}&password=${encodeURIComponent(API_PASSWORD)}&recursive=true&organization=${org}`, { ...legacy, authorization: null });
      assert.equal(response.status, 200, response.text);
      assert.match(response.headers.get('content-type') ?? '', /^application\/xml/);
      assert.equal(response.text, `<?xml version="1.0" encoding="UTF-8"?><idlist>${[ada, bob].map((id) => `<Id>${id}</Id>`).join('')}</idlist>`);
    });

    test('users/{id} and user/{id} answer the user led by its <Id>; JSON on request', async () => {
      for (const path of [`/users/${ada}`, `/user/${ada}`]) {
        const response = await call(server, 'GET', path, legacy);
        assert.equal(response.status, 200, response.text);
        assert.equal(
          response.text,
          `<?xml version="1.0" encoding="UTF-8"?><user><Id>${ada}</Id><Attribute name="firstname"><Value>Ada</Value></Attribute><Attribute name="cn"><Value>Ada</Value></Attribute><Attribute name="login"><Value>legacy-ada</Value></Attribute><Attribute name="organization"><Value>${org}</Value></Attribute><Attribute name="status"><Value>enabled</Value></Attribute></user>`,
        );
      }
      const json = await call(server, 'GET', `/users/${ada}`, { ...legacy, accept: 'application/json' });
      assert.deepEqual(json.json, (await call(server, 'GET', `/2.0/users/${ada}`)).json, 'the same data as 2.x');
    });

    test('organizations/, orgs/, organizations/{id} and org/{id}', async () => {
      for (const path of ['/organizations/?technicalName=legacy-', '/orgs/?technicalName=legacy-']) {
        const response = await call(server, 'GET', path, legacy);
        assert.equal(response.status, 200, response.text);
        assert.equal(response.text, `<?xml version="1.0" encoding="UTF-8"?><idlist><Id>${org}</Id><Id>${sub}</Id></idlist>`);
      }
      for (const path of [`/organizations/${sub}`, `/org/${sub}`]) {
        const response = await call(server, 'GET', path, legacy);
        assert.equal(response.status, 200);
        assert.match(response.text, new RegExp(`^<\\?xml version="1.0" encoding="UTF-8"\\?><organization><Id>${sub}</Id><Attribute name="technicalName"><Value>legacy-sub</Value></Attribute>.*<Attribute name="entityName"><Value>legacy-org/legacy-sub</Value></Attribute>`));
      }
    });

    test('the legacy paths are also answered under the identity prefix, and need authentication', async () => {
      const response = await call(server, 'GET', `/users/${bob}`);
      assert.equal(response.status, 200);
      assert.match(response.text, /^<\?xml[^>]+><user><Id>/);
      const anonymous = await call(server, 'GET', '/users/', { ...legacy, authorization: null });
      assertCleanError(anonymous, 401, 'Authentication failed');
      assert.match(anonymous.text, /^<\?xml version="1.0" encoding="UTF-8"\?><error><code>Authentication failed<\/code><message>[^<]+<\/message><\/error>$/);
      assertCleanError(await call(server, 'GET', '/users/00000000-0000-4000-8000-000000000000', legacy), 404, 'Entity not found');
    });

    test('content negotiation: q-values decide, JSON is the 2.x default and XML the legacy one', async () => {
      const kinds = async (path: string, accept: string | undefined, base?: string) => (await call(server, 'GET', path, { accept, base })).headers.get('content-type')?.split(';')[0];
      assert.equal(await kinds('/2.0/users/', undefined), 'application/json');
      assert.equal(await kinds('/2.0/users/', '*/*'), 'application/json');
      assert.equal(await kinds('/2.0/users/', 'text/xml'), 'application/xml');
      assert.equal(await kinds('/2.0/users/', 'application/json;q=0.5, application/xml'), 'application/xml');
      assert.equal(await kinds('/2.0/users/', 'application/xml;q=0.1, application/json'), 'application/json');
      assert.equal(await kinds('/2.0/users/', 'text/html'), 'application/json');
      assert.equal(await kinds('/users/', undefined, legacy.base), 'application/xml');
      assert.equal(await kinds('/users/', 'application/json', legacy.base), 'application/json');
    });
  });
}
