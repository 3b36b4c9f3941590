/**
 * Issue 11, item 4: the SQLite store gatehouse creates is private to the account running it: the
 * folders it creates 0700, the file and its -wal and -shm 0600, whatever the umask lets through.
 * A folder or file that exists already is left as it is, and named in a warning at start.
 */
import assert from 'node:assert/strict';
import { chmodSync, closeSync, mkdirSync, mkdtempSync, openSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, afterEach, beforeEach, describe, test } from 'node:test';
import { createGatehouse } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { sqliteAccessWarnings } from '../../src/storage/sql/database.ts';
import { capturedLogger } from '../helpers/log.ts';
import { startServer } from '../helpers/server.ts';

const mode = (path: string) => (statSync(path).mode & 0o777).toString(8).padStart(4, '0');

/** A server on the SQLite file at `path`, asked once for readiness (so the WAL is in use), then closed. */
async function serveOnce(path: string): Promise<void> {
  const server = await startServer({ name: 'sqlite', create: async () => ({ name: 'sqlite', url: `sqlite:${path}`, drop: async () => {} }) });
  try {
    assert.equal((await fetch(`${server.url}/health/ready`)).status, 200);
    // While it runs: the file, its write-ahead log and its shared-memory index.
    assert.deepEqual([path, `${path}-wal`, `${path}-shm`].map(mode), ['0600', '0600', '0600']);
  } finally {
    await server.close();
  }
}

describe('the SQLite files gatehouse creates', () => {
  let root: string;
  let umask: number;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'gatehouse-files-'));
    // The most permissive umask: what gatehouse creates must be private by itself.
    umask = process.umask(0);
  });
  afterEach(() => {
    process.umask(umask);
    rmSync(root, { recursive: true, force: true });
  });
  after(() => process.umask(umask));

  test('missing folders are created 0700, the file, -wal and -shm 0600; nothing to warn about', async () => {
    const path = join(root, 'data', 'store', 'gatehouse.db');
    await serveOnce(path);
    assert.deepEqual([join(root, 'data'), join(root, 'data', 'store'), path].map(mode), ['0700', '0700', '0600']);
    assert.deepEqual(sqliteAccessWarnings(path), []);
  });

  test("an existing folder keeps the operator's mode, is warned about at start, and the new file is still 0600", async () => {
    const folder = join(root, 'shared');
    mkdirSync(folder);
    chmodSync(folder, 0o755);
    const path = join(folder, 'gatehouse.db');
    await serveOnce(path);
    assert.equal(mode(folder), '0755');
    assert.deepEqual(sqliteAccessWarnings(path), [`the SQLite folder ${folder} has mode 0755: other accounts may reach it (gatehouse creates it 0700)`]);

    const log = capturedLogger('warn');
    const config = loadConfig({ GATEHOUSE_DATABASE_URL: `sqlite:${path}`, GATEHOUSE_LOG_LEVEL: 'warn', GATEHOUSE_CLEANUP_INTERVAL: '0', GATEHOUSE_PORT: '0' });
    const gatehouse = await createGatehouse(config, {}, { logger: log.logger });
    await gatehouse.close();
    const warnings = log
      .text()
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { level: number; sqlitePath: string; msg: string })
      .map(({ level, sqlitePath, msg }) => ({ level, sqlitePath, msg }));
    assert.deepEqual(warnings, [{ level: 40, sqlitePath: path, msg: `the SQLite folder ${folder} has mode 0755: other accounts may reach it (gatehouse creates it 0700)` }]);
  });

  test("an existing file keeps the operator's mode, which SQLite gives its -wal and -shm too", async () => {
    const folder = join(root, 'private');
    mkdirSync(folder, { mode: 0o700 });
    const path = join(folder, 'gatehouse.db');
    closeSync(openSync(path, 'w', 0o640));
    const server = await startServer({ name: 'sqlite', create: async () => ({ name: 'sqlite', url: `sqlite:${path}`, drop: async () => {} }) });
    try {
      assert.deepEqual([path, `${path}-wal`, `${path}-shm`].map(mode), ['0640', '0640', '0640']);
      assert.deepEqual(sqliteAccessWarnings(path), [path, `${path}-wal`, `${path}-shm`].map((file) => `the SQLite file ${file} has mode 0640: other accounts may reach it (gatehouse creates it 0600)`));
    } finally {
      await server.close();
    }
  });
});
