/**
 * A real gatehouse listening on 127.0.0.1 on a free port, over a fresh test database; tests
 * speak HTTP to it. The clock can be injected to move time instead of sleeping.
 */
import { createServer } from 'node:net';
import { createGatehouse, type Gatehouse } from '../../src/app.ts';
import { loadConfig, type Config, type Env } from '../../src/config.ts';
import type { Clock } from '../../src/lib/clock.ts';
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

export async function startServer(kind: TestDatabaseKind, options: { env?: Env; clock?: Clock } = {}): Promise<RunningServer> {
  const database = await kind.create();
  const port = await freePort();
  const config = loadConfig({ GATEHOUSE_PORT: String(port), GATEHOUSE_DATABASE_URL: database.url, GATEHOUSE_LOG_LEVEL: 'silent', ...options.env });
  const gatehouse = await createGatehouse(config, { clock: options.clock }, { logger: false });
  await gatehouse.app.listen({ host: '127.0.0.1', port });
  return {
    url: `http://127.0.0.1:${port}`,
    issuer: config.issuer,
    config,
    gatehouse,
    database,
    async close() {
      await gatehouse.close();
      await database.drop();
    },
  };
}
