/**
 * Cross-origin resource sharing (Fetch Standard §3.2) for browser single-page apps, per client.
 *
 * A page on another origin may read gatehouse's answers only where that is part of a protocol a
 * browser client runs: the token, revocation and UserInfo endpoints (for the client's own origins)
 * and the public documents — discovery and the JWK Set (`*`). Nothing else is ever answered with
 * CORS headers: not the authorization endpoint, the login, logout and status pages, nor the
 * identity API (their OPTIONS is the 404 of any unknown route). No answer ever carries
 * `Access-Control-Allow-Credentials`: these endpoints take no cookies, so a browser never has a
 * reason to send them (docs/decisions.md, "CORS for single-page apps").
 *
 * Which origins, per client (oauth/client-cors.ts, corsOriginsOf): its `allowed_cors_origins`, else
 * the origins of its web redirect URIs.
 *
 * - A preflight (OPTIONS with Origin and Access-Control-Request-Method) cannot know the client: the
 *   token request names it only in its body or its Authorization header, neither of which a
 *   preflight carries. It is allowed for an origin of SOME active client (CorsOriginSet, a cached
 *   union), and answers with exactly the methods and headers the endpoint takes.
 * - The actual response is readable (Access-Control-Allow-Origin: <origin>) when the origin is one
 *   of the request's client: the client the token request names (client_id or the Basic user
 *   name; on success that is the client that authenticated) or the client the access token was
 *   issued to (UserInfo). An error answer that names no known client (unknown client_id, an
 *   invalid access token) is readable by the origins of every active client, so an SPA sees
 *   `invalid_client` or `invalid_token` instead of an opaque network error; a success answer
 *   never is.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Client } from '../../domain/client.ts';
import type { Clock } from '../../lib/clock.ts';
import { corsOriginsOf } from '../../oauth/client-cors.ts';

/** How long a browser may cache a preflight answer (Access-Control-Max-Age; Chromium caps it at 7200 s). */
export const CORS_MAX_AGE_SECONDS = 600;

/**
 * How long the union of every active client's origins is reused before it is read again. Clients
 * are changed by the CLI, another process, possibly against another instance's store: a change
 * reaches preflight answers within this time on every instance. The actual answer is always
 * decided on the client as stored now.
 */
export const CORS_ORIGIN_SET_TTL_MS = 30_000;

/**
 * The origins of every active client (`load`: activeClientOrigins of src/oauth/cors-origins.ts),
 * read at most once per CORS_ORIGIN_SET_TTL_MS (concurrent readers share one read). Nothing in the server process changes clients (the CLI
 * does), so there is no change event to listen for: the TTL is the invalidation.
 */
export class CorsOriginSet {
  private origins: ReadonlySet<string> | undefined;
  private readAt = 0;
  private pending: Promise<ReadonlySet<string>> | undefined;
  private readonly load: () => Promise<ReadonlySet<string>>;
  private readonly clock: Clock;
  private readonly ttlMs: number;

  constructor(load: () => Promise<ReadonlySet<string>>, clock: Clock, ttlMs = CORS_ORIGIN_SET_TTL_MS) {
    this.load = load;
    this.clock = clock;
    this.ttlMs = ttlMs;
  }

  async has(origin: string): Promise<boolean> {
    return (await this.current()).has(origin);
  }

  private async current(): Promise<ReadonlySet<string>> {
    const now = this.clock.now();
    if (this.origins !== undefined && now - this.readAt < this.ttlMs) return this.origins;
    this.pending ??= this.read(now).finally(() => {
      this.pending = undefined;
    });
    return this.pending;
  }

  private async read(now: number): Promise<ReadonlySet<string>> {
    const origins = await this.load();
    this.origins = origins;
    this.readAt = now;
    return origins;
  }
}

/** What one endpoint takes from a cross-origin page. */
export interface ClientCorsRule {
  /** The path, as routed. */
  url: string;
  /** The methods the endpoint takes (Access-Control-Allow-Methods). */
  methods: readonly string[];
  /** The request headers the endpoint reads that are not CORS-safelisted (Access-Control-Allow-Headers). */
  headers: readonly string[];
  /** The client the request belongs to, when it names a registered one (read only for cross-origin requests). */
  clientOf(request: FastifyRequest): Promise<Client | undefined>;
}

/**
 * CORS for the client-bound endpoints of one route scope: registers each rule's OPTIONS route and
 * an onSend hook deciding Access-Control-Allow-Origin (see the module comment).
 */
export function useClientCors(app: FastifyInstance, originSet: CorsOriginSet, rules: readonly ClientCorsRule[]): void {
  const byUrl = new Map(rules.map((rule) => [rule.url, rule]));
  for (const rule of rules) {
    app.options(rule.url, async (request, reply) => {
      const allow = [...rule.methods, 'OPTIONS'].join(', ');
      reply.code(204).header('allow', allow).header('vary', 'Origin');
      const origin = originOf(request);
      const method = request.headers['access-control-request-method'];
      // Not a preflight, or a method the endpoint does not take: no CORS headers, so the browser fails it.
      if (origin === undefined || typeof method !== 'string' || !rule.methods.includes(method)) return reply.send();
      if (!(await originSet.has(origin))) return reply.send();
      return reply
        .header('access-control-allow-origin', origin)
        .header('access-control-allow-methods', rule.methods.join(', '))
        .header('access-control-allow-headers', rule.headers.join(', '))
        .header('access-control-max-age', String(CORS_MAX_AGE_SECONDS))
        .send();
    });
  }
  app.addHook('onSend', async (request, reply) => {
    const rule = byUrl.get(request.routeOptions.url ?? '');
    if (!rule || request.method === 'OPTIONS') return;
    // The answer depends on Origin whether or not this request had one (RFC 9110 §12.5.5).
    reply.header('vary', 'Origin');
    const origin = originOf(request);
    if (origin === undefined) return;
    if (await readableBy(rule, request, reply, origin, originSet)) reply.header('access-control-allow-origin', origin);
  });
}

/**
 * Whether `origin` may read this answer. Fails closed: a request whose credentials cannot be read
 * names no client, and a store that cannot be read (the answer is then a 503 anyway) allows nothing.
 */
async function readableBy(rule: ClientCorsRule, request: FastifyRequest, reply: FastifyReply, origin: string, originSet: CorsOriginSet): Promise<boolean> {
  try {
    const client = await rule.clientOf(request).catch(() => undefined);
    if (client) return client.active && corsOriginsOf(client).includes(origin);
    return reply.statusCode >= 400 && (await originSet.has(origin));
  } catch {
    return false;
  }
}

/** The request's Origin, when it is a serialized origin (not `null`, RFC 6454 §7.3). */
function originOf(request: FastifyRequest): string | undefined {
  const origin = request.headers.origin;
  if (typeof origin !== 'string' || origin === '' || origin === 'null' || origin.length > 2048) return undefined;
  return origin;
}

/**
 * A public document (discovery, the JWK Set): readable from any origin (`*`), and its preflight
 * answered for GET. Nothing is read from the request, so any page may have it.
 */
export function usePublicCors(app: FastifyInstance, urls: readonly string[]): void {
  for (const url of urls) {
    app.options(url, async (request, reply) => {
      reply.code(204).header('allow', 'GET, HEAD, OPTIONS');
      if (request.headers.origin === undefined || request.headers['access-control-request-method'] === undefined) return reply.send();
      return reply.header('access-control-allow-origin', '*').header('access-control-allow-methods', 'GET, HEAD').header('access-control-max-age', String(CORS_MAX_AGE_SECONDS)).send();
    });
  }
}
