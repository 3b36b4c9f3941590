/**
 * Security test finding 11: setting GATEHOUSE_KEY_ENCRYPTION_KEY on a store that ran without it
 * left the private keys already there in the clear. Now every start with the key seals them (each
 * key once, however many instances start at once), the server goes on signing with the same kid,
 * and a store whose sealed keys do not open with the configured key stops start-up with one clear
 * message instead of failing every signature later.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { sql } from 'kysely';
import { SIGNING_ALGS } from '../../src/protocol/constants.ts';
import { decryptPrivateKey } from '../../src/crypto/key-encryption.ts';
import type { SqlStore } from '../../src/storage/sql/store.ts';
import { addClient, addUser, basic, mintCode, postForm } from '../helpers/back-channel.ts';
import { DATABASES, type TestDatabase } from '../helpers/databases.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';

const KEK = 'a key-encryption key of forty characters!';
const WRONG_KEK = 'another key-encryption key, not the one used';

interface KeyRow {
  kid: string;
  private_jwk: string;
  encrypted: number;
}

async function keyRows(server: RunningServer): Promise<KeyRow[]> {
  const { rows } = await sql<KeyRow>`select kid, private_jwk, encrypted from signing_keys order by kid`.execute((server.gatehouse.store as SqlStore).database.db);
  return rows.map((r) => ({ ...r, encrypted: Number(r.encrypted) }));
}

/** An ID token from the token endpoint, verified against the JWKS the server publishes; its kid. */
async function signedKid(server: RunningServer): Promise<string> {
  const store = server.gatehouse.store;
  const { client, secret } = await addClient(store);
  const { code } = await mintCode(store, client, await addUser(store));
  const tokens = await postForm(`${server.url}/uas/oauth2/token`, { grant_type: 'authorization_code', code, redirect_uri: client.redirectUris[0]! }, { authorization: basic(client.clientId, secret) });
  assert.equal(tokens.status, 200, JSON.stringify(tokens.body));
  const idToken = tokens.body.id_token as string;
  const jwks = await (await fetch(`${server.url}/uas/oauth2/metadata.jwks`)).json();
  await jwtVerify(idToken, createLocalJWKSet(jwks as Parameters<typeof createLocalJWKSet>[0]), { issuer: server.issuer, audience: client.clientId });
  return decodeProtectedHeader(idToken).kid!;
}

for (const kind of DATABASES) {
  describe(`sealing the signing keys of an existing store on ${kind.name}`, () => {
    let database: TestDatabase;
    before(async () => {
      database = await kind.create();
    });
    after(async () => database.drop());

    test('a start with GATEHOUSE_KEY_ENCRYPTION_KEY seals every clear key, retired ones too; the same kid goes on signing', async () => {
      // Without a key-encryption key: the first key of each algorithm, and a rotation, are stored in the clear.
      const clear = await startServer(kind, { database });
      const kid = await signedKid(clear);
      await clear.gatehouse.deps.keyRing.rotate();
      const before = await keyRows(clear);
      await clear.close();
      assert.equal(before.length, SIGNING_ALGS.length + 1);
      assert.deepEqual(before.map((r) => r.encrypted), before.map(() => 0));
      assert.ok(before.every((r) => r.private_jwk.includes('"d"')), 'in the clear before');

      // Several instances start with the key: every key is sealed, once. On PostgreSQL they start at
      // once; SQLite instances are processes, and in one process they would block each other's
      // thread on the file lock (migrations), so there they start one after the other.
      const start = () => startServer(kind, { database, env: { GATEHOUSE_KEY_ENCRYPTION_KEY: KEK } });
      const started = kind.name === 'postgres' ? await Promise.allSettled([start(), start(), start()]) : [await start(), await start()].map((value) => ({ status: 'fulfilled' as const, value }));
      const sealed = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
      try {
        assert.equal(sealed.length, started.length, 'every instance starts');
        const after = await keyRows(sealed[0]!);
        assert.deepEqual(after.map((r) => [r.kid, r.encrypted]), before.map((r) => [r.kid, 1]));
        for (const [i, row] of after.entries()) {
          assert.match(row.private_jwk, /^v1\.[\w-]+\.[\w-]+\.[\w-]+$/);
          assert.equal(decryptPrivateKey(row.private_jwk, KEK), before[i]!.private_jwk, 'the same private key, sealed');
        }
        // The new key only publishes for now (its activation delay); the first one signs, on every instance.
        for (const server of sealed) assert.equal(await signedKid(server), kid);
      } finally {
        await Promise.all(sealed.map((s) => s.close()));
      }
    });

    test('a wrong key-encryption key, or none, stops start-up with a clear message', async () => {
      await assert.rejects(startServer(kind, { database, env: { GATEHOUSE_KEY_ENCRYPTION_KEY: WRONG_KEK } }), (error: Error) => {
        assert.equal(error.name, 'KeyEncryptionError');
        assert.match(error.message, /^signing key [\w-]{43} cannot be decrypted with GATEHOUSE_KEY_ENCRYPTION_KEY: it is not the key-encryption key the signing keys were sealed with$/);
        return true;
      });
      await assert.rejects(startServer(kind, { database }), (error: Error) => {
        assert.equal(error.name, 'KeyEncryptionError');
        assert.match(error.message, /^the signing keys in the store are sealed \(kid [\w-]{43}\): set GATEHOUSE_KEY_ENCRYPTION_KEY to the key-encryption key they were sealed with$/);
        return true;
      });
      // The right one still starts.
      const server = await startServer(kind, { database, env: { GATEHOUSE_KEY_ENCRYPTION_KEY: KEK } });
      await server.close();
    });
  });
}
