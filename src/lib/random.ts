import { randomFillSync, randomUUID } from 'node:crypto';

/** Randomness is injected so tests can make identifiers deterministic where they need to. */
export interface Random {
  /** A URL-safe secret with `bytes` of entropy (default 32 bytes = 256 bits, RFC 6749 §10.10). */
  token(bytes?: number): string;
  /** A random (version 4) UUID. */
  uuid(): string;
  /** `bytes` random bytes as lowercase hex. */
  hex(bytes: number): string;
}

export const cryptoRandom: Random = {
  token: (bytes = 32) => randomSlice(bytes).toString('base64url'),
  uuid: () => randomUUID(),
  hex: (bytes) => randomSlice(bytes).toString('hex'),
};

// A grant needs two or three secrets, and each call into OpenSSL's generator costs more than the
// bytes themselves; so the bytes are drawn a pool at a time (as randomUUID does) and each one is
// handed out exactly once.
const POOL_BYTES = 4096;
let pool = Buffer.alloc(0);
let offset = 0;

function randomSlice(bytes: number): Buffer {
  if (offset + bytes > pool.length) {
    pool = randomFillSync(Buffer.allocUnsafeSlow(Math.max(POOL_BYTES, bytes)));
    offset = 0;
  }
  const slice = pool.subarray(offset, offset + bytes);
  offset += bytes;
  return slice;
}
