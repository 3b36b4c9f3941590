import { calculateJwkThumbprint, exportJWK, generateKeyPair, importJWK, type CryptoKey, type JWK } from 'jose';
import type { SigningKey } from '../domain/signing-key.ts';
import { signingAlgorithm } from './algorithms.ts';
import { DEFAULT_SIGNING_ALG, SIGNING_ALGS, isSigningAlg, type SigningAlg } from '../protocol/constants.ts';
import type { Clock } from '../lib/clock.ts';
import type { KeyStore } from '../storage/ports.ts';
import { decryptPrivateKey, encryptPrivateKey, KeyEncryptionError } from './key-encryption.ts';

export interface KeyRingOptions {
  /** GATEHOUSE_KEY_ENCRYPTION_KEY; when set, new private keys are stored encrypted. */
  encryptionSecret: string | undefined;
  /** How long a retired key stays in the JWKS: at least the lifetime of what it signed (ms). */
  retiredKeyGraceMs: number;
  /** How long keys read from the store are trusted before reading again (ms). */
  cacheMs?: number;
  /**
   * How long a rotated-in key is only published before it signs (ms); default twice `cacheMs`:
   * one period for every instance to read it, one for relying parties' cached JWKS (served with
   * max-age = the cache period) to expire. Until then the previous key keeps signing.
   */
  activationDelayMs?: number;
}

export interface ActiveKey {
  kid: string;
  alg: SigningAlg;
  privateKey: CryptoKey;
  /** When the key was generated (ms): its age is a metric. */
  createdAt: number;
}

interface Loaded {
  /** Until when this read may be trusted: the cache period, or sooner when a newer key activates. */
  until: number;
  /** The key each algorithm signs with; an algorithm without a key yet is absent. */
  active: Map<SigningAlg, ActiveKey>;
  jwks: { keys: JWK[] };
}

/**
 * The signing keys, read from the store so every instance agrees. Rotation publishes first and
 * signs later (OIDC Core §10.1.1): the newest key older than the activation delay signs, so no
 * instance signs with a key that another instance, or a relying party's cached JWKS, does not
 * show yet. Retired keys stay published until `publishUntil`. Reads are cached for `cacheMs`.
 *
 * Each algorithm of src/crypto/algorithms.ts has keys of its own, rotated on their own; all are
 * published in one JWKS. Every algorithm gets its first key at the first start (generated in
 * parallel: about one RSA key generation long), so what discovery advertises is in the JWKS before
 * any token is signed with it. A key made later, on one instance only, would sign tokens that
 * relying parties fetching the JWKS from another instance (cached for `cacheMs`) cannot verify.
 */
export class KeyRing {
  readonly #store: KeyStore;
  readonly #clock: Clock;
  readonly #options: Required<KeyRingOptions>;
  #loaded: Loaded | undefined;
  #loading: Promise<Loaded> | undefined;
  /** First keys being created on this instance, per algorithm: concurrent requests share one. */
  readonly #creating = new Map<SigningAlg, Promise<void>>();

  constructor(store: KeyStore, clock: Clock, options: KeyRingOptions) {
    this.#store = store;
    this.#clock = clock;
    const cacheMs = options.cacheMs ?? 30_000;
    this.#options = { cacheMs, activationDelayMs: 2 * cacheMs, ...options };
  }

  /**
   * What a server does at start, before it serves: checks that every published sealed key opens
   * with the configured key-encryption key (else KeyEncryptionError, and nothing changes), seals
   * the keys still in the clear when a key-encryption key is configured, and creates the first
   * key of each algorithm on a new store (or the first of an algorithm a new version adds). Several instances may start at once: each key is sealed once. Returns how
   * many keys this call sealed.
   */
  async prepare(): Promise<number> {
    const sealed = this.#options.encryptionSecret === undefined ? (await this.#checkSealed(), 0) : await this.sealStoredKeys();
    await this.ensureActiveKey(SIGNING_ALGS);
    return sealed;
  }

  /**
   * Seals every private key still stored in the clear (a store that ran without
   * GATEHOUSE_KEY_ENCRYPTION_KEY before), retired ones too; `gatehouse keys seal` and every start
   * with the key set. Refuses, changing nothing, when the sealed keys already there do not open
   * with this key-encryption key: a store must not end up sealed under two. Returns how many keys
   * this call sealed (another instance sealing at the same time seals the rest).
   */
  async sealStoredKeys(): Promise<number> {
    const secret = this.#options.encryptionSecret;
    if (secret === undefined) throw new KeyEncryptionError('set GATEHOUSE_KEY_ENCRYPTION_KEY to seal the signing keys');
    await this.#checkSealed();
    let sealed = 0;
    for (const key of await this.#store.listUnsealed()) {
      if (await this.#store.seal(key.kid, encryptPrivateKey(key.privateJwk, secret))) sealed += 1;
    }
    this.#loaded = undefined;
    return sealed;
  }

  /** Every published sealed key opens with the configured key-encryption key; else KeyEncryptionError. */
  async #checkSealed(): Promise<void> {
    const secret = this.#options.encryptionSecret;
    for (const key of await this.#store.list(this.#clock.now())) {
      if (!key.encrypted) continue;
      if (secret === undefined) throw new KeyEncryptionError(`the signing keys in the store are sealed (kid ${key.kid}): set GATEHOUSE_KEY_ENCRYPTION_KEY to the key-encryption key they were sealed with`);
      try {
        decryptPrivateKey(key.privateJwk, secret);
      } catch {
        throw new KeyEncryptionError(`signing key ${key.kid} cannot be decrypted with GATEHOUSE_KEY_ENCRYPTION_KEY: it is not the key-encryption key the signing keys were sealed with`);
      }
    }
  }

  /**
   * Makes sure each of `algs` has a signing key (RS256 by default), generating the first one of
   * each that has none. Returns the algorithms whose first key this call stored.
   */
  async ensureActiveKey(algs: readonly SigningAlg[] = [DEFAULT_SIGNING_ALG]): Promise<SigningAlg[]> {
    const keys = await this.#store.list(this.#clock.now());
    const missing = algs.filter((alg) => !keys.some((k) => k.alg === alg && k.retiredAt === undefined));
    // One atomic step per algorithm: instances creating it at once store one first key between them.
    const stored = await Promise.all(missing.map(async (alg) => ((await this.#store.insertFirst(await this.#generate(alg))) ? alg : undefined)));
    this.#loaded = undefined;
    return stored.filter((alg) => alg !== undefined);
  }

  /**
   * Generates a new key of `alg` and retires that algorithm's current ones: they keep signing for
   * the activation delay and stay published for the grace period after it. Other algorithms' keys
   * are untouched.
   */
  async rotate(alg: SigningAlg = DEFAULT_SIGNING_ALG): Promise<SigningKey> {
    const key = await this.#generate(alg);
    await this.#store.rotate(key, key.createdAt + this.#options.activationDelayMs + this.#options.retiredKeyGraceMs);
    this.#loaded = undefined;
    return key;
  }

  /** When a key rotated in now starts signing (ms). */
  signsFrom(key: SigningKey): number {
    return key.createdAt + this.#options.activationDelayMs;
  }

  /**
   * The key `alg` signs with now. Every algorithm's first key is made at start; one that has none
   * all the same (a ring used without `prepare`, as the CLI does) gets it here, race-free across
   * instances (KeyStore.insertFirst). RS256's absence is an error (readiness reports it).
   */
  async activeKey(alg: SigningAlg = DEFAULT_SIGNING_ALG): Promise<ActiveKey> {
    requireSigningAlg(alg);
    const active = (await this.#load()).active.get(alg);
    if (active) return active;
    if (alg === DEFAULT_SIGNING_ALG) throw new Error('no active signing key in the store');
    let creating = this.#creating.get(alg);
    if (!creating) {
      creating = this.ensureActiveKey([alg])
        .then(() => undefined)
        .finally(() => this.#creating.delete(alg));
      this.#creating.set(alg, creating);
    }
    await creating;
    const created = (await this.#load()).active.get(alg);
    if (!created) throw new Error(`no active ${alg} signing key in the store`);
    return created;
  }

  /** The public JWK Set (RFC 7517 §5): kid, use and alg on every key, no private members. */
  async jwks(): Promise<{ keys: JWK[] }> {
    return (await this.#load()).jwks;
  }

  async #load(): Promise<Loaded> {
    const now = this.#clock.now();
    if (this.#loaded && now < this.#loaded.until) return this.#loaded;
    this.#loading ??= this.#read(now).finally(() => (this.#loading = undefined));
    this.#loaded = await this.#loading;
    return this.#loaded;
  }

  async #read(now: number): Promise<Loaded> {
    const keys = await this.#store.list(now);
    // The newest key past its activation delay signs; while none is (a fresh store, or a rotation
    // soon after the first start), the oldest published one, which every reader already knows.
    // Per algorithm: each has its own keys and its own rotation.
    const delay = this.#options.activationDelayMs;
    const active = new Map<SigningAlg, ActiveKey>();
    for (const alg of SIGNING_ALGS) {
      const own = keys.filter((k) => k.alg === alg);
      const ready = own.filter((k) => k.createdAt + delay <= now);
      const current = ready.length > 0 ? pick(ready, 'newest') : pick(own, 'oldest');
      if (!current) continue;
      const json = current.encrypted ? decryptPrivateKey(current.privateJwk, this.#requireSecret()) : current.privateJwk;
      const privateKey = (await importJWK(JSON.parse(json) as JWK, current.alg)) as CryptoKey;
      active.set(alg, { kid: current.kid, alg: current.alg, privateKey, createdAt: current.createdAt });
    }
    // A key that activates within the cache period ends this read's trust when it does.
    const activations = keys.filter((k) => k.createdAt + delay > now).map((k) => k.createdAt + delay);
    // A read that found no RS256 key to sign with is not trusted: the next use reads again
    // (readiness turns back to ready as soon as a key is there).
    const until = active.has(DEFAULT_SIGNING_ALG) ? Math.min(now + this.#options.cacheMs, ...activations) : now;
    return { until, active, jwks: { keys: keys.map((k) => k.publicJwk as JWK) } };
  }

  #requireSecret(): string {
    if (!this.#options.encryptionSecret) throw new Error('signing keys are encrypted: set GATEHOUSE_KEY_ENCRYPTION_KEY');
    return this.#options.encryptionSecret;
  }

  async #generate(alg: SigningAlg): Promise<SigningKey> {
    requireSigningAlg(alg);
    const algorithm = signingAlgorithm(alg);
    const { publicKey, privateKey } = await generateKeyPair(alg, algorithm.generate);
    const publicJwk = await exportJWK(publicKey);
    // RFC 7638 thumbprint: a stable, collision-free kid derived from the key itself.
    const kid = await calculateJwkThumbprint(publicJwk, 'sha256');
    const privateJson = JSON.stringify({ ...(await exportJWK(privateKey)), kid, alg });
    const secret = this.#options.encryptionSecret;
    // The public members only (RFC 7517 §4, RFC 7518 §6, RFC 8037 §2), with kid, use and alg:
    // a relying party picks the key by kid and checks it against the token's alg.
    const publicMembers = Object.fromEntries(algorithm.publicMembers.map((name) => [name, publicJwk[name]]));
    return {
      kid,
      alg,
      publicJwk: { ...publicMembers, kid, use: 'sig', alg },
      privateJwk: secret ? encryptPrivateKey(privateJson, secret) : privateJson,
      encrypted: secret !== undefined,
      createdAt: this.#clock.now(),
      retiredAt: undefined,
      publishUntil: undefined,
    };
  }
}

/**
 * The newest or the oldest key. Keys created in the same millisecond (a rotation right after the
 * first start) are ordered by rotation: the retired one is the older.
 */
function pick(keys: SigningKey[], which: 'newest' | 'oldest'): SigningKey | undefined {
  const age = (k: SigningKey) => k.createdAt * 2 + (k.retiredAt === undefined ? 1 : 0);
  const sorted = [...keys].sort((a, b) => age(a) - age(b));
  return which === 'oldest' ? sorted[0] : sorted.at(-1);
}

/** A caller passing an algorithm from outside the table (a bad cast, a stored name) is a bug: said so, not signed with. */
function requireSigningAlg(alg: string): void {
  if (!isSigningAlg(alg)) throw new Error(`${alg} is not an algorithm gatehouse signs with (${SIGNING_ALGS.join(', ')})`);
}
