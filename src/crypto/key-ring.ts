import { calculateJwkThumbprint, exportJWK, generateKeyPair, importJWK, type CryptoKey, type JWK } from 'jose';
import type { SigningKey } from '../domain/signing-key.ts';
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
  alg: 'RS256';
  privateKey: CryptoKey;
  /** When the key was generated (ms): its age is a metric. */
  createdAt: number;
}

interface Loaded {
  /** Until when this read may be trusted: the cache period, or sooner when a newer key activates. */
  until: number;
  active: ActiveKey | undefined;
  jwks: { keys: JWK[] };
}

const MODULUS_BITS = 2048;

/**
 * The signing keys, read from the store so every instance agrees. Rotation publishes first and
 * signs later (OIDC Core §10.1.1): the newest key older than the activation delay signs, so no
 * instance signs with a key that another instance, or a relying party's cached JWKS, does not
 * show yet. Retired keys stay published until `publishUntil`. Reads are cached for `cacheMs`.
 */
export class KeyRing {
  readonly #store: KeyStore;
  readonly #clock: Clock;
  readonly #options: Required<KeyRingOptions>;
  #loaded: Loaded | undefined;
  #loading: Promise<Loaded> | undefined;

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
   * key on a new store. Several instances may start at once: each key is sealed once. Returns how
   * many keys this call sealed.
   */
  async prepare(): Promise<number> {
    const sealed = this.#options.encryptionSecret === undefined ? (await this.#checkSealed(), 0) : await this.sealStoredKeys();
    await this.ensureActiveKey();
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

  /** Makes sure a signing key exists, generating the first one on first start. */
  async ensureActiveKey(): Promise<void> {
    const keys = await this.#store.list(this.#clock.now());
    // One atomic step: instances starting at once on an empty store store one first key between them.
    if (!keys.some((k) => k.retiredAt === undefined)) await this.#store.insertFirst(await this.#generate());
    this.#loaded = undefined;
  }

  /**
   * Generates a new key and retires the current ones: they keep signing for the activation delay
   * and stay published for the grace period after it.
   */
  async rotate(): Promise<SigningKey> {
    const key = await this.#generate();
    await this.#store.rotate(key, key.createdAt + this.#options.activationDelayMs + this.#options.retiredKeyGraceMs);
    this.#loaded = undefined;
    return key;
  }

  /** When a key rotated in now starts signing (ms). */
  signsFrom(key: SigningKey): number {
    return key.createdAt + this.#options.activationDelayMs;
  }

  async activeKey(): Promise<ActiveKey> {
    const loaded = await this.#load();
    if (!loaded.active) throw new Error('no active signing key in the store');
    return loaded.active;
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
    const delay = this.#options.activationDelayMs;
    const ready = keys.filter((k) => k.createdAt + delay <= now);
    const current = ready.length > 0 ? pick(ready, 'newest') : pick(keys, 'oldest');
    let active: ActiveKey | undefined;
    if (current) {
      const json = current.encrypted ? decryptPrivateKey(current.privateJwk, this.#requireSecret()) : current.privateJwk;
      const privateKey = (await importJWK(JSON.parse(json) as JWK, current.alg)) as CryptoKey;
      active = { kid: current.kid, alg: current.alg, privateKey, createdAt: current.createdAt };
    }
    // A key that activates within the cache period ends this read's trust when it does.
    const activations = keys.filter((k) => k.createdAt + delay > now).map((k) => k.createdAt + delay);
    // A read that found no key to sign with is not trusted: the next use reads again (readiness
    // turns back to ready as soon as a key is there).
    const until = active ? Math.min(now + this.#options.cacheMs, ...activations) : now;
    return { until, active, jwks: { keys: keys.map((k) => k.publicJwk as JWK) } };
  }

  #requireSecret(): string {
    if (!this.#options.encryptionSecret) throw new Error('signing keys are encrypted: set GATEHOUSE_KEY_ENCRYPTION_KEY');
    return this.#options.encryptionSecret;
  }

  async #generate(): Promise<SigningKey> {
    const { publicKey, privateKey } = await generateKeyPair('RS256', { modulusLength: MODULUS_BITS, extractable: true });
    const publicJwk = await exportJWK(publicKey);
    // RFC 7638 thumbprint: a stable, collision-free kid derived from the key itself.
    const kid = await calculateJwkThumbprint(publicJwk, 'sha256');
    const privateJson = JSON.stringify({ ...(await exportJWK(privateKey)), kid, alg: 'RS256' });
    const secret = this.#options.encryptionSecret;
    return {
      kid,
      alg: 'RS256',
      publicJwk: { kty: publicJwk.kty, n: publicJwk.n, e: publicJwk.e, kid, use: 'sig', alg: 'RS256' },
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
