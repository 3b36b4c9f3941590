/**
 * Issue 11, item 4: an instance whose active signing key cannot be loaded at run time (the key row
 * changed under it and no longer decrypts with GATEHOUSE_KEY_ENCRYPTION_KEY, or it is gone) is not
 * ready: `/health/ready` answers 503 once the key cache has expired, and 200 again when the key
 * loads. Start-up with such a store is refused (test/http/key-sealing.test.ts).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { decryptPrivateKey, encryptPrivateKey } from '../../src/crypto/key-encryption.ts';
import { ManualClock } from '../../src/lib/clock.ts';
import type { SqlStore } from '../../src/storage/sql/store.ts';
import { DATABASES } from '../helpers/databases.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';

const KEK = 'a key-encryption key of forty characters!';
const OTHER_KEK = 'another key-encryption key, not the one used';
const KEY_CACHE_MS = 30_000;

for (const kind of DATABASES) {
  describe(`readiness and the active signing key on ${kind.name}`, () => {
    const clock = new ManualClock(Date.now());
    let server: RunningServer;
    before(async () => {
      server = await startServer(kind, { clock, allow503: true, env: { GATEHOUSE_KEY_ENCRYPTION_KEY: KEK } });
    });
    after(async () => server.close());

    const db = () => (server.gatehouse.store as SqlStore).database.db;
    const ready = async () => {
      const response = await fetch(`${server.url}/health/ready`);
      return { status: response.status, body: await response.json(), cacheControl: response.headers.get('cache-control') };
    };
    const ok = { status: 200, body: { status: 'ok' }, cacheControl: 'no-store' };
    const unavailable = { status: 503, body: { status: 'unavailable' }, cacheControl: 'no-store' };

    test('a key row that no longer decrypts makes the instance unready once the key cache expires; restored, it is ready again', async () => {
      assert.deepEqual(await ready(), ok);
      // The RS256 key (one key of each algorithm is stored; any of them failing to open fails the read).
      const { rows } = await sql<{ kid: string; private_jwk: string }>`select kid, private_jwk from signing_keys where alg = 'RS256'`.execute(db());
      assert.equal(rows.length, 1);
      const [row] = rows;
      // Another key-encryption key sealed it meanwhile (a second deployment with another secret).
      const resealed = encryptPrivateKey(decryptPrivateKey(row!.private_jwk, KEK), OTHER_KEK);
      await sql`update signing_keys set private_jwk = ${resealed} where kid = ${row!.kid}`.execute(db());
      assert.deepEqual(await ready(), ok, 'the key read before is trusted for the cache period');
      clock.advance(KEY_CACHE_MS + 1);
      assert.deepEqual(await ready(), unavailable);
      assert.deepEqual(await ready(), unavailable, 'a failed read is tried again, and fails again');
      await sql`update signing_keys set private_jwk = ${row!.private_jwk} where kid = ${row!.kid}`.execute(db());
      assert.deepEqual(await ready(), ok, 'ready again as soon as the key loads');
    });

    test('no signing key in the store: unready', async () => {
      clock.advance(KEY_CACHE_MS + 1);
      assert.deepEqual(await ready(), ok);
      const { rows } = await sql<Record<string, unknown>>`select * from signing_keys`.execute(db());
      await sql`delete from signing_keys`.execute(db());
      clock.advance(KEY_CACHE_MS + 1);
      assert.deepEqual(await ready(), unavailable);
      for (const row of rows) await db().insertInto('signing_keys').values(row as never).execute();
      assert.deepEqual(await ready(), ok, 'a read that found no key is not trusted for the cache period');
    });
  });
}
