import { InvalidClient, InvalidRequest } from '../errors.ts';
import { param } from '../params.ts';
import { refuseAssertionBeside } from './jwt-assertion.ts';
import { MAX_CREDENTIAL_LENGTH, type ClientAuthMethodHandler } from './method.ts';
import { verifySecret } from './secret.ts';

/**
 * client_secret_basic (RFC 6749 §2.3.1): `Authorization: Basic`, credentials form-urlencoded
 * before base64. The body may repeat the client_id, which must then be the same; it must not also
 * carry a client_secret (one method per request, §2.3).
 */
export const clientSecretBasic = {
  method: 'client_secret_basic',
  params: ['client_id', 'client_secret', 'client_assertion', 'client_assertion_type'],
  public: false,
  secret: 'hashed',
  usedBasic: true,
  requires: [],
  signingAlgs: [],
  detect: ({ authorization }) => authorization !== undefined && /^basic(\s|$)/i.test(authorization),
  present({ authorization, body }) {
    const bodyId = param(body, 'client_id');
    if (param(body, 'client_secret') !== undefined) throw new InvalidRequest('Use one client authentication method, not both Basic and client_secret.');
    refuseAssertionBeside(body, 'Basic');
    const { clientId, secret } = parseBasic(authorization ?? '');
    // Another client's id next to these credentials: the caller is not who it claims (RFC 6749
    // §3.2.1; the OIDF suite accepts only invalid_client or invalid_grant here, conformance AC-11).
    if (bodyId !== undefined && bodyId !== clientId) throw new InvalidClient('client_id in the body differs from the authenticated client.', { usedBasic: true });
    return { clientId, secret };
  },
  verify: (client, presented) => verifySecret(client, presented, true),
} as const satisfies ClientAuthMethodHandler;

/** `Basic base64(urlencode(client_id) ":" urlencode(client_secret))`, RFC 6749 §2.3.1. */
function parseBasic(header: string): { clientId: string; secret: string } {
  const encoded = header.slice(5).trim();
  const malformed = () => new InvalidClient('The Basic authorization header is malformed.', { usedBasic: true });
  if (encoded.length === 0 || encoded.length > 4 * MAX_CREDENTIAL_LENGTH || !/^[A-Za-z0-9+/]+={0,2}$/.test(encoded)) throw malformed();
  const decoded = Buffer.from(encoded, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon <= 0) throw malformed();
  try {
    return { clientId: formDecode(decoded.slice(0, colon)), secret: formDecode(decoded.slice(colon + 1)) };
  } catch {
    throw malformed();
  }
}

function formDecode(value: string): string {
  return decodeURIComponent(value.replace(/\+/g, ' '));
}
