/**
 * Organizations over the identity API: create with the product's query parameters or a body,
 * read, the update rule (given replace, empty deletes, omitted stay), delete, filters, and the
 * users of an organization tree with `recursive`.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import type { SqlStore } from '../../../src/storage/sql/store.ts';
import { DATABASES } from '../../helpers/databases.ts';
import type { RunningServer } from '../../helpers/server.ts';
import { assertCleanError, call, create, ids, startApiServer } from './helpers.ts';

type Entity = { id: string; type: string; attributes: Record<string, string[]> };

for (const db of DATABASES) {
  describe(`identity API organizations on ${db.name}`, () => {
    let server: RunningServer;
    before(async () => {
      server = await startApiServer(db);
    });
    after(async () => server.close());

    const read = async (id: string, version = '2.0') => {
      const response = await call(server, 'GET', `/${version}/organizations/${id}`);
      assert.equal(response.status, 200, response.text);
      return response.json as unknown as Entity;
    };

    test('POST with the product’s query parameters creates an organization (201, Location, the new id)', async () => {
      const response = await call(server, 'POST', '/2.0/organizations/?virtual=false&technicalName=acme&friendlyName=ACME%20Ltd&organizationType=company&vatnumber=12345');
      assert.equal(response.status, 201, response.text);
      const [id] = response.json.organizations as string[];
      assert.equal(response.headers.get('location'), `/customerid-rest/services/2.0/organizations/${id}`);
      const entity = await read(id!);
      assert.equal(entity.id, id);
      assert.equal(entity.type, 'organization');
      assert.deepEqual(entity.attributes, {
        technicalName: ['acme'],
        friendlyName: ['ACME Ltd'],
        entityName: ['acme'],
        organizationType: ['company'],
        organizationClass: ['company'],
        virtual: ['false'],
        vatnumber: ['12345'],
      });
      assertCleanError(await call(server, 'POST', '/2.0/organizations/?technicalName=acme'), 409, 'Already exists');
    });

    test('defaults: technicalName is the new id and friendlyName the technical name; a JSON or XML body works too', async () => {
      const id = await create(server, 'organizations', {});
      const entity = await read(id);
      assert.deepEqual(entity.attributes.technicalName, [id]);
      assert.deepEqual(entity.attributes.friendlyName, [id]);
      const fromXml = await call(server, 'POST', '/2.1/organizations/', {
        contentType: 'application/xml',
        body: '<?xml version="1.0"?><Organization xmlns="http://schema.ubisecure.com/customerid/api"><Attribute name="technicalName"><Value>Smith &amp; Sons</Value></Attribute><Attribute name="phone"><Value>1</Value><Value>2</Value></Attribute></Organization>',
      });
      assert.equal(fromXml.status, 201, fromXml.text);
      const xmlEntity = await read((fromXml.json.organizations as string[])[0]!, '2.1');
      assert.deepEqual(xmlEntity.attributes.technicalName, ['Smith & Sons']);
      assert.deepEqual(xmlEntity.attributes.phone, ['1', '2']);
    });

    test('parentOrganizationId places it in the tree; entityName is the path; an unknown parent is "Parent not found"', async () => {
      const root = await create(server, 'organizations', { technicalName: 'tree-root' });
      const dept = await create(server, 'organizations', { technicalName: 'dept', parentOrganizationId: root });
      assert.deepEqual((await read(dept)).attributes.entityName, ['tree-root/dept']);
      assert.deepEqual((await read(dept)).attributes.parentOrganizationId, [root]);
      const orphan = await call(server, 'POST', '/2.0/organizations/?parentOrganizationId=00000000-0000-4000-8000-000000000000');
      assertCleanError(orphan, 400, 'Parent not found');
    });

    test('PUT: given attributes replace, an empty value deletes, omitted ones stay', async () => {
      const id = await create(server, 'organizations', { technicalName: 'put-me', friendlyName: 'Put Me', vatnumber: '1', phone: ['1', '2'], region: 'north' });
      const response = await call(server, 'PUT', `/2.0/organizations/${id}?friendlyName=Renamed&vatnumber=&region=south`);
      assert.equal(response.status, 200, response.text);
      assert.deepEqual(response.json, { organizations: [id] });
      const entity = await read(id);
      assert.deepEqual(entity.attributes.friendlyName, ['Renamed']);
      assert.equal(entity.attributes.vatnumber, undefined, 'an empty value deletes');
      assert.deepEqual(entity.attributes.region, ['south']);
      assert.deepEqual(entity.attributes.phone, ['1', '2'], 'omitted attributes stay');
      assert.deepEqual(entity.attributes.technicalName, ['put-me']);
      const body = await call(server, 'PUT', `/2.0/organizations/${id}`, { contentType: 'application/json', body: JSON.stringify({ id, type: 'organization', attributes: { phone: [], friendlyName: [''] } }) });
      assert.equal(body.status, 200, body.text);
      const after = await read(id);
      assert.equal(after.attributes.phone, undefined);
      assert.deepEqual(after.attributes.friendlyName, ['put-me'], 'an empty friendlyName falls back to the technical name');
      assertCleanError(await call(server, 'PUT', `/2.0/organizations/${id}?technicalName=`), 400, 'Invalid arguments');
      assertCleanError(await call(server, 'PUT', `/2.0/organizations/${id}?entityName=x`), 400, 'Invalid arguments');
    });

    test('PUT can move an organization, but never under itself or its own subtree', async () => {
      const a = await create(server, 'organizations', { technicalName: 'move-a' });
      const b = await create(server, 'organizations', { technicalName: 'move-b', parentOrganizationId: a });
      const c = await create(server, 'organizations', { technicalName: 'move-c' });
      // The store refuses it in the transaction that would move (security test finding 4).
      for (const parent of [b, a]) {
        const refused = await call(server, 'PUT', `/2.0/organizations/${a}?parentOrganizationId=${parent}`);
        assertCleanError(refused, 400, 'Invalid arguments');
        assert.equal(refused.json.error!.message, 'an organization cannot be moved under itself or one of its sub-organizations');
      }
      assert.deepEqual((await read(a)).attributes.entityName, ['move-a']);
      assert.equal((await call(server, 'PUT', `/2.0/organizations/${b}?parentOrganizationId=${c}`)).status, 200);
      assert.deepEqual((await read(b)).attributes.entityName, ['move-c/move-b']);
      assert.equal((await call(server, 'PUT', `/2.0/organizations/${b}?parentOrganizationId=`)).status, 200);
      assert.deepEqual((await read(b)).attributes.entityName, ['move-b']);
    });

    test('DELETE removes an empty organization; one with sub-organizations or users is 409', async () => {
      const parent = await create(server, 'organizations', { technicalName: 'del-parent' });
      const child = await create(server, 'organizations', { technicalName: 'del-child', parentOrganizationId: parent });
      assertCleanError(await call(server, 'DELETE', `/2.0/organizations/${parent}`), 409);
      const user = await create(server, 'users', { login: 'del-member', organization: child });
      assertCleanError(await call(server, 'DELETE', `/2.0/organizations/${child}`), 409);
      assert.equal((await call(server, 'DELETE', `/2.0/users/${user}`)).status, 200);
      const deleted = await call(server, 'DELETE', `/2.0/organizations/${child}`);
      assert.equal(deleted.status, 200);
      assert.deepEqual(deleted.json, { organizations: [child] });
      assertCleanError(await call(server, 'GET', `/2.0/organizations/${child}`), 404, 'Entity not found');
      assertCleanError(await call(server, 'DELETE', `/2.0/organizations/${child}`), 404, 'Entity not found');
      assert.equal((await call(server, 'DELETE', `/2.0/organizations/${parent}`)).status, 200);
    });

    test('GET lists filter by technicalName (prefix by default, exact with exactMatch) and by custom attributes', async () => {
      const one = await create(server, 'organizations', { technicalName: 'filter-alpha', sector: 'retail' });
      const two = await create(server, 'organizations', { technicalName: 'filter-alphabet', sector: 'banking' });
      assert.deepEqual((await ids(server, '/2.0/organizations/?technicalName=filter-alpha')).sort(), [one, two].sort());
      assert.deepEqual(await ids(server, '/2.0/organizations/?technicalName=filter-alpha&exactMatch=true'), [one]);
      assert.deepEqual(await ids(server, '/2.0/organizations/?technicalName=FILTER-ALPHABET'), [two], 'prefix match ignores case');
      assert.deepEqual(await ids(server, '/2.0/organizations/?technicalName=FILTER-ALPHABET&exactMatch=true'), []);
      assert.deepEqual(await ids(server, '/2.0/organizations/?sector=bank'), [two]);
      assert.deepEqual(await ids(server, '/2.0/organizations/?technicalName=filter-&maxResults=1'), [one]);
      assert.deepEqual(await ids(server, '/2.0/organizations/?no-such-attribute=x'), [], 'an unknown attribute matches nothing');
    });

    test('organizations/{id}/users/ lists one organization’s users, or the whole subtree with recursive=true', async () => {
      // root ─┬─ sales ── emea
      //       └─ support          (plus a sibling tree that must never show up)
      const root = await create(server, 'organizations', { technicalName: 'rec-root' });
      const sales = await create(server, 'organizations', { technicalName: 'rec-sales', parentOrganizationId: root });
      const emea = await create(server, 'organizations', { technicalName: 'rec-emea', parentOrganizationId: sales });
      const support = await create(server, 'organizations', { technicalName: 'rec-support', parentOrganizationId: root });
      const other = await create(server, 'organizations', { technicalName: 'rec-other' });
      const inRoot = await create(server, 'users', { login: 'rec-u-root', organization: root });
      const inSales = await create(server, 'users', { login: 'rec-u-sales', organization: sales });
      const inEmea = await create(server, 'users', { login: 'rec-u-emea', organization: emea, email: 'emea@example.com' });
      const inSupport = await create(server, 'users', { login: 'rec-u-support', organization: support });
      await create(server, 'users', { login: 'rec-u-other', organization: other });

      assert.deepEqual(await ids(server, `/2.1/organizations/${root}/users/`), [inRoot]);
      assert.deepEqual((await ids(server, `/2.1/organizations/${root}/users/?recursive=true`)).sort(), [inRoot, inSales, inEmea, inSupport].sort());
      assert.deepEqual((await ids(server, `/2.1/organizations/${sales}/users/?recursive=true`)).sort(), [inSales, inEmea].sort());
      assert.deepEqual(await ids(server, `/2.1/organizations/${root}/users/?recursive=true&email=emea`), [inEmea]);
      assert.deepEqual(await ids(server, `/2.0/organizations/${emea}/users/?recursive=true`), [inEmea]);
      assert.deepEqual((await ids(server, `/2.0/users/?organization=${sales}&recursive=true`)).sort(), [inSales, inEmea].sort(), 'users/?organization=…&recursive=true too');
      assert.deepEqual(await ids(server, `/2.0/users/?organization=${sales}`), [inSales]);
      assertCleanError(await call(server, 'GET', `/2.1/organizations/00000000-0000-4000-8000-000000000000/users/`), 404, 'Entity not found');
      const virtual = await create(server, 'organizations', { technicalName: 'rec-virtual', virtual: 'true' });
      assertCleanError(await call(server, 'POST', `/2.0/users/?login=rec-in-virtual&organization=${virtual}`), 400, 'Invalid arguments');
    });

    test('a cycle left in the stored tree by an older version: subtree listings answer 409 at once, and it can be repaired (security test finding 4)', { timeout: 20_000 }, async () => {
      const a = await create(server, 'organizations', { technicalName: 'cyc-a' });
      const b = await create(server, 'organizations', { technicalName: 'cyc-b', parentOrganizationId: a });
      const user = await create(server, 'users', { login: 'cyc-user', organization: b });
      const db = (server.gatehouse.store as SqlStore).database.db;
      await sql`update organizations set parent_id = ${b} where id = ${a}`.execute(db);
      for (const path of [`/2.0/organizations/${a}/users/?recursive=true`, `/2.0/users/?organization=${b}&recursive=true`]) {
        const answer = await call(server, 'GET', path);
        assertCleanError(answer, 409, 'Client error');
        assert.match(answer.json.error!.message, /^the organization tree below "cyc-[ab]" is deeper than 64 levels or has a cycle; repair the parent references in the store$/);
      }
      // Not a subtree walk: still answered.
      assert.deepEqual(await ids(server, `/2.0/organizations/${a}/users/`), []);
      // Moving anything into the cycle is refused; moving a member out to the root repairs it.
      const c = await create(server, 'organizations', { technicalName: 'cyc-c' });
      assertCleanError(await call(server, 'PUT', `/2.0/organizations/${c}?parentOrganizationId=${a}`), 400, 'Invalid arguments');
      assert.equal((await call(server, 'PUT', `/2.0/organizations/${a}?parentOrganizationId=`)).status, 200);
      assert.deepEqual(await ids(server, `/2.0/organizations/${a}/users/?recursive=true`), [user]);
    });

    test('XML: an organization is an <Organization> of <Attribute>s; the id collection is <Organizations> of <Id>', async () => {
      const id = await create(server, 'organizations', { technicalName: 'xml-org', note: 'a < b & "c"' });
      const entity = await call(server, 'GET', `/2.0/organizations/${id}`, { accept: 'application/xml' });
      assert.equal(entity.status, 200);
      assert.match(entity.headers.get('content-type') ?? '', /^application\/xml/);
      assert.match(entity.text, new RegExp(`^<\\?xml version="1.0" encoding="UTF-8"\\?><Organization xmlns="http://schema.ubisecure.com/customerid/api" inResponseTo="/customerid-rest/services/2.0/organizations/${id}" method="GET" type="organization"><Attribute name="id"><Value>${id}</Value></Attribute><Attribute name="technicalName"><Value>xml-org</Value></Attribute>`));
      assert.ok(entity.text.includes('<Attribute name="note"><Value>a &lt; b &amp; &quot;c&quot;</Value></Attribute>'), entity.text);
      const created = await call(server, 'POST', '/2.0/organizations/?technicalName=xml-org-2', { accept: 'text/xml' });
      assert.equal(created.status, 201);
      const [newId] = /<Id>([^<]+)<\/Id>/.exec(created.text)!.slice(1);
      assert.equal(created.text, `<?xml version="1.0" encoding="UTF-8"?><Organizations xmlns="http://schema.ubisecure.com/customerid/api" inResponseTo="/customerid-rest/services/2.0/organizations/" method="POST"><Id>${newId}</Id></Organizations>`);
    });
  });
}
