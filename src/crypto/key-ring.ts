import { calculateJwkThumbprint, exportJWK, generateKeyPair, importJWK, type CryptoKey, type JWK } from 'jose';
import type { SigningKey } from '../domain/signing-key.ts';
import type { Clock } from '../lib/clock.ts';
import type { KeyStore } from '../storage/ports.ts';
import { decryptPrivateKey, encryptPrivateKey } from './key-encryption.ts';

export interface KeyRingOptions {
  /** GATEHOUSE_KEY_ENCRYPTION_KEY; when set, new private keys are stored encrypted. */
  encryptionSecret: string | undefined;
  /** How long a retired key stays in the JWKS: at least the lifetime of what it signed (ms). */
  retiredKeyGraceMs: number;
  /** How long keys read from the store are trusted before reading again (ms). */
  cacheMs?: number;
}

export interface ActiveKey {
  kid: string;
  alg: 'RS256';
  privateKey: CryptoKey;
}

interface Loaded {
  at: number;
  active: ActiveKey | undefined;
  jwks: { keys: JWK[] };
}

const MODULUS_BITS = 2048;

/**
 * The signing keys, read from the store so every instance agrees: the newest unretired key
 * signs; retired keys stay published until `publishUntil`. Reads are cached for `cacheMs`, so a
 * rotation on one instance reaches the others within that time.
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
    this.#options = { cacheMs: 30_000, ...options };
  }

  /** Makes sure a signing key exists, generating the first one on first start. */
  async ensureActiveKey(): Promise<void> {
    const keys = await this.#store.list(this.#clock.now());
    if (!keys.some((k) => k.retiredAt === undefined)) await this.#store.insert(await this.#generate());
    this.#loaded = undefined;
  }

  /** Generates a new active key and retires the current ones (still published for the grace period). */
  async rotate(): Promise<SigningKey> {
    const key = await this.#generate();
    await this.#store.rotate(key, key.createdAt + this.#options.retiredKeyGraceMs);
    this.#loaded = undefined;
    return key;
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
    if (this.#loaded && now - this.#loaded.at < this.#options.cacheMs) return this.#loaded;
    this.#loading ??= this.#read(now).finally(() => (this.#loading = undefined));
    this.#loaded = await this.#loading;
    return this.#loaded;
  }

  async #read(now: number): Promise<Loaded> {
    const keys = await this.#store.list(now);
    const current = keys.find((k) => k.retiredAt === undefined);
    let active: ActiveKey | undefined;
    if (current) {
      const json = current.encrypted ? decryptPrivateKey(current.privateJwk, this.#requireSecret()) : current.privateJwk;
      const privateKey = (await importJWK(JSON.parse(json) as JWK, current.alg)) as CryptoKey;
      active = { kid: current.kid, alg: current.alg, privateKey };
    }
    return { at: now, active, jwks: { keys: keys.map((k) => k.publicJwk as JWK) } };
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
