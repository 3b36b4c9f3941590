import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { after, describe, test } from 'node:test';
import { sql, type Kysely } from 'kysely';
import { migrations } from '../../src/storage/migrations/index.ts';
import { migrateToLatest, migrateUpTo, openDatabase } from '../../src/storage/sql/database.ts';
import { openSqlStore } from '../../src/storage/sql/store.ts';
import { DATABASES, type TestDatabase } from '../helpers/databases.ts';
import { aClient, aClientToken, aGroup, aHash, aStoredUser, aToken, T0 } from '../helpers/store.ts';

const ALL = Object.keys(migrations);
const STORE_MODULE = new URL('../../src/storage/sql/store.ts', import.meta.url).href;

/** The migrations the database has recorded as run, in order. */
async function recorded(url: string): Promise<string[]> {
  const database = openDatabase(url);
  try {
    const { rows } = await sql<{ name: string }>`select name from gatehouse_migrations order by name`.execute(database.db);
    return rows.map((r) => r.name);
  } finally {
    await database.close();
  }
}

/**
 * A separate process that loads the store, says `ready`, waits for a line on stdin, then opens the
 * store (running migrations) and prints `ok` or the error. Several of them released at once start
 * migrating within a millisecond of one another: servers starting together on a fresh database.
 */
function migratingProcess(url: string) {
  const code = `
    const { openSqlStore } = await import(process.env.STORE_MODULE);
    process.stdout.write('ready\\n');
    process.stdin.once('data', async () => {
      try {
        const store = await openSqlStore(process.env.DATABASE_URL);
        await store.close();
        process.stdout.write('ok\\n');
      } catch (error) {
        process.stdout.write('failed: ' + error.message + '\\n');
      }
      process.stdin.destroy();
    });
  `;
  // Without the test runner's context, so the child is a plain process and not a test file.
  const { NODE_TEST_CONTEXT: _context, ...env } = process.env;
  const child = spawn(process.execPath, ['--input-type=module', '--eval', code], {
    env: { ...env, STORE_MODULE, DATABASE_URL: url },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  let output = '';
  let signalReady: () => void;
  const readied = new Promise<void>((resolve) => (signalReady = resolve));
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    output += chunk;
    if (output.includes('ready\n')) signalReady();
  });
  const exited = once(child, 'exit');
  return {
    /** Resolves when the child waits for the signal; rejects if it died before. */
    ready: () =>
      Promise.race([
        readied,
        exited.then(() => {
          throw new Error(`the migrating process exited before it was ready: ${output}`);
        }),
      ]),
    go: () => child.stdin.write('go\n'),
    async result() {
      await exited;
      return output.replace('ready\n', '').trim();
    },
  };
}

/** A `clients` row as the schema before 018 holds it: a confidential client without grants, unless overridden. */
function clientRow(clientId: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    client_id: clientId, name: clientId, secret_hash: aHash(), secret_sealed: null, active: 1, redirect_uris: '[]', token_endpoint_auth_method: null,
    grant_types: '[]', code_challenge_method: null, scope: null, refresh_tokens: 0, rotate_refresh_tokens: 1, access_token_ttl: null,
    post_logout_redirect_uris: '[]', id_token_signed_response_alg: null, userinfo_signed_response_alg: null, metadata: '{}', created_at: T0, updated_at: T0,
    ...overrides,
  };
}

/** Stores `rows` in a schema migrated up to `migration`, then opens the store (which runs the rest): each client's metadata after. */
async function metadataAfterUpgrade(url: string, migration: string, rows: Record<string, unknown>[]): Promise<Record<string, Record<string, unknown>>> {
  const early = openDatabase(url);
  try {
    await migrateUpTo(early.db, migration);
    await (early.db as unknown as Kysely<{ clients: Record<string, unknown> }>).insertInto('clients').values(rows).execute();
  } finally {
    await early.close();
  }
  const store = await openSqlStore(url);
  try {
    const ids = rows.map((row) => row.client_id as string);
    return Object.fromEntries(await Promise.all(ids.map(async (id) => [id, (await store.clients.get(id))!.metadata] as const)));
  } finally {
    await store.close();
  }
}

for (const kind of DATABASES) {
  describe(`migrations on ${kind.name}`, () => {
    const databases: TestDatabase[] = [];
    const fresh = async () => {
      const database = await kind.create();
      databases.push(database);
      return database;
    };
    after(async () => {
      await Promise.all(databases.map((d) => d.drop()));
    });

    test('the first open runs every migration; opening again runs nothing and keeps the data', async () => {
      const { url } = await fresh();
      const first = openDatabase(url);
      try {
        assert.deepEqual(await migrateToLatest(first.db), ALL);
      } finally {
        await first.close();
      }
      const store = await openSqlStore(url);
      const client = aClient();
      try {
        await store.clients.insert(client);
      } finally {
        await store.close();
      }

      const second = openDatabase(url);
      try {
        assert.deepEqual(await migrateToLatest(second.db), []);
      } finally {
        await second.close();
      }
      const reopened = await openSqlStore(url);
      try {
        assert.deepEqual(await reopened.clients.get(client.clientId), client);
      } finally {
        await reopened.close();
      }
      assert.deepEqual(await recorded(url), ALL);
    });

    test('005 names each existing token family by its code\'s hash, so a replay of the code still revokes them all', async () => {
      const { url } = await fresh();
      const early = openDatabase(url);
      try {
        await migrateUpTo(early.db, '004-token-user-index');
      } finally {
        await early.close();
      }
      // Tokens as gatehouse issued them before: a random family per code exchange.
      const [codeA, codeB] = [aHash(), aHash()];
      const familyA = randomUUID();
      const ofA = [aToken({ codeHash: codeA, familyId: familyA }), aToken({ codeHash: codeA, familyId: familyA, kind: 'refresh_token' })];
      const ofB = aToken({ codeHash: codeB, familyId: randomUUID() });
      const noCode = aToken({ codeHash: undefined });
      const before = openDatabase(url);
      try {
        await before.db.insertInto('tokens').values([...ofA, ofB, noCode].map((t) => ({ token_hash: t.tokenHash, kind: t.kind, client_id: t.clientId, user_id: t.userId, scope: t.scope, session_index: t.sessionIndex, auth_time: t.authTime, amr: JSON.stringify(t.amr), acr: null, code_hash: t.codeHash ?? null, family_id: t.familyId, created_at: t.createdAt, expires_at: t.expiresAt ?? null, revoked_at: null, rotated_at: null }))).execute();
      } finally {
        await before.close();
      }

      const store = await openSqlStore(url);
      try {
        for (const t of ofA) assert.equal((await store.tokens.find(t.tokenHash))?.familyId, codeA);
        assert.equal((await store.tokens.find(ofB.tokenHash))?.familyId, codeB);
        assert.equal((await store.tokens.find(noCode.tokenHash))?.familyId, noCode.familyId, 'a token without a code keeps its family');
        assert.equal(await store.tokens.revokeFamily(codeA, T0), 2);
      } finally {
        await store.close();
      }
    });

    test('007 keeps the throttle counters counted before it, with no attempt in flight', async () => {
      const { url } = await fresh();
      const early = openDatabase(url);
      try {
        await migrateUpTo(early.db, '005-token-families');
        await sql`insert into throttle_counters (key, failures, first_failure_at, last_failure_at, expires_at) values ('login-user:x', 5, ${T0}, ${T0 + 10}, ${T0 + 3_600_000})`.execute(early.db);
      } finally {
        await early.close();
      }
      const store = await openSqlStore(url);
      try {
        assert.deepEqual(await store.throttling.get(['login-user:x'], T0 + 20), [{ key: 'login-user:x', failures: 5, pending: 0, lastFailureAt: T0 + 10, reservedAt: 0 }]);
        // Its wait (1 s after the 5th failure) still holds, and then lets one attempt through.
        const rules = [{ key: 'login-user:x', threshold: 5 }];
        assert.equal((await store.throttling.reserve(rules, 900, T0 + 1009, T0 + 3_600_000)).granted, false);
        assert.equal((await store.throttling.reserve(rules, 900, T0 + 1010, T0 + 3_600_000)).granted, true);
      } finally {
        await store.close();
      }
    });

    test('008: tokens stored before it keep every field and stay usable; client tokens can be stored after it, with the indexes kept (CC-13)', async () => {
      const { url } = await fresh();
      const early = openDatabase(url);
      try {
        await migrateUpTo(early.db, '007-throttle-reservations');
      } finally {
        await early.close();
      }
      // Tokens as gatehouse stored them before 008, with the store of that time: a user's live
      // access token, refresh token with acr and no expiry, a revoked one.
      const seed = openDatabase(url);
      const client = aClient();
      const code = aHash();
      const older = [
        aToken({ clientId: client.clientId, codeHash: code, familyId: code, amr: ['pwd', 'otp'], acr: 'urn:example:mfa' }),
        aToken({ clientId: client.clientId, codeHash: code, familyId: code, kind: 'refresh_token', expiresAt: undefined }),
        aToken({ clientId: client.clientId, codeHash: undefined, familyId: 'f', revokedAt: T0 + 1 }),
      ];
      try {
        await seed.db.insertInto('tokens').values(older.map((t) => ({ token_hash: t.tokenHash, kind: t.kind, client_id: t.clientId, user_id: t.userId, scope: t.scope, session_index: t.sessionIndex, auth_time: t.authTime, amr: JSON.stringify(t.amr), acr: t.acr ?? null, code_hash: t.codeHash ?? null, family_id: t.familyId, created_at: t.createdAt, expires_at: t.expiresAt ?? null, revoked_at: t.revokedAt ?? null, rotated_at: null }))).execute();
      } finally {
        await seed.close();
      }

      const store = await openSqlStore(url);
      try {
        await store.clients.insert(client);
        for (const t of older) assert.deepEqual(await store.tokens.find(t.tokenHash), t);
        const user = await aStoredUser(store, { id: older[0]!.userId });
        assert.equal((await store.tokens.findWithUser(older[0]!.tokenHash))?.user?.id, user.id);
        // Still served by the user-and-session revocation of a logout, and by the family's.
        assert.equal(await store.tokens.revokeBySession({ userId: older[0]!.userId, sessionIndex: older[0]!.sessionIndex }, T0 + 5), 1);
        assert.equal(await store.tokens.revokeFamily(code, T0 + 6), 1);
        const clientToken = aClientToken({ clientId: client.clientId });
        await store.tokens.insert(clientToken);
        assert.deepEqual(await store.tokens.findWithUser(clientToken.tokenHash), { token: clientToken, user: undefined, clientActive: true, clientUserinfoAlg: undefined, clientPolicy: undefined, clientPolicySubject: undefined });
      } finally {
        await store.close();
      }

      // The SQLite rebuild must leave the indexes 001 and 005 left on tokens; PostgreSQL keeps its own.
      const after = openDatabase(url);
      try {
        const { rows } =
          after.dialect === 'sqlite'
            ? await sql<{ name: string }>`select name from sqlite_master where type = 'index' and tbl_name = 'tokens' and name not like 'sqlite_autoindex%' order by name`.execute(after.db)
            : await sql<{ name: string }>`select indexname as name from pg_indexes where tablename = 'tokens' and schemaname = current_schema() and indexname <> 'tokens_pkey' order by indexname`.execute(after.db);
        assert.deepEqual(rows.map((r) => r.name), ['tokens_expires_at', 'tokens_family', 'tokens_user_session']);
      } finally {
        await after.close();
      }
    });

    test('014: a confidential client already used as an audience, or registered without grants, becomes a resource server; the others stay as they were (RI-04)', async () => {
      const { url } = await fresh();
      const row = (clientId: string, grantTypes: string[], metadata: Record<string, unknown>, method: string | null = null) =>
        clientRow(clientId, { secret_hash: method === 'none' ? null : aHash(), token_endpoint_auth_method: method, grant_types: JSON.stringify(grantTypes), metadata: JSON.stringify(metadata) });
      const metadata = await metadataAfterUpgrade(url, '011-client-signing-algs', [
        row('identity-api', [], {}),
        row('named-api', ['client_credentials'], { note: 'kept' }),
        row('public-named', ['authorization_code'], {}, 'none'),
        row('caller', ['authorization_code'], { aud: ['identity-api', 'named-api', 'public-named', 'gone'] }),
        row('plain', ['authorization_code', 'refresh_token'], {}),
      ]);
      assert.deepEqual(metadata['identity-api'], { resource_server: true });
      assert.deepEqual(metadata['named-api'], { note: 'kept', resource_server: true });
      assert.deepEqual(metadata['public-named'], {}, 'a public client cannot authenticate at introspection');
      assert.deepEqual(metadata.caller, { aud: ['identity-api', 'named-api', 'public-named', 'gone'] });
      assert.deepEqual(metadata.plain, {});
    });

    test('018: a client with a loopback redirect URI without a port becomes native; the others (a port written, no loopback, application_type registered) and the console stay as they were', async () => {
      const { url } = await fresh();
      const row = (clientId: string, redirectUris: string[], metadata: Record<string, unknown> = {}) =>
        clientRow(clientId, { secret_hash: null, token_endpoint_auth_method: 'none', grant_types: '["authorization_code"]', code_challenge_method: 'S256', redirect_uris: JSON.stringify(redirectUris), metadata: JSON.stringify(metadata) });
      const metadata = await metadataAfterUpgrade(url, '017-audit-events-person-indexes', [
        row('cli-app', ['http://127.0.0.1/callback'], { note: 'kept' }),
        row('ipv6-app', ['com.example.app:/cb', 'http://[::1]?x=1']),
        row('localhost-app', ['http://localhost']),
        row('dev-server', ['http://127.0.0.1:3000/callback']),
        row('web', ['https://shop.example/cb']),
        row('look-alike', ['http://localhost.evil.test/cb']),
        row('said-web', ['http://127.0.0.1/cb'], { application_type: 'web' }),
        row('gatehouse-console', ['http://localhost/manage/callback']),
      ]);
      assert.deepEqual(metadata['cli-app'], { note: 'kept', application_type: 'native' });
      assert.deepEqual(metadata['ipv6-app'], { application_type: 'native' });
      assert.deepEqual(metadata['localhost-app'], { application_type: 'native' });
      assert.deepEqual(metadata['dev-server'], {}, 'a port written: a web development server, compared exactly');
      assert.deepEqual(metadata.web, {});
      assert.deepEqual(metadata['look-alike'], {});
      assert.deepEqual(metadata['said-web'], { application_type: 'web' }, 'a registered application_type is kept');
      assert.deepEqual(metadata['gatehouse-console'], {}, 'the console is a web client');
    });

    test('021: the groups of the default administrator names (any letter case) are marked as administrator groups, the others not; new groups keep the mark they are given', async () => {
      const { url } = await fresh();
      const early = openDatabase(url);
      const named = ['Administrators', 'ADMINISTRATORS (READ-ONLY)', 'Admins2', 'Staff'];
      const ids = Object.fromEntries(named.map((name) => [name, randomUUID()]));
      try {
        await migrateUpTo(early.db, '018-native-clients');
        const rows = named.map((name) => ({ id: ids[name]!, name, name_key: name.normalize('NFKC').toLowerCase(), description: null, created_at: T0 }));
        await (early.db as unknown as Kysely<{ groups: Record<string, unknown> }>).insertInto('groups').values(rows).execute();
      } finally {
        await early.close();
      }
      const store = await openSqlStore(url);
      try {
        assert.deepEqual((await store.groups.list()).map((g) => [g.name, g.administrator]), [
          ['Administrators', true],
          ['ADMINISTRATORS (READ-ONLY)', true],
          ['Admins2', false],
          ['Staff', false],
        ]);
        const marked = aGroup({ administrator: true });
        await store.groups.insert(marked);
        assert.deepEqual(await store.groups.getByName(marked.name), marked);
      } finally {
        await store.close();
      }
    });

    test('a database beside another migrated one (another PostgreSQL schema) gets its own tables', async () => {
      const [first, second] = [await fresh(), await fresh()];
      const a = await openSqlStore(first.url);
      try {
        const b = await openSqlStore(second.url);
        try {
          const client = aClient();
          await b.clients.insert(client);
          assert.deepEqual(await b.clients.get(client.clientId), client);
          assert.equal(await a.clients.get(client.clientId), undefined);
        } finally {
          await b.close();
        }
      } finally {
        await a.close();
      }
      assert.deepEqual(await recorded(second.url), ALL);
    });

    test('several processes opening one fresh database at the same moment all succeed, and each migration runs once', { timeout: 30_000 }, async () => {
      const { url } = await fresh();
      const processes = [1, 2, 3].map(() => migratingProcess(url));
      await Promise.all(processes.map((p) => p.ready()));
      for (const p of processes) p.go();
      assert.deepEqual(await Promise.all(processes.map((p) => p.result())), ['ok', 'ok', 'ok']);
      assert.deepEqual(await recorded(url), ALL);
    });

    // Two SQLite connections in one process cannot wait for each other: node:sqlite waits for a
    // lock synchronously, which stops the event loop the holder needs to finish. Only separate
    // processes share a SQLite file, and the test above covers them.
    if (kind.name === 'postgres')
      test('two stores opened at once in one process both succeed', async () => {
      const { url } = await fresh();
      const stores = await Promise.all([openSqlStore(url), openSqlStore(url)]);
      try {
        const client = aClient();
        await stores[0].clients.insert(client);
        assert.deepEqual(await stores[1].clients.get(client.clientId), client);
      } finally {
        await Promise.all(stores.map((s) => s.close()));
      }
      assert.deepEqual(await recorded(url), ALL);
    });
  });
}
