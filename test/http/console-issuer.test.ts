/**
 * The console works wherever the server runs (issue 22 item 7; docs/decisions.md CO14), over real
 * HTTP on every database: `admin bootstrap` run with the default settings registers the console for
 * 127.0.0.1:8080, and a server on another port puts its own issuer's URIs into the registrations
 * when it starts, or when its console is opened after a bootstrap made while it ran; the page shown
 * before the bootstrap carries the server's real settings, and its command, pasted verbatim, sets
 * the console up; a refused sign-in shows the error's description, escaped.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, test } from 'node:test';
import { openStore } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { systemClock } from '../../src/lib/clock.ts';
import { cryptoRandom } from '../../src/lib/random.ts';
import { bootstrap } from '../../src/manage/bootstrap.ts';
import { CONSOLE_CLIENT_ID, MANAGE_API_CLIENT_ID } from '../../src/manage/management-clients.ts';
import type { Store } from '../../src/storage/ports.ts';
import { DATABASES, type TestDatabase, type TestDatabaseKind } from '../helpers/databases.ts';
import { aClient } from '../helpers/store.ts';
import { consoleHome } from '../helpers/console-signin.ts';
import { browse, CookieJar } from '../helpers/fixtures.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const PASSWORD = 'console issuer password';

/**
 * `gatehouse admin bootstrap` as the use case runs it for the CLI, with only the store's setting:
 * the defaults for everything else; then `more` on the same store.
 */
async function bootstrapWithDefaults(database: TestDatabase, username: string, more?: (store: Store) => Promise<void>): Promise<void> {
  const config = loadConfig({ GATEHOUSE_DATABASE_URL: database.url });
  assert.equal(config.issuer, 'http://127.0.0.1:8080/uas');
  const store = await openStore(config);
  try {
    await bootstrap({ transaction: store.transaction, clock: systemClock, random: cryptoRandom }, config, { username, password: PASSWORD });
    await more?.(store);
  } finally {
    await store.close();
  }
}

/** What the console's two clients are registered with, as the server's store has them. */
async function registrations(server: RunningServer): Promise<{ redirectUris: string[]; postLogoutRedirectUris: string[]; resourceUris: unknown }> {
  const store = server.gatehouse.store;
  const [consoleClient, api] = await Promise.all([store.clients.get(CONSOLE_CLIENT_ID), store.clients.get(MANAGE_API_CLIENT_ID)]);
  return { redirectUris: consoleClient!.redirectUris, postLogoutRedirectUris: consoleClient!.postLogoutRedirectUris, resourceUris: api!.metadata.resource_uris };
}

function ownRegistrations(server: RunningServer) {
  const origin = new URL(server.issuer).origin;
  return { redirectUris: [`${origin}/manage/callback`], postLogoutRedirectUris: [`${origin}/manage/`], resourceUris: [`${origin}/manage/api/v1`] };
}

/** The command in the setup page's `<code>`, as the browser shows it (the template escapes it). */
function shownCommand(html: string): string | undefined {
  const code = /<code id="bootstrap-command">([^<]*)<\/code>/.exec(html)?.[1];
  return code?.replace(/&#39;/g, "'").replace(/&quot;/g, '"').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
}

/** The store as the page names it: SQLite by its absolute path; the test's PostgreSQL URL (with a `?`) in single quotes. */
function storeWord(server: RunningServer): string {
  return server.config.sqlitePath === undefined ? `'${server.config.databaseUrl}'` : `sqlite:${server.config.sqlitePath}`;
}

/** Runs `command` with /bin/sh in the repository, as an operator pastes it: nothing of this process's environment but PATH and HOME. */
function shell(command: string, input: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('/bin/sh', ['-c', command], { cwd: ROOT, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp' }, stdio: ['pipe', 'pipe', 'pipe'], timeout: 120_000 });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
    child.stdin.end(input);
  });
}

/** A fresh database of `db`'s kind for `work`, dropped after it. */
async function withDatabase(db: TestDatabaseKind, work: (database: TestDatabase) => Promise<void>): Promise<void> {
  const database = await db.create();
  try {
    await work(database);
  } finally {
    await database.drop();
  }
}

async function withServer(db: TestDatabaseKind, database: TestDatabase, env: Record<string, string>, work: (server: RunningServer) => Promise<void>): Promise<void> {
  const server = await startServer(db, { database, env });
  try {
    await work(server);
  } finally {
    await server.close();
  }
}

for (const db of DATABASES) {
  describe(`the console wherever the server runs, on ${db.name}`, () => {
    test('bootstrap with the default settings, then a server on another port: it registers its own URIs at start and the administrator signs in', async () => {
      await withDatabase(db, async (database) => {
        await bootstrapWithDefaults(database, 'root');
        await withServer(db, database, {}, async (server) => {
          assert.notEqual(server.config.port, 8080);
          // At start, before anyone opened the console: no stale 127.0.0.1:8080 URI is left.
          assert.deepEqual(await registrations(server), ownRegistrations(server));
          assert.match(await consoleHome(server.url, 'root', PASSWORD), /root/);
        });
      });
    });

    test('a bootstrap with the default settings while the server runs: opening the console registers the server\'s URIs, and signing in works', async () => {
      await withDatabase(db, async (database) => {
        await withServer(db, database, {}, async (server) => {
          const before = await browse(`${server.url}/manage/`);
          assert.equal(before.status, 200, 'the setup page');
          await bootstrapWithDefaults(database, 'late');
          assert.deepEqual((await registrations(server)).redirectUris, ['http://127.0.0.1:8080/manage/callback'], 'as the bootstrap made it');
          assert.match(await consoleHome(server.url, 'late', PASSWORD), /late/);
          assert.deepEqual(await registrations(server), ownRegistrations(server));
        });
      });
    });

    test('the setup page shows the server\'s own settings in front of the command; pasted verbatim (with a username) it sets the console up', { timeout: 120_000 }, async () => {
      await withDatabase(db, async (database) => {
        await withServer(db, database, { GATEHOUSE_ADMIN_GROUP: "Gate keepers' group" }, async (server) => {
          const html = await (await browse(`${server.url}/manage/`)).text();
          const command = shownCommand(html);
          assert.equal(
            command,
            `GATEHOUSE_ISSUER=${server.issuer} GATEHOUSE_DATABASE_URL=${storeWord(server)} GATEHOUSE_ADMIN_GROUP='Gate keepers'\\'' group' npx gatehouse admin bootstrap --username <name> --password-stdin`,
          );
          assert.equal(html.includes('password is not shown'), false, 'no password was hidden');
          const run = await shell(command!.replace('<name>', 'pasted'), `${PASSWORD}\n`);
          assert.equal(run.code, 0, run.output);
          assert.match(run.output, /Created administrator pasted \([0-9a-f-]{36}\) in Gate keepers' group\./);
          assert.match(run.output, new RegExp(`Web console: ${server.issuer.replace('/uas', '')}/manage/\\n`));
          assert.match(await consoleHome(server.url, 'pasted', PASSWORD), /pasted/);
        });
      });
    });

    test('a refused sign-in shows the error with its description, escaped', async () => {
      await withDatabase(db, async (database) => {
        await bootstrapWithDefaults(database, 'root');
        await withServer(db, database, {}, async (server) => {
          // The management API's client deactivated (only the CLI can): its resource is refused.
          const store = server.gatehouse.store;
          await store.clients.update({ ...(await store.clients.get(MANAGE_API_CLIENT_ID))!, active: false });
          const refusedJar = new CookieJar();
          const out = await browse(`${server.url}/manage/`, refusedJar);
          // Refused before the login page: the request names a resource no active client has.
          const back = await browse(out.headers.get('location')!, refusedJar);
          assert.equal(back.status, 302);
          const callback = await browse(back.headers.get('location')!, refusedJar);
          assert.equal(callback.status, 400);
          const text = /<main[^>]*>[\s\S]*?<p>([^<]*)<\/p>/.exec(await callback.text())?.[1];
          assert.match(text ?? '', /^The sign-in service answered with the error “invalid_target”: \S.*$/, text);

          // A description with markup in it (allowed characters of RFC 6749 §4.1.2.1) is shown as text.
          const jar = new CookieJar();
          const start = await browse(`${server.url}/manage/`, jar);
          const state = new URL(start.headers.get('location')!).searchParams.get('state')!;
          const hostile = "<img src=x onerror=alert(1)> & 'quoted'";
          const page = await browse(`${server.url}/manage/callback?${new URLSearchParams({ state, error: 'access_denied', error_description: hostile })}`, jar);
          assert.equal(page.status, 400);
          const html = await page.text();
          assert.equal(html.includes('<img src=x'), false, 'not markup');
          assert.ok(html.includes('The sign-in service answered with the error “access_denied”: &lt;img src=x onerror=alert(1)&gt; &amp; &#39;quoted&#39;'), html);
        });
      });
    });

    test('another client holding this issuer\'s API resource URI: the server starts, nothing is half-changed, the console page is no server error', async () => {
      await withDatabase(db, async (database) => {
        const issuer = 'https://sso.example.test/uas';
        await bootstrapWithDefaults(database, 'root', async (store) => {
          await store.clients.insert(aClient({ grantTypes: [], redirectUris: [], metadata: { resource_server: true, resource_uris: ['https://sso.example.test/manage/api/v1'] } }));
        });
        await withServer(db, database, { GATEHOUSE_ISSUER: issuer }, async (server) => {
          // One unit of work: the API's URI could not move, so the console's did not either.
          assert.deepEqual(await registrations(server), { redirectUris: ['http://127.0.0.1:8080/manage/callback'], postLogoutRedirectUris: ['http://127.0.0.1:8080/manage/'], resourceUris: ['http://127.0.0.1:8080/manage/api/v1'] });
          const response = await browse(`${server.url}/manage/`);
          assert.equal(response.status, 302, 'on to the sign-in, which shows what the server refuses');
        });
      });
    });
  });
}
