/**
 * Prometheus metrics (GATEHOUSE_METRICS_PORT; docs/operations.md, "Metrics"). One registry per
 * process; in a cluster every worker keeps its own and the primary sums them on each scrape
 * (prom-client's AggregatorRegistry over node:cluster messages), so counters and histograms add
 * up across workers. Values that every worker reads from the shared store (live sessions, key
 * age) are taken once (`max`) instead of summed.
 *
 * Logins, grants and throttling are counted from the audit events the core already emits (a sink
 * that counts, then passes the event on), so src/oauth knows nothing of Prometheus. Every label
 * value comes from a fixed set: the route pattern, never the URL; an event's kind, never a name.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { timingSafeEqual } from 'node:crypto';
import { AggregatorRegistry, collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { AuditEvent, AuditSink } from './audit.ts';

/** What the metrics read when scraped; each may fail, and then that metric is left out. */
export interface MetricSources {
  /** PostgreSQL pool: connections open, idle, and requests waiting for one; undefined on SQLite. */
  pool?: () => { total: number; idle: number; waiting: number; max: number } | undefined;
  /** Live SSO sessions, counted up to SESSION_COUNT_LIMIT. */
  liveSessions?: () => Promise<number>;
  /** When each algorithm's active signing key was generated (ms; undefined: it cannot be loaded), and the clock's now. */
  activeKeysCreatedAt?: () => Promise<{ alg: string; createdAt: number | undefined }[]>;
  now?: () => number;
  /** The outbox's messages by status (pending, delivered, dead). */
  outboxDepth?: () => Promise<Record<string, number>>;
}

/** A scrape counts live sessions no further than this: the gauge then reads this value. */
export const SESSION_COUNT_LIMIT = 1_000_000;

/** Seconds: from a fast userinfo on SQLite (~1 ms) to the 5 s database timeout and beyond. */
const HTTP_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const QUERY_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 5];
/** Turns per SQLite COMMIT; the largest group is MAX_UNITS (64). */
const COMMIT_BUCKETS = [1, 2, 4, 8, 16, 32, 64];

export type LoginOutcome = 'succeeded' | 'unknown_user' | 'wrong_password' | 'not_enabled' | 'throttled' | 'hint_mismatch' | 'second_factor_required';

export class Metrics {
  readonly registry = new Registry();
  readonly #http: Histogram<'method' | 'route' | 'status'>;
  readonly #logins: Counter<'outcome'>;
  readonly #grants: Counter<'grant_type' | 'outcome'>;
  readonly #clientAuthFailures: Counter<'endpoint'>;
  readonly #throttle: Counter<'kind' | 'event'>;
  readonly #logouts: Counter;
  readonly #factors: Counter<'event' | 'kind'>;
  readonly #queries: Histogram<'outcome'>;
  readonly #commits: Histogram;
  readonly #outbox: Counter<'channel' | 'outcome'>;

  constructor(sources: MetricSources = {}) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    this.#http = new Histogram({
      name: 'gatehouse_http_request_duration_seconds',
      help: 'HTTP requests answered, by method, route pattern and status code, and the time to answer them; _count is the request count.',
      labelNames: ['method', 'route', 'status'],
      buckets: HTTP_BUCKETS,
      registers,
    });
    this.#logins = new Counter({ name: 'gatehouse_logins_total', help: 'Password logins at the login form and through the password grant, by outcome.', labelNames: ['outcome'], registers });
    this.#grants = new Counter({
      name: 'gatehouse_token_grants_total',
      help: 'Token endpoint grants by grant_type and outcome: issued; a replayed code / reused refresh token (the family is revoked); a retried code (spent by a refused redemption, e.g. a wrong code_verifier; it had no tokens). Other refusals show as 4xx of the token route.',
      labelNames: ['grant_type', 'outcome'],
      registers,
    });
    this.#clientAuthFailures = new Counter({ name: 'gatehouse_client_authentication_failures_total', help: 'Failed client authentications, by endpoint.', labelNames: ['endpoint'], registers });
    this.#throttle = new Counter({
      name: 'gatehouse_throttle_events_total',
      help: 'Throttling: attempts refused while waiting (refused) and counters reaching their threshold (lockout), by kind (login, client_auth, identity_api, second_factor, silent_authorization).',
      labelNames: ['kind', 'event'],
      registers,
    });
    // 1 per process: summed over a cluster's workers, how many answered this scrape.
    new Gauge({ name: 'gatehouse_processes', help: 'Processes serving HTTP whose metrics this scrape holds (the cluster workers that answered).', registers }).set(1);
    this.#logouts = new Counter({ name: 'gatehouse_logouts_total', help: 'SSO sessions ended by logout.', registers });
    this.#factors = new Counter({
      name: 'gatehouse_second_factor_events_total',
      help: 'Second factors: codes verified, failed and throttled; factors enrolled, renamed, removed and reset, TOTP secrets sealed; by event and, where one is known, the kind (totp, recovery_codes, passkey, email_otp); e-mail codes sent, refused, used and failed (email_code_*).',
      labelNames: ['event', 'kind'],
      registers,
    });
    this.#queries = new Histogram({ name: 'gatehouse_store_query_duration_seconds', help: 'Store queries and their duration, by outcome (ok, error).', labelNames: ['outcome'], buckets: QUERY_BUCKETS, registers });
    this.#commits = new Histogram({
      name: 'gatehouse_store_group_commit_turns',
      help: 'SQLite: each COMMIT and how many units of work and statements it made durable at once (group commit); _count is the commits, _sum the turns.',
      buckets: COMMIT_BUCKETS,
      registers,
    });

    const pool = sources.pool;
    if (pool) {
      new Gauge({
        name: 'gatehouse_store_pool_connections',
        help: 'PostgreSQL connections of this process: open (idle and in use) and idle.',
        labelNames: ['state'],
        registers,
        collect() {
          const stats = pool();
          if (!stats) return;
          this.set({ state: 'in_use' }, stats.total - stats.idle);
          this.set({ state: 'idle' }, stats.idle);
        },
      });
      new Gauge({ name: 'gatehouse_store_pool_waiting', help: 'Store requests waiting for a free PostgreSQL connection.', registers, collect() { this.set(pool()?.waiting ?? 0); } });
      new Gauge({ name: 'gatehouse_store_pool_max', help: 'Most PostgreSQL connections of a process (GATEHOUSE_DATABASE_POOL_SIZE), summed over workers.', registers, collect() { this.set(pool()?.max ?? 0); } });
    }
    this.#outbox = new Counter({
      name: 'gatehouse_outbox_deliveries_total',
      help: 'Attempts at sending outbox messages (mail), by channel and outcome: delivered; retry (failed, tried again later); dead (failed, given up); lease_lost (another instance took the message over meanwhile).',
      labelNames: ['channel', 'outcome'],
      registers,
    });
    const outboxDepth = sources.outboxDepth;
    if (outboxDepth) {
      new Gauge({
        name: 'gatehouse_outbox_messages',
        help: 'Messages in the outbox by status (pending: waiting or retrying; delivered; dead: given up, see the console or GET /manage/api/v1/outbox?status=dead).',
        labelNames: ['status'],
        registers,
        aggregator: 'max',
        async collect() {
          this.reset();
          const counts = await outboxDepth().catch(() => undefined);
          for (const [status, count] of Object.entries(counts ?? {})) this.set({ status }, count);
        },
      });
    }
    const liveSessions = sources.liveSessions;
    if (liveSessions) {
      new Gauge({
        name: 'gatehouse_sso_sessions',
        help: `Live SSO sessions in the store (counted at scrape, up to ${SESSION_COUNT_LIMIT}).`,
        registers,
        aggregator: 'max',
        async collect() {
          this.reset();
          // A store that does not answer leaves the gauge out of this scrape, not the scrape failed.
          const count = await liveSessions().catch(() => undefined);
          if (count !== undefined) this.set(count);
        },
      });
    }
    const keysCreatedAt = sources.activeKeysCreatedAt;
    const now = sources.now ?? Date.now;
    if (keysCreatedAt) {
      new Gauge({
        name: 'gatehouse_signing_key_age_seconds',
        help: 'Age of the signing key that signs now, per algorithm (each rotates on its own); absent when it cannot be loaded.',
        labelNames: ['alg'],
        registers,
        aggregator: 'max',
        async collect() {
          this.reset();
          for (const { alg, createdAt } of await keysCreatedAt().catch(() => [])) if (createdAt !== undefined) this.set({ alg }, (now() - createdAt) / 1000);
        },
      });
    }
  }

  /** One answered request; `route` is the pattern matched (e.g. `/uas/oauth2/token`), or `unmatched`. */
  observeRequest(method: string, route: string, status: number, seconds: number): void {
    this.#http.observe({ method, route, status: String(status) }, seconds);
  }

  /** One attempt at an outbox message, by its outcome (src/oauth/outbox/sender.ts). */
  observeOutbox(channel: string, outcome: string): void {
    this.#outbox.inc({ channel, outcome });
  }

  observeQuery(seconds: number, failed: boolean): void {
    this.#queries.observe({ outcome: failed ? 'error' : 'ok' }, seconds);
  }

  /** One COMMIT on SQLite and the turns it made durable (src/storage/sql/sqlite-group-commit.ts). */
  observeCommit(turns: number): void {
    this.#commits.observe(turns);
  }

  /** Counts each audit event it knows, then passes every event on to `next`. */
  countingSink(next: AuditSink): AuditSink {
    return {
      emit: (event) => {
        this.#count(event);
        next.emit(event);
      },
    };
  }

  #count(event: AuditEvent): void {
    switch (event.event) {
      case 'login.succeeded':
        return this.#logins.inc({ outcome: 'succeeded' });
      case 'login.failed':
        return this.#logins.inc({ outcome: event.reason });
      case 'login.throttled':
        this.#logins.inc({ outcome: 'throttled' });
        return this.#throttle.inc({ kind: 'login', event: 'refused' });
      case 'login.hint_mismatch':
        return this.#logins.inc({ outcome: 'hint_mismatch' });
      // A right password that a second factor must complete (issue 24): `succeeded` follows if it does.
      case 'login.second_factor_required':
        return this.#logins.inc({ outcome: 'second_factor_required' });
      case 'token.issued':
        return this.#grants.inc({ grant_type: event.grantType, outcome: 'issued' });
      case 'token.refreshed':
        return this.#grants.inc({ grant_type: 'refresh_token', outcome: 'issued' });
      case 'code.replayed':
        return this.#grants.inc({ grant_type: 'authorization_code', outcome: 'replayed' });
      case 'code.retried':
        return this.#grants.inc({ grant_type: 'authorization_code', outcome: 'retried' });
      case 'refresh_token.reused':
        return this.#grants.inc({ grant_type: 'refresh_token', outcome: 'reused' });
      case 'client_auth.failed':
        return this.#clientAuthFailures.inc({ endpoint: event.endpoint });
      case 'identity_api.throttled':
        return this.#throttle.inc({ kind: 'identity_api', event: 'refused' });
      case 'authorization.rate_limited':
        return this.#throttle.inc({ kind: 'silent_authorization', event: 'refused' });
      case 'lockout':
        return this.#throttle.inc({ kind: event.kind, event: 'lockout' });
      case 'logout':
        return this.#logouts.inc();
      case 'factor.verified':
      case 'factor.enrolled':
      case 'factor.removed':
      case 'factor.renamed':
        return this.#factors.inc({ event: event.event.slice('factor.'.length), kind: event.kind });
      case 'factor.throttled':
        this.#throttle.inc({ kind: 'second_factor', event: 'refused' });
        return this.#factors.inc({ event: 'throttled' });
      case 'factor.failed':
      case 'factor.reset':
        return this.#factors.inc({ event: event.event.slice('factor.'.length) });
      // E-mail codes: sends (and refused sends), uses and wrong ones, by purpose in the event's name.
      case 'email_code.sent':
      case 'email_code.refused':
      case 'email_code.used':
      case 'email_code.failed':
        return this.#factors.inc({ event: `email_code_${event.event.slice('email_code.'.length)}`, kind: 'email_otp' });
      // Counted by the secrets sealed, not the runs: a second run that seals none adds nothing.
      case 'factor.secrets_sealed':
        return this.#factors.inc({ event: 'secrets_sealed' }, event.sealed);
      default:
        return;
    }
  }

  /** Makes this registry the one a cluster primary's AggregatorRegistry asks this worker for. */
  answerClusterPrimary(): void {
    // Constructing one is what makes prom-client listen for the primary's requests in a worker
    // (setRegistries alone does not).
    new AggregatorRegistry();
    AggregatorRegistry.setRegistries([this.registry]);
  }
}

export interface Exposition {
  contentType: string;
  text(): Promise<string>;
}

/** The exposition of a single process. */
export function processExposition(metrics: Metrics): Exposition {
  return { contentType: metrics.registry.contentType, text: () => metrics.registry.metrics() };
}

/** The exposition of a cluster primary: the workers' registries, asked at each scrape and summed. */
export function clusterExposition(): Exposition {
  const aggregator = new AggregatorRegistry();
  return { contentType: aggregator.contentType, text: () => aggregator.clusterMetrics() };
}

/**
 * The metrics listener: `GET /metrics` and nothing else, on its own address
 * (GATEHOUSE_METRICS_HOST, 127.0.0.1 by default), so the public port never shows it. With a token
 * (GATEHOUSE_METRICS_TOKEN), a scrape must send `Authorization: Bearer <token>` (RFC 6750 §2.1).
 */
export function metricsServer(exposition: Exposition, token: string | undefined): Server {
  const expected = token === undefined ? undefined : Buffer.from(`Bearer ${token}`);
  return createServer((request: IncomingMessage, response: ServerResponse) => {
    const path = (request.url ?? '').split('?')[0];
    if (path !== '/metrics') return plain(response, 404, 'not found\n');
    if (request.method !== 'GET' && request.method !== 'HEAD') return plain(response, 405, 'method not allowed\n', { allow: 'GET, HEAD' });
    if (expected !== undefined) {
      const given = Buffer.from(request.headers.authorization ?? '');
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) return plain(response, 401, 'unauthorized\n', { 'www-authenticate': 'Bearer realm="metrics"' });
    }
    exposition.text().then(
      (text) => {
        response.writeHead(200, { 'content-type': exposition.contentType, 'cache-control': 'no-store' });
        response.end(request.method === 'HEAD' ? undefined : text);
      },
      (error: unknown) => plain(response, 503, `metrics unavailable: ${(error as Error).message}\n`),
    );
  });
}

function plain(response: ServerResponse, status: number, body: string, headers: Record<string, string> = {}): void {
  response.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store', ...headers });
  response.end(body);
}
