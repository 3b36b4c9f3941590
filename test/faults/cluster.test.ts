/**
 * Cluster mode (GATEHOUSE_WORKERS > 1): the workers share the port and the store, and exactly one
 * of them runs the cleanup job — N workers sweeping would repeat the same deletes N times. When
 * that worker dies, the primary's replacement for it takes the job over. Workers run with the
 * young-generation cap of `npm start` however the primary was started. On SQLite (one file
 * shared by the workers); the primary's logic is the same on PostgreSQL.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { startGatehouse } from './processes.ts';

/** The pids of the processes that logged that they run the cleanup job, in order. */
function cleaners(output: string): number[] {
  return output
    .split('\n')
    .filter((line) => line.includes('this process runs the cleanup job'))
    .map((line) => (JSON.parse(line) as { pid: number }).pid);
}

async function until<T>(what: string, probe: () => T | undefined, withinMs = 15_000): Promise<T> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('cluster mode', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-cluster-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  test('two workers answer; one runs the cleanup job, and its replacement takes it over when it dies', async () => {
    const server = await startGatehouse({
      databaseUrl: `sqlite:${join(dir, 'cluster.db')}`,
      env: { GATEHOUSE_WORKERS: '2', GATEHOUSE_LOG_LEVEL: 'info', GATEHOUSE_CLEANUP_INTERVAL: '300' },
    });
    try {
      await until('every worker to listen', () => (server.output().includes('gatehouse is ready') ? true : undefined));
      const [first, ...others] = cleaners(server.output());
      assert.ok(first !== undefined && first !== server.pid, 'a worker, not the primary, runs the job');
      assert.deepEqual(others, [], 'and only one');
      // Started without the flag (as `gatehouse serve` is), a worker still gets the young-generation cap.
      assert.ok(readFileSync(`/proc/${first}/cmdline`, 'utf8').split('\0').includes('--max-semi-space-size=4'), 'the worker runs with --max-semi-space-size=4');

      for (let i = 0; i < 4; i++) assert.equal((await fetch(`${server.url}/uas/.well-known/openid-configuration`)).status, 200);

      process.kill(first, 'SIGKILL');
      const replacement = await until('a replacement worker to take the job over', () => cleaners(server.output())[1]);
      assert.notEqual(replacement, first);
      assert.equal(cleaners(server.output()).length, 2, 'the surviving worker did not start a second job');
      assert.equal((await fetch(`${server.url}/health/ready`)).status, 200);
    } finally {
      assert.equal(await server.stop(), 0, `the primary exits 0 on SIGTERM:\n${server.output()}`);
    }
  });
});
