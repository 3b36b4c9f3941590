/**
 * The composition root: the only module that knows the concrete store. It opens the store,
 * makes sure a signing key exists, and builds the HTTP server over the abstract dependencies.
 */
import type { FastifyInstance } from 'fastify';
import { settingError, type Config } from './config.ts';
import { IdentityError } from './identity/errors.ts';
import { registrationOrganization } from './oauth/account/registration.ts';
import { SIGNING_ALGS } from './protocol/constants.ts';
import { KeyRing } from './crypto/key-ring.ts';
import type { HttpDeps } from './http/deps.ts';
import { configuredTheme } from './http/interaction/theme.ts';
import { buildHttpServer, type ServerOptions } from './http/server.ts';
import { systemClock, type Clock } from './lib/clock.ts';
import { cryptoRandom, type Random } from './lib/random.ts';
import { scheduleCleanup } from './oauth/cleanup.ts';
import { IDENTITY_API_POLICY, seedIdentityApiPolicy } from './oauth/policy/identity-api.ts';
import { alignManagementClients } from './manage/management-clients.ts';
import { administration } from './manage/administration.ts';
import { administratorGroups, markAdministratorGroups } from './identity/administrators.ts';
import { RemoteJwks, type RemoteJwksOptions } from './adapters/remote-jwks.ts';
import type { ClientAuthDeps, JwksFetcher } from './oauth/client-auth/method.ts';
import { openAuditFile } from './observability/audit-file.ts';
import { auditLogger, DeferredAuditSink, loggerAuditSink, type AuditSink } from './observability/audit.ts';
import { storeAuditSink, teeAuditSink, type AuditStoreLog, type StoredAuditSink } from './observability/audit-store-sink.ts';
import { migrateToLatest, openDatabase, sqliteAccessWarnings } from './storage/sql/database.ts';
import { openSqlStore, type SqlStore } from './storage/sql/store.ts';
import type { OpenOptions } from './storage/sql/database.ts';
import { Metrics, metricsServer, processExposition, SESSION_COUNT_LIMIT } from './observability/metrics.ts';
import type { Server } from 'node:http';
import { ConflictError, type Store } from './storage/ports.ts';
import { hostname } from 'node:os';
import { backchannelLogoutTransport } from './adapters/backchannel-logout.ts';
import { webhookTransport } from './adapters/webhook-transport.ts';
import { subscribedOnly, webhookAuditWriter, WebhookSubscriptions } from './webhooks/subscriptions.ts';
import { smtpTransport } from './adapters/smtp.ts';
import { mailComposer } from './adapters/mail/render.ts';
import type { MailService } from './oauth/outbox/mail.ts';
import { retryPolicy } from './oauth/outbox/retry.ts';
import { OutboxSender, type OutboxSenderDeps } from './oauth/outbox/sender.ts';
import type { Theme } from './http/interaction/theme.ts';

export interface Runtime {
  clock?: Clock;
  random?: Random;
  /** Where audit events go; by default GATEHOUSE_AUDIT_LOG, else the server's log. */
  audit?: AuditSink;
  /**
   * Whether this process runs the cleanup job (default: yes, when GATEHOUSE_CLEANUP_INTERVAL is
   * not 0). In a cluster one worker does; the sweep is the same work whoever runs it.
   */
  cleanup?: boolean;
  /**
   * Whether this process serves the metrics listener when GATEHOUSE_METRICS_PORT is set (default:
   * yes). A cluster worker does not: it answers the primary, which serves the sum of the workers.
   */
  metricsListener?: boolean;
  /**
   * Whether other server processes write the same SQLite file (default: no). A cluster worker
   * says yes: its groups then commit as soon as no turn of its own waits, rather than at the end of
   * the event loop's round, so the workers do not hold SQLite's write lock against each other
   * (src/storage/sql/sqlite-group-commit.ts, decisions PR38).
   */
  sharedSqliteFile?: boolean;
  /**
   * Whether this process runs the outbox sender on a timer (default: yes, when
   * GATEHOUSE_OUTBOX_INTERVAL is not 0). Tests say no and call `outbox.sender.tick()`.
   */
  outbox?: boolean;
  /** Limits of the jwks_uri fetcher (src/adapters/remote-jwks.ts), for tests; or a whole fetcher. */
  jwks?: Partial<RemoteJwksOptions> | JwksFetcher;
  /**
   * Told the SQL text of every statement the store runs, BEGIN and COMMIT included (tests count
   * them per request: test/http/statement-counts.test.ts). Kysely's log hook, so it costs
   * nothing when unset.
   */
  onStatement?: (sqlText: string) => void;
}

/**
 * Opens the configured store (migrating it to the latest schema). A server (`serving`) also bounds
 * every query by GATEHOUSE_DATABASE_TIMEOUT, so no request hangs on an unreachable database; the
 * CLI waits as long as its command takes. `create: false` refuses a store that does not exist yet
 * (StoreMissingError) rather than creating it: the CLI's commands other than `migrate`.
 */
export async function openStore(config: Config, options: { serving?: boolean; create?: boolean; onQuery?: OpenOptions['onQuery']; onCommit?: OpenOptions['onCommit']; groupAcrossRounds?: boolean } = {}): Promise<SqlStore> {
  const timeoutMs = config.databaseTimeout * 1000;
  return openSqlStore(config.databaseUrl, {
    create: options.create,
    poolSize: config.databasePoolSize,
    connectTimeoutMs: timeoutMs,
    queryTimeoutMs: options.serving ? timeoutMs : 0,
    namedStatements: config.databaseNamedStatements,
    ...(options.onQuery ? { onQuery: options.onQuery } : {}),
    ...(options.onCommit ? { onCommit: options.onCommit } : {}),
    groupAcrossRounds: options.groupAcrossRounds ?? false,
  });
}

/** The store's query listener: the metrics when they are served, the runtime's statement counter when set; none otherwise (no cost). */
function queryListener(config: Config, runtime: Runtime, observe: (seconds: number, failed: boolean) => void): { onQuery?: NonNullable<OpenOptions['onQuery']> } {
  const metered = config.metricsPort !== undefined;
  const counted = runtime.onStatement;
  if (!metered && !counted) return {};
  return {
    onQuery: (seconds, failed, sqlText) => {
      if (metered) observe(seconds, failed);
      counted?.(sqlText);
    },
  };
}

/** Brings the configured store's schema up to date; the names of the migrations that ran (`gatehouse migrate`). */
export async function migrateStore(config: Config): Promise<string[]> {
  const database = openDatabase(config.databaseUrl, { poolSize: 1, connectTimeoutMs: config.databaseTimeout * 1000 });
  try {
    return await migrateToLatest(database.db);
  } finally {
    await database.close();
  }
}

export function keyRingFor(config: Config, store: Store, clock: Clock = systemClock): KeyRing {
  return new KeyRing(store.keys, clock, {
    encryptionSecret: config.keyEncryptionKey,
    // A retired key stays published while anything it signed may still be verified (it signs
    // until the new key's activation delay is over; the grace period counts from then).
    retiredKeyGraceMs: (Math.max(config.idTokenTtl, config.accessTokenTtl) + 300) * 1000,
    // A rotation made elsewhere (another instance, the CLI) is picked up within this time.
    cacheMs: config.keyCacheTtl * 1000,
  });
}

/** The outbox of a process: its sender (one transport per configured channel) and mail, when configured. */
export interface Outbox {
  sender: OutboxSender;
  /** undefined: GATEHOUSE_SMTP_URL is unset, mail is off. */
  mail: MailService | undefined;
  /** Closes the transports (SMTP connections). */
  close(): void;
}

/**
 * The outbox sender over `store` with the transports the configuration gives (SMTP when
 * GATEHOUSE_SMTP_URL is set), and the mail service of the use cases: for the server and for the
 * CLI's `gatehouse mail test`, which sends its own message.
 */
export function outboxFor(config: Config, store: Store, deps: Pick<OutboxSenderDeps, 'clock' | 'random' | 'audit' | 'observe' | 'log'> & { theme: Theme | undefined; keyRing?: KeyRing | undefined }): Outbox {
  const smtp = config.smtpUrl !== undefined && config.mailFrom !== undefined ? smtpTransport({ ...config, smtpUrl: config.smtpUrl, mailFrom: config.mailFrom }) : undefined;
  // Logout tokens need no settings but the key ring: every server sends them (the CLI, which has none here, does not).
  const outbound = { allowLoopback: config.outboundLoopback, allowPrivate: config.outboundPrivate, timeoutMs: config.outboundTimeout * 1000 };
  const logoutTokens = deps.keyRing && backchannelLogoutTransport({ issuer: config.issuer, clients: store.clients, keyRing: deps.keyRing, clock: deps.clock, outbound, deliveries: store.logoutDeliveries });
  // Webhooks need nothing but the store: every process that sends can send them (docs/webhooks.md).
  const webhooks = webhookTransport({ webhooks: store.webhooks, clock: deps.clock, outbound, keyEncryptionKey: config.keyEncryptionKey });
  const { keyRing: _keyRing, ...senderDeps } = deps;
  const sender = new OutboxSender({
    outbox: store.outbox,
    ...senderDeps,
    transports: [...(smtp ? [smtp] : []), ...(logoutTokens ? [logoutTokens] : []), webhooks],
    policy: retryPolicy(config.outboxMaxAttempts),
    // Longer than the slowest send: every SMTP timeout in a row, with room to spare.
    leaseMs: Math.max(300_000, 10 * config.smtpTimeout * 1000),
    instance: `${hostname()}/${process.pid}/${deps.random.hex(4)}`,
  });
  const mail: MailService | undefined = smtp ? { composer: mailComposer({ productName: deps.theme?.productName ?? 'gatehouse' }), deliverNow: (id) => sender.deliverNow(id) } : undefined;
  return { sender, mail, close: () => smtp?.close() };
}

export interface Gatehouse {
  app: FastifyInstance;
  store: Store;
  deps: HttpDeps;
  /** GATEHOUSE_METRICS_PORT set: this process's metrics, and its listener unless a cluster worker. */
  metrics?: { metrics: Metrics; server: Server | undefined };
  /** GATEHOUSE_AUDIT_STORE on: the sink that keeps audit events in the store; `flush()` stores what waits (tests). */
  auditStore?: StoredAuditSink;
  /** The outbox's sender and mail (tests tick it). */
  outbox: Outbox;
  /**
   * Webhooks (docs/webhooks.md): the subscription snapshot (tests refresh it, as another instance's
   * timer would) and `flush()`, which writes the audit events that wait and the webhooks they cause.
   */
  webhooks: { subscriptions: WebhookSubscriptions; flush(): Promise<void> };
  close(): Promise<void>;
}

/** Everything a running server needs, wired; `close()` stops HTTP and then the store. */
export async function createGatehouse(config: Config, runtime: Runtime = {}, options: ServerOptions = {}): Promise<Gatehouse> {
  const clock = runtime.clock ?? systemClock;
  const random = runtime.random ?? cryptoRandom;
  // The login theme (GATEHOUSE_THEME_DIR), read and validated before anything is opened.
  const theme = configuredTheme(config);
  // Metrics are collected only when they are served (GATEHOUSE_METRICS_PORT).
  let metrics: Metrics | undefined;
  const store = await openStore(config, {
    serving: true,
    ...queryListener(config, runtime, (seconds, failed) => metrics?.observeQuery(seconds, failed)),
    ...(config.metricsPort !== undefined ? { onCommit: (turns: number) => metrics?.observeCommit(turns) } : {}),
    groupAcrossRounds: !runtime.sharedSqliteFile,
  });
  const auditFile = runtime.audit === undefined && config.auditLog !== undefined ? openAuditFile(config.auditLog, { sync: false }) : undefined;
  // Without a file, audit events go to the server's own log, which exists only once the server does.
  const toServerLog = new DeferredAuditSink();
  try {
    const keyRing = keyRingFor(config, store, clock);
    // Seals keys left in the clear, and stops here when the sealed ones do not open (KeyEncryptionError).
    const sealed = await keyRing.prepare();
    // The identity API's default authorization policy (docs/decisions.md PO12): created if absent and
    // attached to the API client if it has none, in one unit of work that instances starting
    // together may all run.
    const identityApiPolicy = config.apiClientId === undefined ? undefined : await seedIdentityApiPolicy({ store, clock }, { apiClientId: config.apiClientId, apiGroup: config.apiGroup });
    // The console's and the management API's registrations get this server's issuer, whatever
    // issuer `gatehouse admin bootstrap` was run with (docs/decisions.md CO14); one unit of work
    // that instances starting together may all run.
    // A resource URI another client took is no reason to refuse every sign-in: said, not fatal.
    const alignedClients = await alignManagementClients({ store, clock }, config).catch((error: unknown) => {
      if (error instanceof ConflictError) return error;
      throw error;
    });
    // The configured administrator groups keep a mark in the store that outlives a change of the
    // settings, so the identity API stays out of them (docs/decisions.md AD4): one conditional
    // statement, idempotent, that instances starting together may all run.
    const markedGroups = await markAdministratorGroups(store, administratorGroups(config));
    // The organization self-registered users join (docs/registration.md) must exist and hold users: checked now, not at the first registration.
    if (config.registration !== 'off') await registrationOrganization(store, config.registrationOrganization).catch((error: unknown) => Promise.reject(error instanceof IdentityError ? settingError(config, 'GATEHOUSE_REGISTRATION_ORGANIZATION', error) : error));
    if (config.metricsPort !== undefined) {
      metrics = new Metrics({
        // SQLite has no pool: no pool metrics.
        ...(store.database.dialect === 'postgres' ? { pool: () => store.database.poolStats() } : {}),
        liveSessions: () => store.sessions.countLive(clock.now(), SESSION_COUNT_LIMIT),
        outboxDepth: () => store.outbox.countByStatus(),
        activeKeysCreatedAt: () => Promise.all(SIGNING_ALGS.map(async (alg) => ({ alg, createdAt: (await keyRing.activeKey(alg).catch(() => undefined))?.createdAt }))),
        now: () => clock.now(),
      });
    }
    const copy = runtime.audit ?? auditFile?.sink ?? toServerLog;
    // The file or log copy is written first and synchronously as before; the store's copy is
    // batched (src/observability/audit-store-sink.ts). Its errors go to the server log, once it exists.
    const storeLog: { to?: AuditStoreLog } = {};
    // Webhooks are written with the audit events that cause them, in the batch's transaction
    // (src/webhooks/subscriptions.ts; decisions WH11–WH14). With the store's copy off, the batching
    // sink still runs for them, passed only the events some endpoint wants.
    const subscriptions = new WebhookSubscriptions(store.webhooks, { error: (fields, message) => storeLog.to?.error(fields, message) });
    await subscriptions.refresh();
    const batched = storeAuditSink(webhookAuditWriter(store, subscriptions, config.auditStore), clock, { error: (fields, message) => storeLog.to?.error(fields, message) });
    const auditStore = config.auditStore ? batched : undefined;
    const sink = teeAuditSink(copy, auditStore ?? subscribedOnly(batched, subscriptions));
    // Logins, grants and throttling are counted from the audit events on their way out.
    const audit = metrics ? metrics.countingSink(sink) : sink;
    // What client-authentication methods verify with (src/oauth/client-auth/method.ts): built here, once.
    const jwks = runtime.jwks !== undefined && 'get' in runtime.jwks ? runtime.jwks : new RemoteJwks(clock, runtime.jwks as Partial<RemoteJwksOptions> | undefined);
    const clientAuth: ClientAuthDeps = { clock, issuer: config.issuer, jwks, assertions: store.assertions, keyEncryptionKey: config.keyEncryptionKey };
    const outboxLog: { to?: OutboxSenderDeps['log'] } = {};
    const outbox = outboxFor(config, store, {
      keyRing,
      clock,
      random,
      audit,
      theme,
      ...(metrics ? { observe: metrics.observeOutbox.bind(metrics) } : {}),
      log: { info: (f, m) => outboxLog.to?.info(f, m), warn: (f, m) => outboxLog.to?.warn(f, m), error: (f, m) => outboxLog.to?.error(f, m) },
    });
    const admin = administration({ store, clock, random, audit, keyRing, settings: config, mail: outbox.mail, webhooksChanged: () => subscriptions.refresh() });
    const deps: HttpDeps = { config: { ...config, theme }, store, keyRing, clock, random, audit, clientAuth, admin, mail: outbox.mail };
    const app = await buildHttpServer(deps, metrics ? { ...options, observeRequest: metrics.observeRequest.bind(metrics) } : options);
    toServerLog.attach(loggerAuditSink(auditLogger(app.log, config.logLevel)));
    storeLog.to = app.log.child({ component: 'audit-store' });
    outboxLog.to = app.log.child({ component: 'outbox' });
    // Every instance may send: the claims give each message to one (docs/mail.md, "The outbox").
    if (config.outboxInterval > 0 && runtime.outbox !== false) outbox.sender.start(config.outboxInterval * 1000);
    subscriptions.start();
    if (outbox.mail === undefined) app.log.debug({ component: 'outbox' }, 'mail is off: GATEHOUSE_SMTP_URL is unset, so the features that send mail are off (docs/mail.md)');
    else if (config.smtpStarttls === 'off') app.log.warn({ component: 'outbox' }, 'GATEHOUSE_SMTP_STARTTLS=off: mail goes to the SMTP relay unencrypted; use it only for a relay on this machine or its private network');
    // An existing SQLite file or folder is the operator's: said, not changed (docs/operations.md, "File permissions").
    if (config.sqlitePath !== undefined && config.sqlitePath !== ':memory:') for (const warning of sqliteAccessWarnings(config.sqlitePath)) app.log.warn({ sqlitePath: config.sqlitePath }, warning);
    if (identityApiPolicy?.created) app.log.info({ policy: IDENTITY_API_POLICY, group: config.apiGroup }, 'created the identity API\'s authorization policy: members of GATEHOUSE_API_GROUP may call the API with a bearer token (gatehouse policy update identity-api changes it)');
    if (identityApiPolicy?.attached) app.log.info({ policy: IDENTITY_API_POLICY, clientId: config.apiClientId }, 'attached the identity-api policy to the API client (GATEHOUSE_API_CLIENT_ID)');
    if (alignedClients instanceof ConflictError) app.log.warn({ err: alignedClients, issuer: config.issuer }, 'could not register this issuer\'s URIs for the web console and the management API');
    else if (alignedClients.length > 0) app.log.info({ clients: alignedClients, issuer: config.issuer }, 'registered this issuer\'s URIs for the web console and the management API (they named another origin)');
    if (markedGroups.length > 0) app.log.info({ groups: markedGroups }, 'marked the configured administrator groups as administrator groups (docs/identity-api.md, "Administrators are out of reach")');
    if (sealed > 0) app.log.info({ sealed }, 'sealed the signing keys stored in the clear with GATEHOUSE_KEY_ENCRYPTION_KEY');
    // Expired codes, tokens, sessions and throttling counters are deleted in the background.
    const cleanup = config.cleanupInterval > 0 && runtime.cleanup !== false ? scheduleCleanup({ store, clock, auditRetentionMs: config.auditRetention * 86_400_000, logoutOnExpiry: config.backchannelLogoutOnExpiry }, { intervalMs: config.cleanupInterval * 1000, log: app.log.child({ component: 'cleanup' }) }) : undefined;
    if (cleanup) app.log.info({ component: 'cleanup', intervalSeconds: config.cleanupInterval }, 'this process runs the cleanup job');
    let metricsListener: Server | undefined;
    if (metrics && runtime.metricsListener !== false) {
      metricsListener = metricsServer(processExposition(metrics), config.metricsToken);
      await listen(metricsListener, config.metricsPort!, config.metricsHost);
      app.log.info({ metrics: `http://${config.metricsHost}:${(metricsListener.address() as { port: number }).port}/metrics` }, 'serving metrics');
    } else if (metrics) {
      metrics.answerClusterPrimary();
    }
    return {
      app,
      store,
      deps,
      ...(metrics ? { metrics: { metrics, server: metricsListener } } : {}),
      ...(auditStore ? { auditStore } : {}),
      outbox,
      webhooks: { subscriptions, flush: () => batched.flush() },
      async close() {
        subscriptions.stop();
        const metricsClosed = metricsListener && new Promise<void>((resolve) => metricsListener.close(() => resolve()));
        metricsListener?.closeAllConnections();
        const cleanupStopped = cleanup?.stop();
        // Closing stops new connections and lets requests in flight finish. Node closes the idle
        // keep-alive connections only once, when closing starts: a connection whose request ends
        // later would hold the exit back for the keep-alive timeout (72 s), so keep closing them.
        const idleSweep = setInterval(() => app.server.closeIdleConnections(), 50);
        // Closing also stops Node's headers and request timeouts (server.close() clears their
        // checking interval), so a client that never finishes its request would hold the exit
        // back for ever: after the drain time every connection still open is cut.
        const drainOver = setTimeout(() => {
          app.server.getConnections((_error, count) => {
            app.log.warn({ connections: count, shutdownTimeoutSeconds: config.shutdownTimeout }, 'drain time over: closing the connections still open');
            app.server.closeAllConnections();
          });
        }, config.shutdownTimeout * 1000);
        try {
          await app.close();
        } finally {
          clearInterval(idleSweep);
          clearTimeout(drainOver);
        }
        await cleanupStopped;
        // A tick in progress finishes and marks what it sent before the store closes.
        await outbox.sender.stop();
        outbox.close();
        await metricsClosed;
        // The requests are over: what they emitted is stored before the store closes.
        await batched.flush();
        await store.close();
        await auditFile?.close();
      },
    };
  } catch (error) {
    await store.close();
    await auditFile?.close();
    throw error;
  }
}

/** Listens on `port` at `host`; rejects when it cannot (port taken). */
export function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}
