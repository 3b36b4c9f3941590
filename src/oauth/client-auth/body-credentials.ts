import { InvalidClient } from '../errors.ts';
import { param, type RawParams } from '../params.ts';
import { MAX_CREDENTIAL_LENGTH, type Presented } from './method.ts';

/** client_id and client_secret from the body (RFC 6749 §2.3.1, §2.1): a missing client_id means no credentials at all. */
export function bodyCredentials(body: RawParams): Presented {
  const clientId = param(body, 'client_id');
  const secret = param(body, 'client_secret');
  if (clientId === undefined) throw new InvalidClient('Client authentication is required.', { detail: 'no client credentials' });
  if (clientId.length > MAX_CREDENTIAL_LENGTH || (secret?.length ?? 0) > MAX_CREDENTIAL_LENGTH) throw new InvalidClient('Client authentication failed.');
  return { clientId, secret };
}
