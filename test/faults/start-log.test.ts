/**
 * What a real server process (`node src/main.ts`) says when it starts: no warning on stderr (no
 * Fastify deprecation, FSTDEP023 was one), and a ready line naming the version (package.json's)
 * and the store: the SQLite path, or the PostgreSQL URL without its password. GATEHOUSE_LOG_TIME
 * sets the `time` of every line.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { DATABASES } from '../helpers/databases.ts';
import { freePort } from '../helpers/server.ts';
import { CLI, runCli, startAndStop, type Started } from './processes.ts';

const MAIN = fileURLToPath(new URL('../../src/main.ts', import.meta.url));
const VERSION = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** Starts `node src/main.ts`, waits for its ready line, stops it with SIGTERM; everything it wrote. */
function startServerProcess(env: Record<string, string>): Promise<Started> {
  return startAndStop([MAIN], { PATH: process.env.PATH ?? '', GATEHOUSE_HOST: '127.0.0.1', GATEHOUSE_CLEANUP_INTERVAL: '0', ...env });
}

/** The same URL with a password the database does not need (trust authentication), to show it is never logged. */
function withPassword(url: string): { url: string; shown: string } {
  const u = new URL(url);
  u.password = 'never-logged-pw';
  u.searchParams.set('sslpassword', 'never-logged-either');
  const shown = new URL(url);
  shown.password = '';
  return { url: u.toString(), shown: shown.toString() };
}

describe('the start of a server process', () => {
  for (const kind of DATABASES) {
    for (const workers of kind.name === 'sqlite' ? ['1', '2'] : ['1']) {
      test(`on ${kind.name}, ${workers} worker(s), GATEHOUSE_LOG_TIME=iso: no warning, ready line with version and store`, async () => {
        const database = await kind.create();
        try {
          const { url, shown } = kind.name === 'postgres' ? withPassword(database.url) : { url: database.url, shown: '' };
          const store = kind.name === 'postgres' ? `PostgreSQL ${shown}` : `SQLite ${database.url.slice('sqlite:'.length)}`;
          const port = await freePort();
          const started = await startServerProcess({ GATEHOUSE_DATABASE_URL: url, GATEHOUSE_PORT: String(port), GATEHOUSE_WORKERS: workers, GATEHOUSE_LOG_TIME: 'iso' });
          assert.equal(started.stderr, '', 'nothing on stderr: no deprecation or other warning');
          assert.equal(started.code, 0);
          const issuer = `http://127.0.0.1:${port}/uas`;
          const ready = started.lines.find((l) => l.msg === 'gatehouse is ready')!;
          const { level, time, pid, hostname, msg, ...fields } = ready;
          assert.deepEqual(fields, { version: VERSION, store, issuer, discovery: `${issuer}/.well-known/openid-configuration`, ...(workers === '1' ? {} : { workers: 2 }) });
          assert.deepEqual([level, typeof pid, typeof hostname, msg], [30, 'number', 'string', 'gatehouse is ready']);
          assert.match(String(time), ISO);
          const first = started.lines[0]!;
          assert.deepEqual([first.msg, first.version, first.store], [`gatehouse ${VERSION} starting; store: ${store}`, VERSION, store]);
          for (const line of started.lines) assert.match(String(line.time), ISO, JSON.stringify(line));
          const all = JSON.stringify(started.lines);
          assert.ok(!all.includes('never-logged'), 'no password in the log');
        } finally {
          await database.drop();
        }
      });
    }
  }

  test('a GATEHOUSE_* variable that is no setting gets a warning naming it and the likely setting; the server starts (issue 22 item 9)', async () => {
    const database = await DATABASES[0]!.create();
    try {
      const started = await startServerProcess({ GATEHOUSE_DATABASE_URL: database.url, GATEHOUSE_PORT: String(await freePort()), GATEHOUSE_WORKERS: '1', GATEHOUSE_WORKRES: '4', GATEHOUSE_UNHEARD_OF: 'x' });
      assert.equal(started.stderr, '');
      assert.equal(started.code, 0);
      const warnings = started.lines.filter((l) => l.level === 40).map(({ variable, suggestion, msg }) => ({ variable, suggestion, msg }));
      assert.deepEqual(warnings, [
        { variable: 'GATEHOUSE_UNHEARD_OF', suggestion: undefined, msg: `GATEHOUSE_UNHEARD_OF is not a setting of gatehouse ${VERSION} and is ignored; see docs/configuration.md` },
        { variable: 'GATEHOUSE_WORKRES', suggestion: 'GATEHOUSE_WORKERS', msg: `GATEHOUSE_WORKRES is not a setting of gatehouse ${VERSION} and is ignored; did you mean GATEHOUSE_WORKERS?` },
      ]);
      assert.ok(started.lines.some((l) => l.msg === 'gatehouse is ready'));
    } finally {
      await database.drop();
    }
  });

  test('`gatehouse serve` warns once, in the start log: the CLI does not say it again on stderr', async () => {
    const database = await DATABASES[0]!.create();
    try {
      const started = await startAndStop([CLI, 'serve'], { PATH: process.env.PATH ?? '', GATEHOUSE_HOST: '127.0.0.1', GATEHOUSE_CLEANUP_INTERVAL: '0', GATEHOUSE_DATABASE_URL: database.url, GATEHOUSE_PORT: String(await freePort()), GATEHOUSE_WORKERS: '1', GATEHOUSE_WORKRES: '4' });
      assert.equal(started.stderr, '');
      assert.equal(started.code, 0);
      assert.deepEqual(started.lines.filter((l) => l.level === 40).map((l) => l.msg), [`GATEHOUSE_WORKRES is not a setting of gatehouse ${VERSION} and is ignored; did you mean GATEHOUSE_WORKERS?`]);
    } finally {
      await database.drop();
    }
  });

  test('a cluster warns once, from the primary', async () => {
    const database = await DATABASES[0]!.create();
    try {
      const started = await startServerProcess({ GATEHOUSE_DATABASE_URL: database.url, GATEHOUSE_PORT: String(await freePort()), GATEHOUSE_WORKERS: '2', GATEHOUSE_WORKRES: '4' });
      assert.equal(started.code, 0);
      assert.deepEqual(started.lines.filter((l) => l.level === 40).map((l) => l.variable), ['GATEHOUSE_WORKRES']);
    } finally {
      await database.drop();
    }
  });

  test('every interface behind the derived http issuer: one line on stderr, exit 2, nothing served (issue 22 item 9)', async () => {
    const port = await freePort();
    // `gatehouse serve`, the same start as `node src/main.ts`.
    const result = await runCli(['serve'], { GATEHOUSE_HOST: '0.0.0.0', GATEHOUSE_PORT: String(port), GATEHOUSE_DATABASE_URL: 'sqlite::memory:' });
    assert.deepEqual(result, {
      stdout: '',
      stderr: `gatehouse: invalid configuration: GATEHOUSE_HOST: 0.0.0.0 listens on every interface, but GATEHOUSE_ISSUER is unset, so the issuer is http://localhost:${port}/uas, which only this machine can use: set GATEHOUSE_ISSUER to the https URL clients use (docs/deployment.md), or set GATEHOUSE_ALLOW_INSECURE_HTTP=true for development\n`,
      code: 2,
    });
  });

  test('by default `time` is epoch milliseconds', async () => {
    const database = await DATABASES[0]!.create();
    try {
      const started = await startServerProcess({ GATEHOUSE_DATABASE_URL: database.url, GATEHOUSE_PORT: String(await freePort()), GATEHOUSE_WORKERS: '1' });
      assert.equal(started.stderr, '');
      assert.ok(started.lines.length >= 2);
      for (const line of started.lines) assert.equal(typeof line.time, 'number', JSON.stringify(line));
    } finally {
      await database.drop();
    }
  });
});
