import { randomBytes, randomUUID } from 'node:crypto';

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
  token: (bytes = 32) => randomBytes(bytes).toString('base64url'),
  uuid: () => randomUUID(),
  hex: (bytes) => randomBytes(bytes).toString('hex'),
};
