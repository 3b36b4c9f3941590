import type { Client, ClientAuthMethod } from '../../domain/client.ts';
import { constantTimeEqual, hashSecret } from '../../lib/hash.ts';
import { InvalidClient } from '../errors.ts';
import type { Presented } from './method.ts';

/**
 * The check shared by the two shared-secret methods (RFC 6749 §2.3.1): a client that registered a
 * method must use it (OIDC Core §9); one that registered none may use either secret method; a
 * public client may not present a secret.
 */
export function verifySecret(client: Client, presented: Presented, method: ClientAuthMethod, usedBasic: boolean): void {
  const registered = client.tokenEndpointAuthMethod;
  if (registered === 'none') throw new InvalidClient('Client authentication failed.', { usedBasic, detail: 'public client sent a secret' });
  if (registered !== undefined && registered !== method) {
    throw new InvalidClient('Client authentication failed.', { usedBasic, detail: `client registered ${registered} but used ${method}` });
  }
  if (!client.secretHash || !constantTimeEqual(hashSecret(presented.secret ?? ''), client.secretHash)) {
    throw new InvalidClient('Client authentication failed.', { usedBasic, detail: 'wrong client_secret' });
  }
}
