/**
 * The client metadata keys gatehouse knows (RFC 7591 §2, OIDC Registration §2, Ubisecure's own):
 * the ones it implements (in typed columns or kept in `metadata`), the language-tagged ones it
 * shows, the ones it refuses with a reason and the ones it generates. The parser
 * (client-metadata.ts), the wire view (client-view.ts), the display readers (client-display.ts)
 * and dynamic registration read these tables; this module imports nothing.
 */

/** Keys gatehouse generates; they appear in responses only (RFC 7591 §3.2.1). */
export const GENERATED_KEYS = ['client_id', 'client_secret', 'client_id_issued_at', 'client_secret_expires_at', 'created_at'] as const;

/**
 * Keys gatehouse does not implement, with the reason it gives. Any key that is neither here nor
 * in IMPLEMENTED_KEYS is refused too: metadata gatehouse stored but did not act on would look like
 * a protection (or a feature) that is not there — `aud` was one (docs/decisions.md, "Client
 * metadata gatehouse cannot enforce"; RFC 9700 §2.3).
 */
export const UNSUPPORTED_KEYS: Record<string, string> = {
  id_token_encrypted_response_alg: 'encrypted ID tokens are not supported',
  id_token_encrypted_response_enc: 'encrypted ID tokens are not supported',
  userinfo_encrypted_response_alg: 'encrypted UserInfo responses are not supported',
  userinfo_encrypted_response_enc: 'encrypted UserInfo responses are not supported',
  request_object_signing_alg: 'request objects are not supported',
  request_object_encryption_alg: 'request objects are not supported',
  request_object_encryption_enc: 'request objects are not supported',
  request_uris: 'request objects are not supported',
  client_uri: 'the login page shows no client link',
  policy_uri: 'the login page shows no policy link',
  tos_uri: 'the login page shows no terms-of-service link',
  subject_type: 'only public subject identifiers are issued',
  sector_identifier_uri: 'only public subject identifiers are issued',
  require_auth_time: 'auth_time is always in the ID token',
  initiate_login_uri: 'third-party initiated login is not supported',
  resource: 'a client asks for a resource with the resource parameter (RFC 8707); a resource server registers its URIs as resource_uris',
  audience: 'the key is aud',
};

/** Keys held in typed columns rather than in `metadata`. */
export const TYPED_KEYS = new Set([
  'client_name',
  'redirect_uris',
  'grant_types',
  'token_endpoint_auth_method',
  'code_challenge_method',
  'scope',
  'refresh_tokens',
  'rotate_refresh_tokens',
  'access_token_ttl',
  'post_logout_redirect_uris',
  'id_token_signed_response_alg',
  'userinfo_signed_response_alg',
  'active',
  // Authorization policies (issue 13, item 1): the name of a stored policy (migration 012).
  'authorization_policy',
]);

/** Keys gatehouse acts on that are kept in `metadata` as registered (validated here, read where used). */
const METADATA_KEYS = [
  // OIDC Registration §2: "web" (the default) or "native"; only native apps get a loopback redirect URI's any port (RFC 8252 §7.3).
  'application_type',
  'logo_uri',
  'response_types',
  'aud',
  'id_token_scope_claims',
  'allowed_cors_origins',
  'jwks',
  'jwks_uri',
  'token_endpoint_auth_signing_alg',
  // Consent (issue 13, item 4): a third-party client whose users are asked before the first code.
  'consent_required',
  // Resource servers and resource indicators (issue 13, item 2).
  'resource_server',
  'resource_uris',
  // Scope values an API defines (issue 22, item 12): docs/decisions.md RS1.
  'resource_scopes',
  // JWT access tokens (RFC 9068), issued to this client as a resource server: src/oauth/jwt-access-token.ts.
  'access_token_format',
  'access_token_signed_response_alg',
  // Levels of authentication (issue 24, item 3; OIDC Registration §2): used when the request names none.
  'default_acr_values',
  'default_max_age',
  // OpenID Connect Back-Channel Logout 1.0 §2.2 (issue 26 item 2): where logout tokens are POSTed.
  'backchannel_logout_uri',
  'backchannel_logout_session_required',
  // OpenID Connect Front-Channel Logout 1.0 §2: the page the logout page loads in an iframe.
  'frontchannel_logout_uri',
  'frontchannel_logout_session_required',
] as const;

/** Keys gatehouse acts on; everything else is refused (see UNSUPPORTED_KEYS). */
export const IMPLEMENTED_KEYS: ReadonlySet<string> = new Set([...TYPED_KEYS, ...METADATA_KEYS]);

/** The language-tagged keys gatehouse shows (on the login and consent pages): `client_name#fi`, `client_name#sv-FI`, `logo_uri#fi`. */
export const LOCALIZED_NAME = 'client_name';
export const LOCALIZED_LOGO = 'logo_uri';
export const LOCALIZED_KEYS = [LOCALIZED_NAME, LOCALIZED_LOGO] as const;

/**
 * Whether gatehouse knows the metadata key: one it implements (`client_name#<tag>` included), one
 * it refuses with a reason (UNSUPPORTED_KEYS, language-tagged forms included), or one it generates.
 * Dynamic registration drops the others (RFC 7591 §2: the server "MUST ignore any client metadata
 * sent by the client that it does not understand"), where the CLI refuses them.
 */
export function isKnownMetadataKey(key: string): boolean {
  const base = key.includes('#') ? key.slice(0, key.indexOf('#')) : key;
  return IMPLEMENTED_KEYS.has(base) || Object.hasOwn(UNSUPPORTED_KEYS, base) || (GENERATED_KEYS as readonly string[]).includes(base);
}
