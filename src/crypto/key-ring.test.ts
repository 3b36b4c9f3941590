import assert from 'node:assert/strict';
import { createHash, createPrivateKey, createPublicKey } from 'node:crypto';
import { describe, test } from 'node:test';
import type { SigningKey } from '../domain/signing-key.ts';
import { ManualClock } from '../lib/clock.ts';
import type { KeyStore } from '../storage/ports.ts';
import { SIGNING_ALGS, type SigningAlg } from '../protocol/constants.ts';
import { signJwt, verifyOwnJwt } from './jwt.ts';
import { KeyRing, type KeyRingOptions } from './key-ring.ts';

const HOUR = 3_600_000;
const ISSUER = 'https://sso.example/uas';
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi'];

/** The KeyStore contract in memory (test/contract checks the SQL one), counting what it is asked. */
class MemoryKeyStore implements KeyStore {
  readonly keys: SigningKey[] = [];
  lists = 0;

  async list(now: number): Promise<SigningKey[]> {
    this.lists += 1;
    return this.keys
      .filter((k) => k.retiredAt === undefined || (k.publishUntil !== undefined && k.publishUntil > now))
      .sort((a, b) => b.createdAt - a.createdAt || (a.kid < b.kid ? 1 : -1))
      .map((k) => structuredClone(k));
  }

  async insert(key: SigningKey): Promise<void> {
    if (this.keys.some((k) => k.kid === key.kid)) throw new Error(`duplicate kid ${key.kid}`);
    this.keys.push(structuredClone(key));
  }

  async insertFirst(key: SigningKey): Promise<boolean> {
    if (this.keys.some((k) => k.alg === key.alg && k.retiredAt === undefined)) return false;
    await this.insert(key);
    return true;
  }

  async rotate(key: SigningKey, publishUntil: number): Promise<void> {
    await this.insert(key);
    for (const k of this.keys) if (k.kid !== key.kid && k.alg === key.alg && k.retiredAt === undefined) Object.assign(k, { retiredAt: key.createdAt, publishUntil });
  }

  async listUnsealed(): Promise<SigningKey[]> {
    return this.keys.filter((k) => !k.encrypted).map((k) => structuredClone(k));
  }

  async seal(kid: string, sealedPrivateJwk: string): Promise<boolean> {
    const key = this.keys.find((k) => k.kid === kid && !k.encrypted);
    if (key) Object.assign(key, { privateJwk: sealedPrivateJwk, encrypted: true });
    return key !== undefined;
  }
}

function ring(store: KeyStore, clock: ManualClock, options: Partial<KeyRingOptions> = {}): KeyRing {
  return new KeyRing(store, clock, { encryptionSecret: undefined, retiredKeyGraceMs: 24 * HOUR, ...options });
}

/** RFC 7638 §3: SHA-256 over the required members of an RSA key, in lexicographic order, no spaces. */
function rfc7638Thumbprint(jwk: Record<string, unknown>): string {
  const canonical = JSON.stringify({ e: jwk.e, kty: jwk.kty, n: jwk.n });
  return createHash('sha256').update(canonical).digest('base64url');
}

/** Signs an ID-token-like JWT with the ring's active key and verifies it against the ring's JWKS. */
async function signsVerifiably(keyRing: KeyRing, clock: ManualClock): Promise<string> {
  const key = await keyRing.activeKey();
  const now = Math.floor(clock.now() / 1000);
  const jwt = await signJwt({ iss: ISSUER, sub: 'user-1', aud: 'client-1', iat: now, exp: now + 300 }, key);
  const payload = await verifyOwnJwt(jwt, await keyRing.jwks(), { issuer: ISSUER, audience: 'client-1', now: clock.now() });
  assert.equal(payload.sub, 'user-1');
  const header = JSON.parse(Buffer.from(jwt.split('.')[0]!, 'base64url').toString()) as Record<string, string>;
  assert.deepEqual(header, { alg: 'RS256', kid: key.kid, typ: 'JWT' });
  return jwt;
}

describe('KeyRing', () => {
  test('prepare creates one key of every algorithm of the table, each signing verifiably in its own algorithm with the right key type (AL-01, AL-02)', async () => {
    const store = new MemoryKeyStore();
    const clock = new ManualClock();
    const keyRing = ring(store, clock);
    await keyRing.prepare();
    assert.deepEqual(store.keys.map((k) => k.alg).sort(), [...SIGNING_ALGS].sort());
    const types: Record<SigningAlg, [string, string | undefined]> = { RS256: ['rsa', undefined], PS256: ['rsa', undefined], ES256: ['ec', 'prime256v1'], EdDSA: ['ed25519', undefined] };
    for (const alg of SIGNING_ALGS) {
      const key = await keyRing.activeKey(alg);
      assert.equal(key.alg, alg);
      const stored = store.keys.find((k) => k.kid === key.kid)!;
      assert.equal(stored.alg, alg);
      assert.equal(stored.publicJwk.alg, alg);
      assert.equal(stored.publicJwk.use, 'sig');
      const publicKey = createPublicKey({ key: stored.publicJwk as never, format: 'jwk' });
      assert.deepEqual([publicKey.asymmetricKeyType, publicKey.asymmetricKeyDetails?.namedCurve], types[alg]);
      const now = Math.floor(clock.now() / 1000);
      const jwt = await signJwt({ iss: ISSUER, sub: 'user-1', aud: 'client-1', iat: now, exp: now + 300 }, key);
      assert.deepEqual(JSON.parse(Buffer.from(jwt.split('.')[0]!, 'base64url').toString()), { alg, kid: key.kid, typ: 'JWT' });
      assert.equal((await verifyOwnJwt(jwt, await keyRing.jwks(), { issuer: ISSUER, audience: 'client-1', now: clock.now() })).sub, 'user-1');
    }
    await keyRing.prepare();
    assert.equal(store.keys.length, SIGNING_ALGS.length, 'a second start creates nothing');
  });

  test('rotate(alg) changes only that algorithm\'s signing key, after the activation delay (AL-03)', async () => {
    const store = new MemoryKeyStore();
    const clock = new ManualClock();
    const keyRing = ring(store, clock, { cacheMs: 1000 });
    await keyRing.prepare();
    const before = new Map(await Promise.all(SIGNING_ALGS.map(async (alg) => [alg, (await keyRing.activeKey(alg)).kid] as const)));
    const rotated = await keyRing.rotate('ES256');
    assert.equal(rotated.alg, 'ES256');
    clock.advance(2000);
    for (const alg of SIGNING_ALGS) assert.equal((await keyRing.activeKey(alg)).kid, alg === 'ES256' ? rotated.kid : before.get(alg), alg);
    assert.equal(store.keys.filter((k) => k.retiredAt === undefined).length, SIGNING_ALGS.length);
  });

  test('an algorithm without a key gets its first one on first use; an algorithm outside the table is refused (AL-01)', async () => {
    const store = new MemoryKeyStore();
    const clock = new ManualClock();
    const keyRing = ring(store, clock);
    await keyRing.ensureActiveKey();
    assert.deepEqual(store.keys.map((k) => k.alg), ['RS256']);
    const [a, b] = await Promise.all([keyRing.activeKey('EdDSA'), keyRing.activeKey('EdDSA')]);
    assert.equal(a.kid, b.kid);
    assert.deepEqual(store.keys.map((k) => k.alg).sort(), ['EdDSA', 'RS256']);
    await assert.rejects(keyRing.activeKey('HS256' as SigningAlg), /HS256 is not an algorithm gatehouse signs with/);
    await assert.rejects(keyRing.rotate('none' as SigningAlg), /none is not an algorithm gatehouse signs with/);
  });

  test('ensureActiveKey creates one RS256 key of at least 2048 bits whose kid is its RFC 7638 thumbprint', async () => {
    const store = new MemoryKeyStore();
    const clock = new ManualClock();
    const keyRing = ring(store, clock);
    await keyRing.ensureActiveKey();

    assert.equal(store.keys.length, 1);
    const [key] = store.keys;
    assert.equal(key!.alg, 'RS256');
    assert.equal(key!.encrypted, false);
    assert.equal(key!.createdAt, clock.now());
    assert.equal(key!.retiredAt, undefined);
    assert.equal(key!.kid, rfc7638Thumbprint(key!.publicJwk));
    assert.deepEqual(key!.publicJwk, { kty: 'RSA', n: key!.publicJwk.n, e: 'AQAB', kid: key!.kid, use: 'sig', alg: 'RS256' });

    const publicKey = createPublicKey({ key: key!.publicJwk as never, format: 'jwk' });
    assert.ok(publicKey.asymmetricKeyDetails!.modulusLength! >= 2048);
    const privateJwk = JSON.parse(key!.privateJwk) as Record<string, string>;
    for (const member of PRIVATE_MEMBERS) assert.ok(privateJwk[member], `private JWK has ${member}`);
    const privateKey = createPrivateKey({ key: privateJwk as never, format: 'jwk' });
    assert.equal(privateKey.asymmetricKeyType, 'rsa');
    assert.equal(privateJwk.n, key!.publicJwk.n, 'the private key belongs to the published one');

    const { keys } = await keyRing.jwks();
    assert.deepEqual(keys, [key!.publicJwk]);
    for (const member of PRIVATE_MEMBERS) assert.equal((keys[0] as Record<string, unknown>)[member], undefined, member);
    assert.equal((await keyRing.activeKey()).kid, key!.kid);
    await signsVerifiably(keyRing, clock);
  });

  test('ensureActiveKey creates nothing when an active key exists, from this ring or another', async () => {
    const store = new MemoryKeyStore();
    const clock = new ManualClock();
    await ring(store, clock).ensureActiveKey();
    const [first] = store.keys;
    const again = ring(store, clock);
    await again.ensureActiveKey();
    await again.ensureActiveKey();
    assert.deepEqual(store.keys, [first]);
    assert.equal((await again.activeKey()).kid, first!.kid);
  });

  test('activeKey without any key in the store fails clearly', async () => {
    await assert.rejects(ring(new MemoryKeyStore(), new ManualClock()).activeKey(), /no active signing key/);
  });

  test('rotate: the new key is published at once, signs only after the activation delay, and the old key stays published until the grace period ends', async () => {
    const store = new MemoryKeyStore();
    const clock = new ManualClock();
    const grace = 2 * HOUR;
    const delay = 60_000;
    const keyRing = ring(store, clock, { retiredKeyGraceMs: grace, cacheMs: 1000, activationDelayMs: delay });
    await keyRing.ensureActiveKey();
    const old = await keyRing.activeKey();
    const signedBefore = await signsVerifiably(keyRing, clock);

    clock.advance(delay);
    const rotated = await keyRing.rotate();
    assert.notEqual(rotated.kid, old.kid);
    assert.equal(rotated.kid, rfc7638Thumbprint(rotated.publicJwk));
    assert.equal(keyRing.signsFrom(rotated), clock.now() + delay);
    assert.deepEqual((await keyRing.jwks()).keys.map((k) => k.kid), [rotated.kid, old.kid], 'published at once');
    assert.equal((await keyRing.activeKey()).kid, old.kid, 'the old key still signs');
    const retired = store.keys.find((k) => k.kid === old.kid);
    assert.equal(retired?.retiredAt, clock.now());
    assert.equal(retired?.publishUntil, clock.now() + delay + grace);

    clock.advance(delay - 1);
    assert.equal((await keyRing.activeKey()).kid, old.kid, 'one millisecond before the activation delay ends');
    clock.advance(1);
    assert.equal((await keyRing.activeKey()).kid, rotated.kid, 'the new key signs once the delay is over');
    // What the old key signed still verifies while it is published.
    await verifyOwnJwt(signedBefore, await keyRing.jwks(), { issuer: ISSUER, audience: 'client-1', now: clock.now() - 2 * delay });
    await signsVerifiably(keyRing, clock);

    clock.advance(grace - 60_000);
    assert.deepEqual((await keyRing.jwks()).keys.map((k) => k.kid), [rotated.kid, old.kid], 'still published just before the end');
    clock.advance(60_000);
    assert.deepEqual((await keyRing.jwks()).keys.map((k) => k.kid), [rotated.kid], 'gone once the grace period is over');
    await assert.rejects(verifyOwnJwt(signedBefore, await keyRing.jwks(), { issuer: ISSUER, audience: 'client-1', allowExpired: true, now: clock.now() }), { code: 'ERR_JWKS_NO_MATCHING_KEY' });
  });

  test('by default the activation delay is two cache periods', async () => {
    const store = new MemoryKeyStore();
    const clock = new ManualClock();
    const keyRing = ring(store, clock, { cacheMs: 5000 });
    await keyRing.ensureActiveKey();
    clock.advance(HOUR);
    const rotated = await keyRing.rotate();
    assert.equal(keyRing.signsFrom(rotated), clock.now() + 10_000);
  });

  test('a rotation through one ring reaches another ring on the same store once its cache period has passed', async () => {
    const store = new MemoryKeyStore();
    const clock = new ManualClock();
    const cacheMs = 30_000;
    // No activation delay: this is about how long a ring trusts what it read.
    const a = ring(store, clock, { cacheMs, activationDelayMs: 0 });
    const b = ring(store, clock, { cacheMs, activationDelayMs: 0 });
    await a.ensureActiveKey();
    const first = (await b.activeKey()).kid;
    assert.equal((await a.activeKey()).kid, first);

    clock.advance(1000);
    const rotated = await a.rotate();
    assert.equal((await b.activeKey()).kid, first, 'b still trusts what it read');
    assert.deepEqual((await b.jwks()).keys.map((k) => k.kid), [first]);
    clock.advance(cacheMs - 1000 - 1);
    assert.equal((await b.activeKey()).kid, first, 'one millisecond before the cache period since its read ends');
    clock.advance(1);
    assert.equal((await b.activeKey()).kid, rotated.kid);
    assert.deepEqual((await b.jwks()).keys.map((k) => k.kid), [rotated.kid, first]);
  });

  test('within the cache period the store is read once, even by concurrent callers', async () => {
    const store = new MemoryKeyStore();
    const clock = new ManualClock();
    await ring(store, clock).ensureActiveKey();
    const keyRing = ring(store, clock, { cacheMs: 10_000 });
    const before = store.lists;
    await Promise.all([keyRing.activeKey(), keyRing.jwks(), keyRing.activeKey(), keyRing.jwks()]);
    clock.advance(9_999);
    await keyRing.jwks();
    assert.equal(store.lists - before, 1);
    clock.advance(1);
    await keyRing.jwks();
    assert.equal(store.lists - before, 2);
  });
});
