/**
 * A real gatehouse listening on 127.0.0.1 on a free port, over a fresh test database; tests
 * speak HTTP to it. The clock can be injected to move time instead of sleeping.
 */
import { createServer } from 'node:net';
import { createGatehouse, type Gatehouse } from '../../src/app.ts';
import { loadConfig, type Config, type Env } from '../../src/config.ts';
import type { Clock } from '../../src/lib/clock.ts';
import type { AuditSink } from '../../src/observability/audit.ts';
import type { TestDatabase, TestDatabaseKind } from './databases.ts';

export interface RunningServer {
  url: string;
  issuer: string;
  config: Config;
  gatehouse: Gatehouse;
  database: TestDatabase;
  close(): Promise<void>;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

export interface StartOptions {
  env?: Env;
  clock?: Clock;
  /** Captures the audit events (see AuditCapture in ./audit.ts); default: none are kept. */
  audit?: AuditSink;
  /**
   * Serve this existing database instead of a fresh one: another instance on the same store.
   * It is left for its owner to drop.
   */
  database?: TestDatabase;
}

export async function startServer(kind: TestDatabaseKind, options: StartOptions = {}): Promise<RunningServer> {
  const shared = options.database !== undefined;
  const database = options.database ?? (await kind.create());
  const port = await freePort();
  // No background cleanup unless a test asks: it would delete rows a test moved its clock past.
  const config = loadConfig({ GATEHOUSE_PORT: String(port), GATEHOUSE_DATABASE_URL: database.url, GATEHOUSE_LOG_LEVEL: 'silent', GATEHOUSE_CLEANUP_INTERVAL: '0', ...options.env });
  const gatehouse = await createGatehouse(config, { clock: options.clock, audit: options.audit }, { logger: false });
  await gatehouse.app.listen({ host: '127.0.0.1', port });
  return {
    url: `http://127.0.0.1:${port}`,
    issuer: config.issuer,
    config,
    gatehouse,
    database,
    async close() {
      await gatehouse.close();
      if (!shared) await database.drop();
    },
  };
}
