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

/** Most keys taken from one set. */
const MAX_KEYS = 100;

/** JWK members that carry private or symmetric key material (RFC 7518 §6.2.2, §6.3.2, §6.4.1). */
export const PRIVATE_JWK_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'] as const;

/** A jwks_uri gatehouse may fetch: https, or http on a loopback host; no user information, no fragment. Returns why not, or undefined. */
export function jwksUriProblem(uri: string): string | undefined {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return 'is not a valid absolute URL';
  }
  if (uri.length > 2048) return 'must be at most 2048 characters';
  if (url.username !== '' || url.password !== '') return 'must not contain user information';
  if (uri.includes('#')) return 'must not contain a fragment';
  if (url.protocol === 'https:') return undefined;
  if (url.protocol === 'http:' && isLoopback(url.hostname)) return undefined;
  return 'must be an https URL (http only on a loopback host)';
}

function isLoopback(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname);
}

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

/**
 * A JWK Set (RFC 7517 §5) of public signing keys: an object whose `keys` is an array of 1 to 100
 * objects with a `kty` of RSA, EC or OKP and no private or symmetric member. `refuse(why)` makes
 * the error thrown. Used for a fetched set and (with a stricter caller) for a registered `jwks`.
 */
export function publicKeySet(value: unknown, refuse: (why: string) => Error): JwksDocument {
  if (typeof value !== 'object' || value === null || !Array.isArray((value as { keys?: unknown }).keys)) throw refuse('is not a JWK Set (an object with a "keys" array)');
  const keys = (value as { keys: unknown[] }).keys;
  if (keys.length === 0) throw refuse('has no keys');
  if (keys.length > MAX_KEYS) throw refuse(`has more than ${MAX_KEYS} keys`);
  for (const key of keys) {
    if (typeof key !== 'object' || key === null || Array.isArray(key)) throw refuse('has a key that is not a JSON object');
    const jwk = key as Record<string, unknown>;
    if (jwk.kty === 'oct' || PRIVATE_JWK_MEMBERS.some((member) => member in jwk)) throw refuse('holds private or symmetric key material: publish public keys only');
    if (jwk.kty !== 'RSA' && jwk.kty !== 'EC' && jwk.kty !== 'OKP') throw refuse(`has a key of kty ${JSON.stringify(jwk.kty)}; only RSA, EC and OKP public keys are used`);
  }
  return { keys: keys as Record<string, unknown>[] };
}
