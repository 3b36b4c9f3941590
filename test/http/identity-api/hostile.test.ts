/**
 * Hostile input at the identity API: every answer is a clean 4xx in the API's error shape —
 * never a 5xx, never a stack trace — and nothing is expanded, injected or stored by accident.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DATABASES } from '../../helpers/databases.ts';
import type { RunningServer } from '../../helpers/server.ts';
import { assertCleanError, call, create, ids, startApiServer } from './helpers.ts';

for (const db of DATABASES) {
  describe(`identity API hostile input on ${db.name}`, () => {
    let server: RunningServer;
    let plain: string;
    let percent: string;
    let underscore: string;
    before(async () => {
      server = await startApiServer(db);
      plain = await create(server, 'users', { login: 'hostile-plain', note: 'ordinary' });
      percent = await create(server, 'users', { login: 'hostile-100%', note: "it's 100%" });
      underscore = await create(server, 'users', { login: 'hostile_x', note: 'a_b' });
    });
    after(async () => server.close());

    test('SQL-like filter values match literally, as values', async () => {
      for (const value of ["' OR 1=1 --", "'; DROP TABLE users; --", '" OR ""="', ') OR (1=1', '\\', "hostile-plain' --"]) {
        for (const exact of ['true', 'false']) {
          assert.deepEqual(await ids(server, `/2.0/users/?login=${encodeURIComponent(value)}&exactMatch=${exact}`), [], `${value} ${exact}`);
          assert.deepEqual(await ids(server, `/2.0/users/?note=${encodeURIComponent(value)}&exactMatch=${exact}`), [], `note ${value}`);
          assert.deepEqual(await ids(server, `/2.0/organizations/?technicalName=${encodeURIComponent(value)}&exactMatch=${exact}`), []);
        }
      }
      assert.equal((await ids(server, '/2.0/users/?login=hostile')).length, 3, 'the table is intact');
      // The control: the same values stored as data are found, by exactly themselves, so the filters reached the query as values.
      const stored = "' OR 1=1 --";
      const id = await create(server, 'users', { login: 'hostile-stored-sql', note: stored });
      assert.deepEqual(await ids(server, `/2.0/users/?note=${encodeURIComponent(stored)}&exactMatch=true`), [id]);
      assert.deepEqual(await ids(server, `/2.0/users/?note=${encodeURIComponent("' OR")}`), [id]);
      assert.equal(await call(server, 'DELETE', `/2.0/users/${id}`).then((r) => r.status), 200);
    });

    test('% and _ are not wildcards: they match themselves', async () => {
      assert.deepEqual(await ids(server, '/2.0/users/?login=%25'), []);
      assert.deepEqual(await ids(server, '/2.0/users/?login=hostile-100%25'), [percent]);
      assert.deepEqual(await ids(server, '/2.0/users/?login=hostile_'), [underscore]);
      assert.deepEqual(await ids(server, '/2.0/users/?login=_'), []);
      assert.deepEqual(await ids(server, '/2.0/users/?note=it%27s%20100%25&exactMatch=true'), [percent]);
      assert.deepEqual(await ids(server, '/2.0/users/?note=a_'), [underscore]);
      assert.deepEqual(await ids(server, '/2.0/users/?note=a%25'), []);
      assert.ok(plain);
    });

    test('huge, negative or non-numeric maxResults is a 400, never a 5xx', async () => {
      for (const value of ['10001', '99999999999999999999999', '1e400', 'Infinity']) assertCleanError(await call(server, 'GET', `/2.0/users/?maxResults=${value}`), 400, 'Size limit exceeded');
      for (const value of ['-1', 'abc', '1.5', '']) assertCleanError(await call(server, 'GET', `/2.0/users/?maxResults=${encodeURIComponent(value)}`), 400, 'Invalid arguments');
      assertCleanError(await call(server, 'GET', '/2.0/users/?maxResults=1&maxResults=2'), 400, 'Invalid arguments');
      assertCleanError(await call(server, 'GET', '/2.0/users/?exactMatch=maybe'), 400, 'Invalid arguments');
    });

    test('unknown attributes: a well-formed name matches nothing; a malformed or reserved one is a 400', async () => {
      assert.deepEqual(await ids(server, '/2.0/users/?favouriteColour=blue'), []);
      for (const name of ['__proto__', 'constructor[x]', 'a b', '1abc', 'x'.repeat(65), 'cn', 'entityName', 'é']) {
        assertCleanError(await call(server, 'GET', `/2.0/users/?${encodeURIComponent(name)}=1`), 400, 'Invalid arguments');
      }
      assertCleanError(await call(server, 'GET', '/2.0/organizations/?virtual=true'), 400, 'Invalid arguments');
      assertCleanError(await call(server, 'GET', '/2.0/users/?login=a&login=b'), 400, 'Invalid arguments');
      assertCleanError(await call(server, 'POST', '/2.0/users/?login=weird-attr&__proto__=x'), 400, 'Invalid arguments');
      assertCleanError(await call(server, 'POST', '/2.0/users/', { contentType: 'application/json', body: '{"attributes":{"login":["x"],"__proto__":{"polluted":["yes"]}}}' }), 400, 'Invalid arguments');
      assertCleanError(await call(server, 'POST', '/2.0/users/', { contentType: 'application/json', body: '{"login":"flat-body"}' }), 400, 'Invalid arguments');
      assertCleanError(await call(server, 'POST', '/2.0/users/', { contentType: 'application/json', body: '{"attributes":{"login":{"$ne":1}}}' }), 400, 'Invalid arguments');
      assert.equal(({} as Record<string, unknown>).polluted, undefined);
    });

    test('malformed UUIDs in the path are 400; well-formed unknown ones 404', async () => {
      for (const id of ['not-a-uuid', '1', "1' OR '1'='1", '00000000-0000-0000-0000-00000000000g', 'urn:uuid:00000000-0000-4000-8000-000000000000', '..%2F..%2Fetc%2Fpasswd']) {
        assertCleanError(await call(server, 'GET', `/2.0/users/${encodeURIComponent(id)}`), 400, 'Invalid arguments');
        assertCleanError(await call(server, 'GET', `/2.1/organizations/${encodeURIComponent(id)}`), 400, 'Invalid arguments');
        assertCleanError(await call(server, 'PUT', `/2.0/users/${encodeURIComponent(id)}?x=1`), 400, 'Invalid arguments');
        assertCleanError(await call(server, 'DELETE', `/2.0/organizations/${encodeURIComponent(id)}`), 400, 'Invalid arguments');
        assertCleanError(await call(server, 'GET', `/org/${encodeURIComponent(id)}`, { base: '/eidm2/services', accept: 'application/json' }), 400, 'Invalid arguments');
      }
      assertCleanError(await call(server, 'GET', '/2.0/users/00000000-0000-4000-8000-000000000000'), 404, 'Entity not found');
      assert.equal((await call(server, 'GET', `/2.0/users/${plain.toUpperCase()}`)).status, 200, 'ids compare case-insensitively');
    });

    test('XML with a DOCTYPE or entities is a 400 and nothing is expanded', async () => {
      const laughs = '<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">]><User><Attribute name="login"><Value>&lol2;</Value></Attribute></User>';
      const xxe = '<?xml version="1.0"?><!DOCTYPE u [<!ENTITY xxe SYSTEM "file:///etc/passwd">]><User><Attribute name="login"><Value>&xxe;</Value></Attribute></User>';
      const undeclared = '<User><Attribute name="login"><Value>&xxe;</Value></Attribute></User>';
      const parameterEntity = '<!DOCTYPE u [<!ENTITY % p SYSTEM "http://127.0.0.1:1/x"> %p;]><User/>';
      for (const body of [laughs, xxe, undeclared, parameterEntity, '<User><Attribute name="login"><Value>x</Value></User>', '<User>', 'not xml', '<a/><b/>', '<User><Attribute name="login"><Value><b>x</b></Value></Attribute></User>', '<User><Attribute name="login"><Value>a&#0;b</Value></Attribute></User>']) {
        const response = await call(server, 'POST', '/2.0/users/', { contentType: 'application/xml', body });
        assertCleanError(response, 400, 'Invalid arguments');
        assert.ok(!response.text.includes('root:') && !response.text.includes('lollol'), 'nothing expanded');
      }
      assert.deepEqual(await ids(server, '/2.0/users/?login=lol'), []);
      assertCleanError(await call(server, 'POST', '/2.0/users/', { contentType: 'application/xml', body: '<Organization><Attribute name="login"><Value>wrong-root</Value></Attribute></Organization>' }), 400, 'Invalid arguments');
    });

    test('NUL bytes anywhere are a 400', async () => {
      assertCleanError(await call(server, 'GET', '/2.0/users/?login=a%00b'), 400, 'Invalid arguments');
      assertCleanError(await call(server, 'GET', '/2.0/users/?lo%00gin=a'), 400, 'Invalid arguments');
      assertCleanError(await call(server, 'POST', '/2.0/users/?login=nul%00user'), 400, 'Invalid arguments');
      assertCleanError(await call(server, 'POST', '/2.0/users/', { contentType: 'application/json', body: JSON.stringify({ attributes: { login: ['nul\u0000user'] } }) }), 400, 'Invalid arguments');
      assertCleanError(await call(server, 'POST', '/2.0/users/', { contentType: 'application/json', body: JSON.stringify({ attributes: { ['no\u0000te']: ['x'], login: ['nul-name'] } }) }), 400, 'Invalid arguments');
      assertCleanError(await call(server, 'PUT', `/2.0/users/${plain}/groups/Sta%00ff`), 400, 'Invalid arguments');
      assertCleanError(await call(server, 'GET', `/2.0/users/${plain}%00`), 400, 'Invalid arguments');
      assert.deepEqual(await ids(server, '/2.0/users/?login=nul'), []);
    });

    test('other control characters, over-long values and oversized bodies are refused', async () => {
      assertCleanError(await call(server, 'POST', '/2.0/users/?login=bell%07user'), 400, 'Invalid arguments');
      assertCleanError(await call(server, 'POST', `/2.0/users/?login=${'x'.repeat(256)}`), 400, 'Invalid arguments');
      const huge = JSON.stringify({ attributes: { login: ['big'], blob: ['x'.repeat(70 * 1024)] } });
      assertCleanError(await call(server, 'POST', '/2.0/users/', { contentType: 'application/json', body: huge }), 413, 'Size limit exceeded');
      const hugeXml = `<User><Attribute name="blob"><Value>${'x'.repeat(70 * 1024)}</Value></Attribute></User>`;
      assertCleanError(await call(server, 'POST', '/2.0/users/', { contentType: 'application/xml', body: hugeXml }), 413, 'Size limit exceeded');
      const manyValues = JSON.stringify({ attributes: { login: ['many'], tag: Array.from({ length: 101 }, (_, i) => `t${i}`) } });
      assertCleanError(await call(server, 'POST', '/2.0/users/', { contentType: 'application/json', body: manyValues }), 400, 'Invalid arguments');
      assertCleanError(await call(server, 'POST', '/2.0/users/', { contentType: 'application/json', body: '{"attributes":' }), 400, 'Invalid arguments');
      assertCleanError(await call(server, 'POST', '/2.0/users/', { contentType: 'text/plain', body: 'login=x' }), 415, 'Invalid arguments');
    });

    test('unknown paths are 404 and unknown methods 405 with Allow, in the API’s error shape', async () => {
      assertCleanError(await call(server, 'GET', '/2.0/roles/'), 404, 'Entity not found');
      assertCleanError(await call(server, 'GET', '/3.0/users/'), 404, 'Entity not found');
      const patch = await call(server, 'PATCH', `/2.0/users/${plain}`);
      assertCleanError(patch, 405, 'Method not allowed');
      assert.equal(patch.headers.get('allow'), 'GET, PUT, DELETE, HEAD');
      assertCleanError(await call(server, 'DELETE', '/2.0/users/'), 405, 'Method not allowed');
      assertCleanError(await call(server, 'POST', '/users/', { base: '/eidm2/services', accept: 'application/json' }), 405, 'Method not allowed');
    });
  });
}
