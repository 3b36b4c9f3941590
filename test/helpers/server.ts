/**
 * A real gatehouse listening on 127.0.0.1 on a free port, over a fresh test database; tests
 * speak HTTP to it. The clock can be injected to move time instead of sleeping.
 */
import { createServer } from 'node:net';
import type { FastifyServerOptions } from 'fastify';
import { createGatehouse, type Gatehouse, type Runtime } from '../../src/app.ts';
import { loadConfig, type Config, type Env } from '../../src/config.ts';
import type { Clock } from '../../src/lib/clock.ts';
import type { Random } from '../../src/lib/random.ts';
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
  /** Fastify's logger (test/helpers/log.ts `capturedLogger` to read what is logged); default none. */
  logger?: FastifyServerOptions['logger'];
  clock?: Clock;
  /** The server's randomness (src/lib/random.ts); default: cryptoRandom. */
  random?: Random;
  /** Captures the audit events (see AuditCapture in ./audit.ts); default: none are kept. */
  audit?: AuditSink;
  /**
   * Serve this existing database instead of a fresh one: another instance on the same store.
   * It is left for its owner to drop.
   */
  database?: TestDatabase;
  /**
   * Whether a 503 (store unavailable) is expected, for fault tests. Any other 5xx answered during
   * the server's life fails close(): no request in any suite may get a server error.
   */
  allow503?: boolean;
  /** Limits of the jwks_uri fetcher (short timeouts for the tests of a slow jwks_uri). */
  jwks?: Runtime['jwks'];
  /** Told the SQL of every statement the store runs (test/http/statement-counts.test.ts counts them). */
  onStatement?: Runtime['onStatement'];
}

export async function startServer(kind: TestDatabaseKind, options: StartOptions = {}): Promise<RunningServer> {
  const shared = options.database !== undefined;
  const database = options.database ?? (await kind.create());
  const serverErrors: string[] = [];
  const { gatehouse, config, port } = await listening(database, options, serverErrors);
  return {
    url: `http://127.0.0.1:${port}`,
    issuer: config.issuer,
    config,
    gatehouse,
    database,
    async close() {
      await gatehouse.close();
      if (!shared) await database.drop();
      if (serverErrors.length > 0) throw new Error(`the server answered ${serverErrors.length} request(s) with a server error: ${serverErrors.slice(0, 5).join('; ')}`);
    },
  };
}

/**
 * A gatehouse listening on a free port. Another process may take the port between freePort()
 * and listen() (suites run in parallel): then that gatehouse is closed, so nothing of it keeps
 * the test process alive, and another port is tried.
 */
async function listening(database: TestDatabase, options: StartOptions, serverErrors: string[]): Promise<{ gatehouse: Gatehouse; config: Config; port: number }> {
  for (let attempt = 1; ; attempt++) {
    // A port the test chose (its issuer names it, e.g. http://localhost:PORT for WebAuthn), else a free one.
    const port = options.env?.GATEHOUSE_PORT !== undefined ? Number(options.env.GATEHOUSE_PORT) : await freePort();
    // No background cleanup unless a test asks: it would delete rows a test moved its clock past.
    const config = loadConfig({ GATEHOUSE_PORT: String(port), GATEHOUSE_DATABASE_URL: database.url, GATEHOUSE_LOG_LEVEL: 'silent', GATEHOUSE_CLEANUP_INTERVAL: '0', ...options.env });
    const gatehouse = await createGatehouse(config, { clock: options.clock, audit: options.audit, ...(options.random ? { random: options.random } : {}), ...(options.jwks ? { jwks: options.jwks } : {}), ...(options.onStatement ? { onStatement: options.onStatement } : {}) }, { logger: options.logger ?? false });
    gatehouse.app.addHook('onResponse', async (request, reply) => {
      if (reply.statusCode >= 500 && !(options.allow503 && reply.statusCode === 503)) serverErrors.push(`${reply.statusCode} ${request.method} ${request.url.split('?')[0]}`);
    });
    try {
      await gatehouse.app.listen({ host: '127.0.0.1', port });
      return { gatehouse, config, port };
    } catch (error) {
      await gatehouse.close();
      if ((error as { code?: string }).code !== 'EADDRINUSE' || attempt >= 5) throw error;
    }
  }
}
