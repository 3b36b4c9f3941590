/**
 * The use cases of signing keys: list and rotate: each takes who acts (acting.ts) and its input, runs the rules and the
 * unit of work of the change, and emits its audit event. Every front end calls these.
 *
 * The key ring (src/crypto/key-ring.ts) keeps the rules of rotation and of which key signs; here
 * they are read as each key's status, the one answer both the CLI and the management API give.
 */
import type { SigningKey } from '../domain/signing-key.ts';
import { SIGNING_ALGS, type SigningAlg } from '../protocol/constants.ts';
import type { Acting } from './acting.ts';
import type { AdministrationPorts } from './ports.ts';

/** `active` signs now; `next` is published and signs from its `signsFrom`; `retired` is published until `publishUntil`. */
export type KeyStatus = 'active' | 'next' | 'retired';

/** A published key with what the key ring decides about it. */
export interface PublishedKey {
  key: SigningKey;
  status: KeyStatus;
  /** When it signs (or signed) from, ms: its activation delay after it was rotated in. */
  signsFrom: number;
}

/**
 * Each key's status as the key ring decides which key signs (KeyRing #read): per algorithm, the
 * newest key past its activation delay signs (`active`), else the oldest published one; a newer
 * key still within its delay is `next` (published, signing from `activates_at`); the rest are
 * `retired`, published until `retires_at` so that what they signed still verifies.
 */
export function keyStatuses(keys: readonly SigningKey[], signsFrom: (key: SigningKey) => number, now: number): Map<string, KeyStatus> {
  const out = new Map<string, KeyStatus>();
  const age = (k: SigningKey) => k.createdAt * 2 + (k.retiredAt === undefined ? 1 : 0);
  for (const alg of SIGNING_ALGS) {
    const own = keys.filter((k) => k.alg === alg).sort((a, b) => age(a) - age(b));
    const ready = own.filter((k) => signsFrom(k) <= now);
    const current = ready.length > 0 ? ready.at(-1) : own[0];
    for (const key of own) out.set(key.kid, key === current ? 'active' : key.retiredAt === undefined ? 'next' : 'retired');
  }
  return out;
}

export interface KeyAdministration {
  /** The keys the JWKS publishes now, in the store's order, each with its status. */
  list(): Promise<PublishedKey[]>;
  /**
   * Publishes a new key of `alg` at once; it signs once every instance and cached JWKS can know
   * it, while the algorithm's previous key signs until then (KeyRing.rotate); `key.rotated`.
   */
  rotate(acting: Acting, alg: SigningAlg): Promise<PublishedKey>;
  /**
   * Encrypts every private key still stored in the clear with the key-encryption key (KeyRing.sealStoredKeys);
   * how many it sealed. No audit event and no actor: it changes how the keys are kept, not which
   * keys there are or which one signs, and every server start does the same.
   */
  seal(): Promise<number>;
}

export function keyAdministration(ports: Pick<AdministrationPorts, 'store' | 'clock' | 'audit' | 'keyRing'>): KeyAdministration {
  const { store, clock, audit, keyRing } = ports;
  return {
    async list() {
      const now = clock.now();
      const keys = await store.keys.list(now);
      const statuses = keyStatuses(keys, (k) => keyRing.signsFrom(k), now);
      return keys.map((key) => ({ key, status: statuses.get(key.kid)!, signsFrom: keyRing.signsFrom(key) }));
    },
    async rotate(acting, alg) {
      const key = await keyRing.rotate(alg);
      audit.emit({ event: 'key.rotated', kid: key.kid, alg: key.alg, actor: acting.actor });
      const signsFrom = keyRing.signsFrom(key);
      return { key, status: signsFrom <= clock.now() ? 'active' : 'next', signsFrom };
    },
    seal: () => keyRing.sealStoredKeys(),
  };
}
