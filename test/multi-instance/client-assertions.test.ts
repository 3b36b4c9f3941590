/**
 * A client assertion's jti is used once across every instance (RFC 7523 §3 item 7): the same
 * assertion sent to several gatehouse processes on one store at once is accepted exactly once.
 * Three processes on one PostgreSQL schema, two on one SQLite file, as behind a load balancer.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { openSqlStore, type SqlStore } from '../../src/storage/sql/store.ts';
import { postForm } from '../helpers/back-channel.ts';
import { addKeyClient, assertionFields, keyAssertion, signingKey, type SigningKey } from '../helpers/client-assertions.ts';
import { DATABASES, type TestDatabase } from '../helpers/databases.ts';
import { freePort } from '../helpers/server.ts';
import { startGatehouse, type GatehouseProcess } from '../faults/processes.ts';

const RACERS = 30;
const TRIALS = 5;

for (const kind of DATABASES) {
  const count = kind.name === 'postgres' ? 3 : 2;

  describe(`one client assertion raced over ${count} instances on one ${kind.name} store`, () => {
    let database: TestDatabase;
    let store: SqlStore;
    let instances: GatehouseProcess[] = [];
    let issuer: string;
    let key: SigningKey;
    let clientId: string;

    before(async () => {
      database = await kind.create();
      store = await openSqlStore(database.url);
      key = await signingKey('ES256');
      clientId = (await addKeyClient(store, { keys: [key] })).clientId;
      const ports = await Promise.all(Array.from({ length: count }, () => freePort()));
      issuer = `http://127.0.0.1:${ports[0]}/uas`;
      instances = await Promise.all(ports.map((port) => startGatehouse({ databaseUrl: database.url, port, env: { GATEHOUSE_ISSUER: issuer, GATEHOUSE_THROTTLE: 'false' } })));
    });

    after(async () => {
      await Promise.all(instances.map((instance) => instance.kill()));
      await store?.close();
      await database?.drop();
    });

    test(`${TRIALS} trials of ${RACERS} copies of one assertion spread over the instances: exactly one 200 each (JW-04)`, async () => {
      for (let trial = 0; trial < TRIALS; trial++) {
        // aud: the issuer, which every instance shares.
        const assertion = await keyAssertion(key, clientId, issuer);
        const statuses = await Promise.all(
          Array.from({ length: RACERS }, (_, i) => postForm(`${instances[i % instances.length]!.url}/uas/oauth2/revocation`, { token: 'not-a-token', ...assertionFields(assertion) }).then((response) => response.status)),
        );
        assert.deepEqual(statuses.sort(), [200, ...Array<number>(RACERS - 1).fill(401)], `trial ${trial}`);
      }
    });
  });
}
