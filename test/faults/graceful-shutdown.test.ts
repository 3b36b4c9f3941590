/**
 * SIGTERM drains: logins already being verified (argon2id, the slowest thing gatehouse does)
 * complete with their 303 and code, the port stops accepting connections at once, and the
 * process exits 0 once they are done. On every database.
 */
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { Client } from '../../src/domain/client.ts';
import { hashSecret } from '../../src/lib/hash.ts';
import { openSqlStore, type SqlStore } from '../../src/storage/sql/store.ts';
import { DATABASES, type TestDatabase } from '../helpers/databases.ts';
import { authorizationUrl, browse, CookieJar, createTestClient, createTestUser, formAction, formFields, RP_REDIRECT_URI, submit } from '../helpers/fixtures.ts';
import { startGatehouse, type GatehouseProcess } from './processes.ts';

const PASSWORD = 'correct horse battery staple';
const LOGINS = 8;

/** Resolves true when a new TCP connection to `port` is refused, false when one is accepted. */
function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(true));
  });
}

for (const kind of DATABASES) {
  describe(`SIGTERM on ${kind.name}`, () => {
    let database: TestDatabase;
    let store: SqlStore;
    let server: GatehouseProcess | undefined;
    let client: Client;
    /** One user per login: concurrent logins of one user queue on the throttle's in-flight cap, which is not what this test is about. */
    let usernames: string[];

    before(async () => {
      database = await kind.create();
      store = await openSqlStore(database.url);
      ({ client } = await createTestClient(store));
      usernames = Array.from({ length: LOGINS }, (_, i) => `drain-${Date.now()}-${i}`);
      for (const username of usernames) await createTestUser(store, { username, password: PASSWORD });
    });
    after(async () => {
      await server?.kill();
      await store?.close();
      await database?.drop();
    });

    test('in-flight logins complete with 303, new connections are refused at once, and the exit code is 0', async () => {
      // One argon2 thread: the logins are verified one after another, so the drain takes a while.
      server = await startGatehouse({ databaseUrl: database.url, env: { UV_THREADPOOL_SIZE: '1' } });
      const { url, port } = server;
      const forms = await Promise.all(
        Array.from({ length: LOGINS }, async (_, i) => {
          const jar = new CookieJar();
          const page = await browse(authorizationUrl(url, { client_id: client.clientId, redirect_uri: RP_REDIRECT_URI, response_type: 'code', scope: 'openid', state: `s${i}` }), jar);
          assert.equal(page.status, 200);
          const html = await page.text();
          const fields = formFields(html).map(([name, value]): [string, string] => [name, name === 'username' ? usernames[i]! : name === 'password' ? PASSWORD : value]);
          return { jar, fields, action: new URL(formAction(html), url).toString() };
        }),
      );

      let firstAnswerAt = 0;
      let sigtermSent: () => void = () => {};
      const sigterm = new Promise<void>((resolve) => (sigtermSent = resolve));
      const answers = forms.map(async ({ jar, fields, action }) => {
        const response = await submit(action, fields, jar);
        const at = Date.now();
        // The first verified login means the others are queued behind it in the server: stop now.
        if (firstAnswerAt === 0) {
          firstAnswerAt = at;
          server!.child.kill('SIGTERM');
          sigtermSent();
        }
        return { response, at };
      });

      await sigterm;
      let refusedAt: number | undefined;
      for (const deadline = Date.now() + 2000; Date.now() < deadline; ) {
        if (await refused(port)) {
          refusedAt = Date.now();
          break;
        }
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      const results = await Promise.all(answers);
      // Clients keep their connections alive; the drain must not wait for them to time out (72 s).
      const exit = await Promise.race([server.exited, new Promise((resolve) => setTimeout(resolve, 10_000, 'still running 10 s after SIGTERM'))]);
      assert.equal(exit, 0, server.output());

      const lastAnswerAt = Math.max(...results.map((r) => r.at));
      assert.ok(refusedAt !== undefined, 'new connections are refused after SIGTERM');
      assert.ok(refusedAt < lastAnswerAt, `the port was closed (${refusedAt - firstAnswerAt} ms after SIGTERM) while logins still drained (the last answered ${lastAnswerAt - firstAnswerAt} ms after)`);
      for (const { response } of results) {
        assert.equal(response.status, 303);
        const location = new URL(response.headers.get('location')!);
        const code = location.searchParams.get('code');
        assert.ok(code, 'a code for the client');
        // What the drained requests wrote was committed before the process exited.
        const row = await store.database.db.selectFrom('authorization_codes').select('session_index').where('code_hash', '=', hashSecret(code)).executeTakeFirst();
        assert.ok(row, 'the code of a drained login is in the store');
      }
    });
  });
}
