/**
 * Process entry of `npm start` and `gatehouse serve`: load the configuration, open the store,
 * listen, and shut down gracefully on SIGTERM/SIGINT (in-flight requests finish first).
 */
import { createGatehouse } from './app.ts';
import { ConfigError, loadConfig } from './config.ts';

export async function serve(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`gatehouse: invalid configuration: ${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
  const gatehouse = await createGatehouse(config);
  const { app } = gatehouse;
  if (config.sqlitePath) app.log.info({ sqlitePath: config.sqlitePath }, `SQLite store at ${config.sqlitePath}`);
  else app.log.info('PostgreSQL store');

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    app.log.info({ signal }, 'shutting down: finishing in-flight requests');
    gatehouse.close().then(
      () => process.exit(0),
      (error: unknown) => {
        app.log.error({ err: error }, 'error while shutting down');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));

  await app.listen({ host: config.host, port: config.port });
  app.log.info({ issuer: config.issuer, discovery: `${config.issuer}/.well-known/openid-configuration` }, 'gatehouse is ready');
}

if (import.meta.main) {
  serve().catch((error: unknown) => {
    process.stderr.write(`gatehouse: ${(error as Error).message}\n`);
    process.exit(1);
  });
}
