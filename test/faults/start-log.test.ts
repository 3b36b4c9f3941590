/**
 * What a real server process (`node src/main.ts`) says when it starts: no warning on stderr (no
 * Fastify deprecation, FSTDEP023 was one), and a ready line naming the version (package.json's)
 * and the store: the SQLite path, or the PostgreSQL URL without its password. GATEHOUSE_LOG_TIME
 * sets the `time` of every line.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { DATABASES } from '../helpers/databases.ts';
import { freePort } from '../helpers/server.ts';

const MAIN = fileURLToPath(new URL('../../src/main.ts', import.meta.url));
const VERSION = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

interface Started {
  lines: Record<string, unknown>[];
  stderr: string;
  code: number | null;
}

/** Starts gatehouse, waits for its ready line, stops it with SIGTERM; everything it wrote. */
function startAndStop(env: Record<string, string>): Promise<Started> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [MAIN], {
      env: { PATH: process.env.PATH ?? '', GATEHOUSE_HOST: '127.0.0.1', GATEHOUSE_CLEANUP_INTERVAL: '0', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 60_000,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      if (stdout.includes('"msg":"gatehouse is ready"')) child.kill('SIGTERM');
    });
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ lines: stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>), stderr, code }));
  });
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
          const started = await startAndStop({ GATEHOUSE_DATABASE_URL: url, GATEHOUSE_PORT: String(port), GATEHOUSE_WORKERS: workers, GATEHOUSE_LOG_TIME: 'iso' });
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

  test('by default `time` is epoch milliseconds', async () => {
    const database = await DATABASES[0]!.create();
    try {
      const started = await startAndStop({ GATEHOUSE_DATABASE_URL: database.url, GATEHOUSE_PORT: String(await freePort()), GATEHOUSE_WORKERS: '1' });
      assert.equal(started.stderr, '');
      assert.ok(started.lines.length >= 2);
      for (const line of started.lines) assert.equal(typeof line.time, 'number', JSON.stringify(line));
    } finally {
      await database.drop();
    }
  });
});
