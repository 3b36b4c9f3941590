/**
 * Fetching clients' `jwks_uri` (RFC 7591 §2, private_key_jwt): the one place gatehouse makes an
 * outbound request a client chose. It is an SSRF surface (docs/security.md, "Fetching clients'
 * jwks_uri"), so each fetch is bounded: https only (http on a loopback host, for development), no
 * redirects, no credentials in the URL, a timeout, a size limit; and fetches are rare: a key set
 * is cached for a TTL, a refetch for an unknown `kid` happens at most once per cooldown per URI,
 * a failure is remembered for the same cooldown, and concurrent requests share one fetch.
 */
import type { Clock } from '../lib/clock.ts';
import { JwksUnavailable, type JwksDocument, type JwksFetcher } from '../oauth/client-auth/method.ts';
import { jwksUriProblem, publicKeySet } from '../oauth/jwks.ts';

export interface RemoteJwksOptions {
  /** Whole fetch, connection to last byte. */
  timeoutMs: number;
  /** Largest response body read; a larger one is refused. */
  maxBytes: number;
  /** How long a fetched key set is used before it is fetched again. */
  ttlMs: number;
  /** Least time between two fetches of one URI (refetch on an unknown kid, or after a failure). */
  cooldownMs: number;
  /** Most URIs cached; the oldest is forgotten first. */
  maxEntries: number;
}

export const REMOTE_JWKS_DEFAULTS: RemoteJwksOptions = { timeoutMs: 5000, maxBytes: 64 * 1024, ttlMs: 5 * 60_000, cooldownMs: 60_000, maxEntries: 1000 };

interface Entry {
  document?: JwksDocument;
  error?: JwksUnavailable;
  fetchedAt: number;
  inflight?: Promise<JwksDocument>;
}

export class RemoteJwks implements JwksFetcher {
  readonly #clock: Clock;
  readonly #options: RemoteJwksOptions;
  readonly #cache = new Map<string, Entry>();
  /** Fetches made (for tests and metrics). */
  fetches = 0;

  constructor(clock: Clock, options: Partial<RemoteJwksOptions> = {}) {
    this.#clock = clock;
    this.#options = { ...REMOTE_JWKS_DEFAULTS, ...options };
  }

  async get(uri: string, options: { refresh?: boolean } = {}): Promise<JwksDocument> {
    const problem = jwksUriProblem(uri);
    if (problem) throw new JwksUnavailable(`jwks_uri ${problem}`);
    const entry = this.#cache.get(uri);
    if (entry?.inflight) return entry.inflight;
    if (entry) {
      const age = this.#clock.now() - entry.fetchedAt;
      const usable = entry.document ? age < this.#options.ttlMs : age < this.#options.cooldownMs;
      // A refresh (unknown kid) fetches again only once the cooldown has passed.
      if (usable && !(options.refresh && age >= this.#options.cooldownMs)) {
        if (entry.document) return entry.document;
        throw entry.error!;
      }
    }
    return this.#fetchInto(uri, entry);
  }

  #fetchInto(uri: string, previous: Entry | undefined): Promise<JwksDocument> {
    const entry: Entry = { fetchedAt: this.#clock.now(), ...(previous?.document ? { document: previous.document } : {}) };
    const inflight = this.#fetch(uri).then(
      (document) => {
        this.#remember(uri, { document, fetchedAt: this.#clock.now() });
        return document;
      },
      (error: unknown) => {
        const failure = error instanceof JwksUnavailable ? error : new JwksUnavailable(`jwks_uri could not be fetched: ${(error as Error).message}`);
        this.#remember(uri, { error: failure, fetchedAt: this.#clock.now() });
        throw failure;
      },
    );
    entry.inflight = inflight;
    this.#remember(uri, entry);
    return inflight;
  }

  #remember(uri: string, entry: Entry): void {
    this.#cache.delete(uri);
    if (this.#cache.size >= this.#options.maxEntries) this.#cache.delete(this.#cache.keys().next().value!);
    this.#cache.set(uri, entry);
  }

  async #fetch(uri: string): Promise<JwksDocument> {
    this.fetches++;
    const signal = AbortSignal.timeout(this.#options.timeoutMs);
    let response: Response;
    try {
      // No redirects: the registered URI is the one fetched, so a redirect cannot point the fetch elsewhere.
      response = await fetch(uri, { signal, redirect: 'error', headers: { accept: 'application/jwk-set+json, application/json' } });
    } catch (error) {
      throw new JwksUnavailable(signal.aborted ? `jwks_uri did not answer within ${this.#options.timeoutMs} ms` : `jwks_uri could not be fetched: ${(error as Error).message}`);
    }
    if (response.status !== 200) {
      await response.body?.cancel().catch(() => {});
      throw new JwksUnavailable(`jwks_uri answered ${response.status}`);
    }
    const text = await this.#readLimited(response, signal);
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new JwksUnavailable('jwks_uri did not answer with JSON');
    }
    return publicKeySet(parsed, (why) => new JwksUnavailable(`jwks_uri ${why}`));
  }

  async #readLimited(response: Response, signal: AbortSignal): Promise<string> {
    const { maxBytes } = this.#options;
    const declared = Number(response.headers.get('content-length'));
    const tooLarge = () => new JwksUnavailable(`jwks_uri answered more than ${maxBytes} bytes`);
    if (Number.isFinite(declared) && declared > maxBytes) {
      await response.body?.cancel().catch(() => {});
      throw tooLarge();
    }
    const reader = response.body?.getReader();
    if (!reader) return '';
    const chunks: Uint8Array[] = [];
    let total = 0;
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        total += value.byteLength;
        if (total > maxBytes) {
          await reader.cancel().catch(() => {});
          throw tooLarge();
        }
        chunks.push(value);
      }
    } catch (error) {
      if (error instanceof JwksUnavailable) throw error;
      throw new JwksUnavailable(signal.aborted ? `jwks_uri did not answer within ${this.#options.timeoutMs} ms` : `jwks_uri could not be read: ${(error as Error).message}`);
    }
    return Buffer.concat(chunks).toString('utf8');
  }
}
