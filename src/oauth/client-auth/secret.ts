import type { Client } from '../../domain/client.ts';
import { constantTimeEqual, hashSecret } from '../../lib/hash.ts';
import { InvalidClient } from '../errors.ts';
import type { Presented } from './method.ts';

/**
 * The check shared by the two methods that present the secret itself (RFC 6749 §2.3.1): its
 * SHA-256 must be the one kept. Whether the client may use the method at all is decided before,
 * by authenticateClient (client-auth.ts).
 */
export function verifySecret(client: Client, presented: Presented, usedBasic: boolean): void {
  if (!client.secretHash || !constantTimeEqual(hashSecret(presented.secret ?? ''), client.secretHash)) {
    throw new InvalidClient('Client authentication failed.', { usedBasic, detail: 'wrong client_secret' });
  }
}
