/**
 * Process entry of `npm start` and `gatehouse serve`: load the configuration, open the store,
 * listen, and shut down gracefully on SIGTERM/SIGINT (in-flight requests finish first).
 *
 * With GATEHOUSE_WORKERS above 1 this process becomes a node:cluster primary. It prepares the
 * store once (schema, first signing key) so the workers do not race to, forks the workers, which
 * share the port and the store (keys, sessions and throttling live there, so any worker may
 * answer any request), restarts a worker that dies unexpectedly, and on SIGTERM/SIGINT asks every
 * worker to drain and exits 0 after the last one has.
 */
import cluster, { type Worker } from 'node:cluster';
import { pino, type Logger } from 'pino';
import { createGatehouse, keyRingFor, listen, openStore } from './app.ts';
import { checkServingExposure, ConfigError, loadConfig, storeDescription, unknownVariables, unknownVariableWarning, type Config } from './config.ts';
import { configuredTheme } from './http/interaction/theme.ts';
import { logTimestamp } from './observability/logger.ts';
import { clusterExposition, metricsServer } from './observability/metrics.ts';
import { VERSION } from './version.ts';

export async function serve(): Promise<void> {
  let config;
  try {
    config = loadConfig();
    // A broken login theme stops start-up here, as a setting, before any worker is forked.
    configuredTheme(config);
    checkServingExposure(config);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`gatehouse: invalid configuration: ${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
  if (config.workers > 1 && cluster.isPrimary) {
    // Each worker would get its own empty in-memory database: no shared sessions, keys or codes.
    if (config.sqlitePath !== ':memory:') return runPrimary(config);
    if (process.env.GATEHOUSE_WORKERS) process.stderr.write('gatehouse: an in-memory SQLite store cannot be shared by workers; running one process\n');
  }
  return runServer(config);
}

/** One server in this process: the whole of gatehouse without a cluster, or one cluster worker. */
async function runServer(config: Config): Promise<void> {
  // A worker's metrics are served by the primary, summed with the other workers'.
  const gatehouse = await createGatehouse(config, { cleanup: cluster.isPrimary || process.env[CLEANUP_WORKER] === '1', metricsListener: cluster.isPrimary, sharedSqliteFile: cluster.isWorker });
  const { app } = gatehouse;
  // In a cluster the primary has said where the store is.
  if (cluster.isPrimary) logStore(app.log, config);

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    app.log.info({ signal, shutdownTimeoutSeconds: config.shutdownTimeout }, 'shutting down: finishing in-flight requests');
    // close() cuts the connections still open after the drain time; this is the last resort
    // should closing the store hang as well.
    setTimeout(() => {
      app.log.error({ afterSeconds: config.shutdownTimeout + SHUTDOWN_MARGIN_S }, 'shutdown did not finish; exiting');
      process.exit(1);
    }, (config.shutdownTimeout + SHUTDOWN_MARGIN_S) * 1000).unref();
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
  if (cluster.isPrimary) app.log.info(readyFields(config), 'gatehouse is ready');
  else app.log.debug({ worker: cluster.worker?.id }, 'worker listening');
}

/** Node's flags plus `--max-semi-space-size=4`, unless they already set it. */
export function withSemiSpaceCap(execArgv: string[]): string[] {
  return execArgv.some((flag) => flag.startsWith('--max-semi-space-size')) ? execArgv : [...execArgv, '--max-semi-space-size=4'];
}

/**
 * Seconds past GATEHOUSE_SHUTDOWN_TIMEOUT that a process waits for its store to close before it
 * exits anyway (1), and that the primary of a cluster waits for its workers before it kills them.
 */
const SHUTDOWN_MARGIN_S = 5;

/** Set by the primary in the environment of the one worker that runs the cleanup job. */
const CLEANUP_WORKER = 'GATEHOUSE_INTERNAL_CLEANUP_WORKER';

/** How long a worker that died is waited for before it is replaced, doubling while crashes repeat. */
const RESTART_BASE_MS = 100;
const RESTART_MAX_MS = 30_000;
const CRASH_WINDOW_MS = 60_000;

async function runPrimary(config: Config): Promise<void> {
  const log = pino({ level: config.logLevel, timestamp: logTimestamp(config.logTime) });
  const store = await openStore(config);
  try {
    await keyRingFor(config, store).prepare();
  } finally {
    await store.close();
  }
  logStore(log, config);
  // The metrics listener is the primary's: each scrape asks every worker and sums their answers.
  const metricsListener = config.metricsPort === undefined ? undefined : metricsServer(clusterExposition(), config.metricsToken);
  if (metricsListener) {
    await listen(metricsListener, config.metricsPort!, config.metricsHost);
    log.info({ metrics: `http://${config.metricsHost}:${(metricsListener.address() as { port: number }).port}/metrics` }, 'serving metrics of every worker');
  }

  const live = new Map<number, { worker: Worker; listened: boolean; cleaner: boolean }>();
  const crashes: number[] = [];
  const restartTimers = new Set<NodeJS.Timeout>();
  let ready = false;
  let stopping = false;
  let exitCode = 0;

  // One worker runs the cleanup job (N workers sweeping would do the same deletes N times); when it
  // dies, its replacement takes the job over.
  // Workers get the young-generation cap of `npm start` even when the primary was started without
  // it (`gatehouse serve`): V8 otherwise grows it to 64 MB per worker (docs/performance.md, Memory).
  cluster.setupPrimary({ execArgv: withSemiSpaceCap(process.execArgv) });
  const fork = () => {
    const cleaner = ![...live.values()].some((w) => w.cleaner);
    const worker = cluster.fork(cleaner ? { [CLEANUP_WORKER]: '1' } : {});
    live.set(worker.id, { worker, listened: false, cleaner });
  };

  const finishIfDone = () => {
    if (stopping && live.size === 0) {
      log.info({ exitCode }, 'every worker has stopped');
      process.exit(exitCode);
    }
  };

  const stop = (signal: string, code = 0) => {
    if (stopping) return;
    stopping = true;
    exitCode = code;
    for (const timer of restartTimers) clearTimeout(timer);
    log.info({ signal, workers: live.size }, 'shutting down: workers finish their in-flight requests');
    metricsListener?.close();
    metricsListener?.closeAllConnections();
    for (const { worker } of live.values()) worker.process.kill('SIGTERM');
    // Each worker bounds its own drain; a worker still alive well after that is killed.
    setTimeout(() => {
      log.error({ workers: live.size }, 'workers did not stop in time; killing them');
      exitCode = 1;
      for (const { worker } of live.values()) worker.process.kill('SIGKILL');
    }, (config.shutdownTimeout + 2 * SHUTDOWN_MARGIN_S) * 1000).unref();
    finishIfDone();
  };

  cluster.on('listening', (worker) => {
    const entry = live.get(worker.id);
    if (entry) entry.listened = true;
    if (!ready && [...live.values()].filter((w) => w.listened).length >= config.workers) {
      ready = true;
      log.info({ ...readyFields(config), workers: config.workers }, 'gatehouse is ready');
    }
  });

  cluster.on('exit', (worker, code, signal) => {
    const entry = live.get(worker.id);
    live.delete(worker.id);
    if (stopping) {
      if (code !== 0) exitCode = 1;
      finishIfDone();
      return;
    }
    const fields = { worker: worker.id, pid: worker.process.pid, code, signal };
    if (!ready && !entry?.listened) {
      // A worker that cannot start (port taken, store unreachable) would fail again: give up.
      log.error(fields, 'a worker failed to start; stopping');
      stop('startup failure', 1);
      return;
    }
    const now = Date.now();
    crashes.push(now);
    while (crashes.length > 0 && crashes[0]! < now - CRASH_WINDOW_MS) crashes.shift();
    const delay = Math.min(RESTART_MAX_MS, RESTART_BASE_MS * 2 ** (crashes.length - 1));
    log.error({ ...fields, restartInMs: delay }, 'a worker died unexpectedly; restarting it');
    const timer = setTimeout(() => {
      restartTimers.delete(timer);
      if (!stopping) fork();
    }, delay);
    restartTimers.add(timer);
  });

  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));

  for (let i = 0; i < config.workers; i++) fork();
}

/**
 * The first line of the primary (or of the only process): which gatehouse, on which store; then a
 * warning for each GATEHOUSE_* variable that is no setting of this version (decisions D7), which
 * would otherwise be ignored in silence.
 */
function logStore(log: Pick<Logger, 'info' | 'warn'>, config: Config): void {
  log.info({ version: VERSION, store: storeDescription(config) }, `gatehouse ${VERSION} starting; store: ${storeDescription(config)}`);
  for (const unknown of unknownVariables(process.env)) {
    const { variable, suggestion } = unknown;
    log.warn({ variable, ...(suggestion === undefined ? {} : { suggestion }) }, unknownVariableWarning(unknown));
  }
}

/** The ready line names the version and the store too: it is the line people look for. */
function readyFields(config: Config): Record<string, string> {
  return { version: VERSION, store: storeDescription(config), issuer: config.issuer, discovery: `${config.issuer}/.well-known/openid-configuration` };
}

if (import.meta.main) {
  serve().catch((error: unknown) => {
    process.stderr.write(`gatehouse: ${(error as Error).message}\n`);
    process.exit(1);
  });
}
