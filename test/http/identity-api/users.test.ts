/**
 * Users over the identity API: create, read, update, delete, group membership, and listing a
 * thousand users with maxResults and prefix/exact filters.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import type { User } from '../../../src/domain/user.ts';
import { createGroup } from '../../../src/identity/groups.ts';
import { verifyPassword } from '../../../src/identity/passwords.ts';
import { systemClock } from '../../../src/lib/clock.ts';
import { cryptoRandom } from '../../../src/lib/random.ts';
import type { SqlStore } from '../../../src/storage/sql/store.ts';
import { DATABASES } from '../../helpers/databases.ts';
import type { RunningServer } from '../../helpers/server.ts';
import { accessToken, assertCleanError, call, create, ids, startApiServer } from './helpers.ts';
import { AS_OPERATOR } from '../../helpers/authority.ts';

type Entity = { id: string; type: string; attributes: Record<string, string[]> };

for (const db of DATABASES) {
  describe(`identity API users on ${db.name}`, () => {
    let server: RunningServer & { apiClientId: string };
    before(async () => {
      server = await startApiServer(db);
      const deps = { ...server.gatehouse.store, clock: systemClock, random: cryptoRandom };
      await createGroup(deps, { name: 'Identity API Users' }, AS_OPERATOR);
      await createGroup(deps, { name: 'Staff' }, AS_OPERATOR);
    });
    after(async () => server.close());

    const read = async (id: string) => {
      const response = await call(server, 'GET', `/2.0/users/${id}`);
      assert.equal(response.status, 200, response.text);
      return response.json as unknown as Entity;
    };

    test('POST creates a user from a JSON body; GET answers the product’s attribute names', async () => {
      const organization = await create(server, 'organizations', { technicalName: 'users-org' });
      const response = await call(server, 'POST', '/2.0/users/', {
        contentType: 'application/json',
        body: JSON.stringify({ type: 'user', attributes: { login: 'ada', password: 'analytical-engine', firstname: 'Ada', surname: 'Lovelace', email: 'ada@example.com', organization, mobile: ['+358 1', '+358 2'] } }),
      });
      assert.equal(response.status, 201, response.text);
      const [id] = response.json.users as string[];
      assert.equal(response.headers.get('location'), `/customerid-rest/services/2.0/users/${id}`);
      const entity = await read(id!);
      assert.deepEqual(entity, {
        id,
        type: 'user',
        attributes: { firstname: ['Ada'], surname: ['Lovelace'], cn: ['Ada Lovelace'], login: ['ada'], email: ['ada@example.com'], emailVerified: ['false'], organization: [organization], status: ['enabled'], mobile: ['+358 1', '+358 2'] },
      });
      const { passwordHash } = (await server.gatehouse.store.users.getCredentials('ada'))!;
      assert.equal(await verifyPassword(passwordHash, 'analytical-engine'), true, 'the password is stored as a hash and works');
      assert.ok(!JSON.stringify(entity).includes('analytical'), 'a password is never shown');
      assertCleanError(await call(server, 'POST', '/2.0/users/?login=ADA'), 409, 'Already exists');
      assertCleanError(await call(server, 'POST', '/2.0/users/?firstname=NoLogin'), 400, 'Invalid arguments');
      assertCleanError(await call(server, 'POST', '/2.0/users/?login=x&cn=y'), 400, 'Invalid arguments');
    });

    test('emailVerified: false until the same act says true; any change of email clears it unless that change says true; never true without an email (docs/email-verification.md)', async () => {
      const id = await create(server, 'users', { login: 'verified-user', email: 'v@example.com', emailVerified: 'true' });
      const verified = async () => (await read(id)).attributes.emailVerified;
      assert.deepEqual(await verified(), ['true'], 'an explicit create');
      assert.equal((await call(server, 'PUT', `/2.0/users/${id}?firstname=Vera`)).status, 200);
      assert.deepEqual(await verified(), ['true'], 'another field changed: kept');
      assert.equal((await call(server, 'PUT', `/2.0/users/${id}?email=w@example.com`)).status, 200);
      assert.deepEqual(await verified(), ['false'], 'a changed address is unverified');
      assert.equal((await call(server, 'PUT', `/2.0/users/${id}?email=x@example.com&emailVerified=true`)).status, 200);
      assert.deepEqual(await verified(), ['true'], 'a change that says so');
      assert.equal((await call(server, 'PUT', `/2.0/users/${id}?emailVerified=false`)).status, 200);
      assert.deepEqual(await verified(), ['false']);
      assertCleanError(await call(server, 'PUT', `/2.0/users/${id}?emailVerified=maybe`), 400, 'Invalid arguments');
      assertCleanError(await call(server, 'PUT', `/2.0/users/${id}?email=&emailVerified=true`), 400, 'Invalid arguments');
      // A listing filter like every attribute shown: exactly the flag, never a prefix, and only true or false.
      const other = await create(server, 'users', { login: 'verified-other', email: 'vo@example.com', emailVerified: 'true' });
      assert.deepEqual(await ids(server, '/2.0/users/?login=verified-&emailVerified=true&exactMatch=false'), [other]);
      assert.deepEqual(await ids(server, '/2.0/users/?login=verified-&emailVerified=false&exactMatch=false'), [id]);
      assertCleanError(await call(server, 'GET', '/2.0/users/?emailVerified=t'), 400, 'Invalid arguments');
      assert.equal((await call(server, 'PUT', `/2.0/users/${id}?email=`)).status, 200);
      assert.equal((await read(id)).attributes.emailVerified, undefined, 'no address: not shown');
    });

    test('a user can be created from query parameters or an XML <User>, and read as XML', async () => {
      const viaQuery = await call(server, 'POST', '/2.1/users/?login=grace&firstname=Grace&status=2');
      assert.equal(viaQuery.status, 201, viaQuery.text);
      const graceId = (viaQuery.json.users as string[])[0]!;
      assert.deepEqual((await read(graceId)).attributes.status, ['disabled'], 'status takes CustomerID codes');
      const viaXml = await call(server, 'POST', '/2.1/users/', {
        contentType: 'application/xml; charset=utf-8',
        accept: 'application/xml',
        body: '<User xmlns="http://schema.ubisecure.com/customerid/api"><Attribute name="login"><Value>hopper</Value></Attribute><Attribute name="password"><Value>c0b0l-rules!</Value></Attribute></User>',
      });
      assert.equal(viaXml.status, 201, viaXml.text);
      const hopperId = /<Users [^>]*method="POST"><Id>([0-9a-f-]{36})<\/Id><\/Users>$/.exec(viaXml.text)![1]!;
      const xml = await call(server, 'GET', `/2.1/users/${hopperId}`, { accept: 'application/xml' });
      assert.equal(
        xml.text,
        `<?xml version="1.0" encoding="UTF-8"?><User xmlns="http://schema.ubisecure.com/customerid/api" inResponseTo="/customerid-rest/services/2.1/users/${hopperId}" method="GET" type="user"><Attribute name="id"><Value>${hopperId}</Value></Attribute><Attribute name="login"><Value>hopper</Value></Attribute><Attribute name="status"><Value>enabled</Value></Attribute></User>`,
      );
    });

    test('PUT: given attributes replace, an empty value clears, omitted ones stay; a disabled user loses their tokens', async () => {
      const id = await create(server, 'users', { login: 'put-user', firstname: 'Put', surname: 'User', email: 'put@example.com', team: 'a' });
      const response = await call(server, 'PUT', `/2.0/users/${id}?surname=&team=b&email=new@example.com`);
      assert.equal(response.status, 200, response.text);
      assert.deepEqual(response.json, { users: [id] });
      const entity = await read(id);
      assert.equal(entity.attributes.surname, undefined);
      assert.deepEqual(entity.attributes.team, ['b']);
      assert.deepEqual(entity.attributes.email, ['new@example.com']);
      assert.deepEqual(entity.attributes.firstname, ['Put']);
      assert.deepEqual(entity.attributes.cn, ['Put']);
      assertCleanError(await call(server, 'PUT', `/2.0/users/${id}?login=`), 400, 'Invalid arguments');
      assertCleanError(await call(server, 'PUT', `/2.0/users/${id}?email=not-an-email`), 400, 'Invalid arguments');
      assertCleanError(await call(server, 'PUT', `/2.0/users/${id}?status=7`), 400, 'Invalid arguments');
      assertCleanError(await call(server, 'PUT', `/2.0/users/${id}`, { contentType: 'application/json', body: JSON.stringify({ id: randomUUID(), attributes: {} }) }), 400, 'Invalid arguments');
      assertCleanError(await call(server, 'PUT', `/2.0/users/${randomUUID()}?team=c`), 404, 'Entity not found');

      const member = (await server.gatehouse.store.users.get(id)) as User;
      const { token } = await accessToken(server, 'openid profile', member);
      const userinfo = () => fetch(`${server.url}/uas/oauth2/userinfo`, { headers: { authorization: `Bearer ${token}` } });
      assert.equal((await userinfo()).status, 200);
      assert.equal((await call(server, 'PUT', `/2.0/users/${id}`, { contentType: 'application/json', body: JSON.stringify({ attributes: { status: ['disabled'] } }) })).status, 200);
      assert.equal((await userinfo()).status, 401, 'disabling ends access, as setStatus does');
      const changed = await call(server, 'PUT', `/2.0/users/${id}`, { contentType: 'application/json', body: JSON.stringify({ attributes: { password: ['a-new-password'] } }) });
      assert.equal(changed.status, 200);
      assert.equal(await verifyPassword((await server.gatehouse.store.users.getCredentials('put-user'))!.passwordHash, 'a-new-password'), true);
    });

    test('DELETE removes the user for good', async () => {
      const id = await create(server, 'users', { login: 'delete-me' });
      const response = await call(server, 'DELETE', `/2.0/users/${id}`);
      assert.equal(response.status, 200);
      assert.deepEqual(response.json, { users: [id] });
      assertCleanError(await call(server, 'GET', `/2.0/users/${id}`), 404, 'Entity not found');
      assertCleanError(await call(server, 'DELETE', `/2.0/users/${id}`), 404, 'Entity not found');
    });

    test('group membership: GET users/{id}/groups/, PUT and DELETE users/{id}/groups/{name}', async () => {
      const id = await create(server, 'users', { login: 'grouped' });
      assert.deepEqual(await ids(server, `/2.0/users/${id}/groups/`), []);
      const added = await call(server, 'PUT', `/2.0/users/${id}/groups/Identity%20API%20Users`);
      assert.equal(added.status, 201, added.text);
      assert.deepEqual(added.json, { groups: ['Identity API Users'] });
      assert.equal((await call(server, 'PUT', `/2.0/users/${id}/groups/identity%20api%20users`)).status, 200, 'again: nothing changes, names compare case-insensitively');
      assert.equal((await call(server, 'PUT', `/2.1/users/${id}/groups/Staff`)).status, 201);
      assert.deepEqual(await ids(server, `/2.0/users/${id}/groups/`), ['Identity API Users', 'Staff']);
      const xml = await call(server, 'GET', `/2.0/users/${id}/groups/`, { accept: 'application/xml' });
      assert.match(xml.text, /<Groups xmlns="http:\/\/schema.ubisecure.com\/customerid\/api" inResponseTo="[^"]+" method="GET"><Id>Identity API Users<\/Id><Id>Staff<\/Id><\/Groups>$/);
      assertCleanError(await call(server, 'PUT', `/2.0/users/${id}/groups/No%20Such%20Group`), 404, 'Entity not found');
      assertCleanError(await call(server, 'POST', `/2.0/users/${id}/groups/Staff`), 405, 'Method not allowed');

      // The membership is what the bearer method checks.
      const { token } = await accessToken(server, `openid ${server.apiClientId}`, (await server.gatehouse.store.users.get(id))!);
      assert.equal((await call(server, 'GET', '/2.0/users/', { authorization: `Bearer ${token}` })).status, 200);
      const removed = await call(server, 'DELETE', `/2.0/users/${id}/groups/Identity%20API%20Users`);
      assert.equal(removed.status, 200);
      assert.deepEqual(removed.json, { groups: ['Identity API Users'] });
      assertCleanError(await call(server, 'DELETE', `/2.0/users/${id}/groups/Identity%20API%20Users`), 404, 'Entity not found');
      assertCleanError(await call(server, 'GET', '/2.0/users/', { authorization: `Bearer ${token}` }), 403, 'Unauthorized');
      assertCleanError(await call(server, 'GET', `/2.0/users/${randomUUID()}/groups/`), 404, 'Entity not found');
    });

    test('a thousand users: maxResults caps, filters match by prefix or exactly, status by code', async () => {
      const store = server.gatehouse.store;
      const organization = await create(server, 'organizations', { technicalName: 'thousand' });
      const now = Date.now();
      const made: User[] = Array.from({ length: 1000 }, (_, i) => ({
        id: randomUUID(),
        username: `bulk-${String(i).padStart(4, '0')}`,
        status: i % 10 === 0 ? 'disabled' : 'enabled',
        givenName: i % 2 === 0 ? 'Even' : 'Odd',
        familyName: undefined,
        email: `bulk${i}@example.com`,
        emailVerified: false,
        organizationId: organization,
        attributes: { shard: [`s${i % 7}`] },
        createdAt: now,
        updatedAt: now,
      }));
      for (let i = 0; i < made.length; i += 100) await Promise.all(made.slice(i, i + 100).map((user) => store.users.insert(user, undefined)));

      assert.equal((await ids(server, '/2.0/users/?login=bulk-')).length, 1000);
      assert.equal((await ids(server, '/2.0/users/?login=bulk-&maxResults=0')).length, 1000, '0 means all');
      const capped = await ids(server, '/2.0/users/?login=bulk-&maxResults=25');
      assert.equal(capped.length, 25);
      assert.deepEqual(capped, made.slice(0, 25).map((u) => u.id), 'ordered by username');
      assert.equal((await ids(server, '/2.0/users/?login=bulk-01')).length, 100, 'prefix: bulk-0100 … bulk-0199');
      assert.deepEqual(await ids(server, '/2.0/users/?login=bulk-0123&exactMatch=true'), [made[123]!.id]);
      assert.deepEqual(await ids(server, '/2.0/users/?login=bulk-012&exactMatch=true'), [], 'exact: no prefix');
      assert.deepEqual(await ids(server, '/2.0/users/?email=BULK77@EXAMPLE.COM&exactMatch=false'), [made[77]!.id]);
      assert.equal((await ids(server, '/2.0/users/?login=bulk-&status=2')).length, 100, 'status 2 = disabled');
      assert.equal((await ids(server, '/2.0/users/?login=bulk-&status=disabled')).length, 100);
      assert.equal((await ids(server, '/2.0/users/?login=bulk-&firstname=Even&shard=s3')).length, (made.filter((u, i) => i % 2 === 0 && i % 7 === 3)).length, 'several filters all apply');
      assert.equal((await ids(server, `/2.0/organizations/${organization}/users/?maxResults=10`)).length, 10);
      const legacy = await call(server, 'GET', '/users/?login=bulk-&maxResults=3', { base: '/eidm2/services' });
      assert.equal(legacy.status, 200);
      assert.equal(legacy.text, `<?xml version="1.0" encoding="UTF-8"?><idlist>${made.slice(0, 3).map((u) => `<Id>${u.id}</Id>`).join('')}</idlist>`);
    });
  });

  describe(`identity API listing limits on ${db.name}`, () => {
    let server: RunningServer;
    before(async () => {
      server = await startApiServer(db, { GATEHOUSE_API_MAX_RESULTS: '5' });
      for (let i = 0; i < 6; i++) await create(server, 'users', { login: `limit-${i}` });
    });
    after(async () => server.close());

    test('a listing over GATEHOUSE_API_MAX_RESULTS is "Size limit exceeded" unless maxResults narrows it', async () => {
      assertCleanError(await call(server, 'GET', '/2.0/users/'), 400, 'Size limit exceeded');
      assertCleanError(await call(server, 'GET', '/2.0/users/?maxResults=6'), 400, 'Size limit exceeded');
      assert.equal((await ids(server, '/2.0/users/?maxResults=5')).length, 5);
      assert.equal((await ids(server, '/2.0/users/?login=limit-1')).length, 1);
    });

    test('listings answer ids read from the users or organizations table alone, never attributes (security test finding 10)', async () => {
      const organization = await create(server, 'organizations', { technicalName: 'bare-org' });
      const child = await create(server, 'organizations', { technicalName: 'bare-child', parentOrganizationId: organization });
      // The most one attribute may hold: 100 values of 255 characters.
      const large = Array.from({ length: 100 }, (_, i) => String(i).padEnd(255, 'x'));
      const made = [await create(server, 'users', { login: 'bare-b', organization, notes: large }), await create(server, 'users', { login: 'bare-a', organization: child, notes: large })];
      // Take the attribute table away: a listing that loaded attributes would fail (a 500).
      const db = (server.gatehouse.store as SqlStore).database.db;
      await sql`alter table user_attributes rename to user_attributes_elsewhere`.execute(db);
      assert.deepEqual(await ids(server, '/2.0/users/?login=bare-'), [made[1], made[0]]);
      assert.deepEqual(await ids(server, `/2.1/organizations/${organization}/users/?recursive=true`), [made[1], made[0]]);
      assert.deepEqual(await ids(server, `/2.0/users/?organization=${organization}&recursive=true&maxResults=1`), [made[1]]);
      const legacy = await call(server, 'GET', '/users/?login=bare-', { base: '/eidm2/services' });
      assert.equal(legacy.text, `<?xml version="1.0" encoding="UTF-8"?><idlist><Id>${made[1]}</Id><Id>${made[0]}</Id></idlist>`);
      // Organization listings likewise (reading one organization, as organizations/{id}/users/ does, reads its attributes).
      await sql`alter table organization_attributes rename to organization_attributes_elsewhere`.execute(db);
      assert.deepEqual(await ids(server, '/2.0/organizations/?technicalName=bare-'), [child, organization]);
      assert.deepEqual(await ids(server, `/2.0/organizations/?parentOrganizationId=${organization}`), [child]);
    });
  });
}
