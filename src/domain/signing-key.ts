import type { SigningAlg } from '../protocol/constants.ts';

export interface SigningKey {
  kid: string;
  /** The one algorithm this key signs with; each algorithm has its own active key. */
  alg: SigningAlg;
  publicJwk: Record<string, unknown>;
  /** The private JWK as JSON, or its AES-GCM ciphertext when `encrypted`. */
  privateJwk: string;
  encrypted: boolean;
  createdAt: number;
  /** When the key stopped signing; undefined while it is the active key. */
  retiredAt: number | undefined;
  /** Published in the JWKS until this time (ms), so tokens it signed still verify. */
  publishUntil: number | undefined;
}
