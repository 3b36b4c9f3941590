import { SIGNING_ALGS } from '../protocol/constants.ts';
import { PKCE_METHODS } from '../domain/client.ts';
import { RESPONSE_TYPES } from './authorize/check-response-type.ts';
import { RESPONSE_MODES } from './authorize/response-modes/registry.ts';
import type { ClientAuthSetup } from './client-auth/method.ts';
import { authMethodsFor, authSigningAlgsFor } from './client-auth/registry.ts';
import { GRANT_TYPES_SUPPORTED } from './grants/registry.ts';
import { SUPPORTED_SCOPES } from './scope-values.ts';

/**
 * Authorization server metadata: OpenID Connect Discovery 1.0 §3 and RFC 8414 §2. The same
 * document is served at both well-known paths (as the product we replace does). The grant types
 * and the endpoints' client-auth methods come from the registries (grants/registry.ts,
 * client-auth/registry.ts), the response modes from theirs (authorize/response-modes/registry.ts),
 * the response types from the check that serves them and the PKCE methods from the list the PKCE
 * check accepts: what is listed is what is implemented, and usable in this configuration.
 */
export const UI_LOCALES = ['en', 'fi', 'sv'] as const;
export const DISPLAY_VALUES = ['page', 'popup', 'touch'] as const;
export const CLAIMS_SUPPORTED = [
  'sub',
  'iss',
  'aud',
  'exp',
  'iat',
  'auth_time',
  'nonce',
  'acr',
  'amr',
  'azp',
  'at_hash',
  'session_index',
  'sid',
  'name',
  'given_name',
  'family_name',
  'preferred_username',
  'updated_at',
  'email',
  'email_verified',
] as const;

/** Paths of the endpoints, relative to the issuer. */
export const ENDPOINT_PATHS = {
  authorization: '/oauth2/authorization',
  token: '/oauth2/token',
  userinfo: '/oauth2/userinfo',
  introspection: '/oauth2/introspection',
  revocation: '/oauth2/revocation',
  jwks: '/oauth2/metadata.jwks',
  endSession: '/oauth2/logout',
  /** RFC 8628 §3.1. */
  deviceAuthorization: '/oauth2/device_authorization',
  /** The user-code page, RFC 8628 §3.2 verification_uri. */
  deviceVerification: '/oauth2/device',
  /** RFC 7591 §3; the client configuration endpoint of RFC 7592 is this + `/{client_id}`. */
  registration: '/oauth2/register',
} as const;

export interface DiscoveryOptions {
  issuer: string;
  /** acr values configured for authentication methods; omitted from metadata when empty. */
  acrValues?: readonly string[];
  /** RFC 8414 §2 `registration_endpoint`: published only when dynamic registration is on (GATEHOUSE_DYNAMIC_REGISTRATION). */
  registration?: boolean;
  /**
   * What the configuration gives the client-authentication methods (clientAuthSetup): a method it
   * cannot serve (client_secret_jwt without GATEHOUSE_KEY_ENCRYPTION_KEY) is not listed, nor are
   * algorithms only it accepts. OIDC Discovery §3 and RFC 8414 §2 list what the server supports;
   * a client that picks a listed method must be able to register and use it.
   */
  clientAuth: ClientAuthSetup;
}

export function discoveryDocument({ issuer, acrValues = [], registration = false, clientAuth }: DiscoveryOptions): Record<string, unknown> {
  const at = (path: string) => `${issuer}${path}`;
  return {
    issuer,
    authorization_endpoint: at(ENDPOINT_PATHS.authorization),
    token_endpoint: at(ENDPOINT_PATHS.token),
    userinfo_endpoint: at(ENDPOINT_PATHS.userinfo),
    introspection_endpoint: at(ENDPOINT_PATHS.introspection),
    revocation_endpoint: at(ENDPOINT_PATHS.revocation),
    end_session_endpoint: at(ENDPOINT_PATHS.endSession),
    jwks_uri: at(ENDPOINT_PATHS.jwks),
    device_authorization_endpoint: at(ENDPOINT_PATHS.deviceAuthorization),
    ...(registration ? { registration_endpoint: at(ENDPOINT_PATHS.registration) } : {}),
    scopes_supported: [...SUPPORTED_SCOPES],
    response_types_supported: [...RESPONSE_TYPES],
    response_modes_supported: RESPONSE_MODES.map((mode) => mode.name),
    grant_types_supported: [...GRANT_TYPES_SUPPORTED],
    subject_types_supported: ['public'],
    // One table (src/crypto/algorithms.ts) for both: every algorithm there has an active key.
    id_token_signing_alg_values_supported: [...SIGNING_ALGS],
    userinfo_signing_alg_values_supported: [...SIGNING_ALGS],
    token_endpoint_auth_methods_supported: authMethodsFor('token', clientAuth),
    introspection_endpoint_auth_methods_supported: authMethodsFor('introspection', clientAuth),
    revocation_endpoint_auth_methods_supported: authMethodsFor('revocation', clientAuth),
    // The algorithms of the JWT client-auth methods each endpoint accepts (RFC 8414 §2, OIDC Discovery §3).
    token_endpoint_auth_signing_alg_values_supported: authSigningAlgsFor('token', clientAuth),
    introspection_endpoint_auth_signing_alg_values_supported: authSigningAlgsFor('introspection', clientAuth),
    revocation_endpoint_auth_signing_alg_values_supported: authSigningAlgsFor('revocation', clientAuth),
    code_challenge_methods_supported: [...PKCE_METHODS],
    claims_supported: [...CLAIMS_SUPPORTED],
    claims_parameter_supported: false,
    ...(acrValues.length > 0 ? { acr_values_supported: [...acrValues] } : {}),
    ui_locales_supported: [...UI_LOCALES],
    display_values_supported: [...DISPLAY_VALUES],
    request_parameter_supported: false,
    request_uri_parameter_supported: false,
    authorization_response_iss_parameter_supported: true,
    // Front-Channel Logout 1.0 §3: the logout page's iframes always carry iss and sid (LO9).
    frontchannel_logout_supported: true,
    frontchannel_logout_session_supported: true,
    // Back-Channel Logout 1.0 §2.1: logout tokens carry sid whenever a session ended (LO1), so both are true.
    backchannel_logout_supported: true,
    backchannel_logout_session_supported: true,
  };
}
