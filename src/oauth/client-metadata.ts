/**
 * The client metadata document on the wire (snake_case, as Ubisecure's management import and
 * RFC 7591 §2) and the typed client settings it stands for. This module is the one place the
 * two are mapped, both ways.
 */
import { ACCESS_TOKEN_FORMATS, DEFAULT_SIGNING_ALG, SIGNING_ALGS, isSigningAlg, type SigningAlg } from '../protocol/constants.ts';
import { PKCE_METHODS, defaultGrantTypes, isResourceServer, resourceUrisOf, type Client, type ClientAuthMethod, type GrantType, type PkceMethod } from '../domain/client.ts';
import { jwksUriProblem, publicKeySet } from './jwks.ts';
import { CLIENT_AUTH_METHOD_NAMES, signingAlgsOf } from './client-auth/registry.ts';
import { CONFIDENTIAL_GRANT_TYPES, GRANT_TYPES_SUPPORTED } from './grants/registry.ts';
import { redirectUriProblem, redirectUriWarning } from './redirect-uri-rules.ts';
import { OIDC_STANDARD_SCOPES } from './scope-values.ts';

/** A client metadata value that cannot be accepted; `field` is its wire name. */
export class InvalidClientMetadata extends Error {
  readonly field: string;
  constructor(field: string, message: string) {
    super(`${field}: ${message}`);
    this.name = 'InvalidClientMetadata';
    this.field = field;
  }
}

/** What a metadata document decides about a client: everything but identity, secret and times. */
export type ClientSettings = Pick<
  Client,
  | 'name'
  | 'redirectUris'
  | 'tokenEndpointAuthMethod'
  | 'grantTypes'
  | 'codeChallengeMethod'
  | 'scope'
  | 'refreshTokens'
  | 'rotateRefreshTokens'
  | 'accessTokenTtl'
  | 'postLogoutRedirectUris'
  | 'idTokenSignedResponseAlg'
  | 'userinfoSignedResponseAlg'
  | 'authorizationPolicy'
  | 'metadata'
> & {
  /** undefined when the document does not say. */
  active: boolean | undefined;
};

export { isResourceServer, resourceUrisOf };

// The audience reader moved to the domain (src/domain/client.ts, issue 23 item 3); re-exported for
// the two REST APIs' auth.ts until they import it from there.
export { allowedAudiences } from '../domain/client.ts';

/** Keys gatehouse generates; they appear in responses only (RFC 7591 §3.2.1). */
export const GENERATED_KEYS = ['client_id', 'client_secret', 'client_id_issued_at', 'client_secret_expires_at', 'created_at'] as const;

/**
 * Keys gatehouse does not implement, with the reason it gives. Any key that is neither here nor
 * in IMPLEMENTED_KEYS is refused too: metadata gatehouse stored but did not act on would look like
 * a protection (or a feature) that is not there — `aud` was one (docs/decisions.md, "Client
 * metadata gatehouse cannot enforce"; RFC 9700 §2.3).
 */
const UNSUPPORTED_KEYS: Record<string, string> = {
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
  default_max_age: 'max_age is taken from the request only',
  require_auth_time: 'auth_time is always in the ID token',
  default_acr_values: 'acr is chosen from the request and GATEHOUSE_ACR only',
  initiate_login_uri: 'third-party initiated login is not supported',
  frontchannel_logout_uri: 'front-channel logout is not supported',
  backchannel_logout_uri: 'back-channel logout is not supported',
  resource: 'a client asks for a resource with the resource parameter (RFC 8707); a resource server registers its URIs as resource_uris',
  audience: 'the key is aud',
};

/** Keys held in typed columns rather than in `metadata`. */
const TYPED_KEYS = new Set([
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
] as const;

/** Keys gatehouse acts on; everything else is refused (see UNSUPPORTED_KEYS). */
const IMPLEMENTED_KEYS: ReadonlySet<string> = new Set([...TYPED_KEYS, ...METADATA_KEYS]);

/** OIDC Registration §2 `application_type` values. */
export const APPLICATION_TYPES = ['web', 'native'] as const;

/** Most client_ids one client may name in `aud`. */
const MAX_AUDIENCES = 100;

const REFUSED_GRANTS: Record<string, string> = {
  implicit: 'the implicit grant is not offered (RFC 9700 §2.1.2); use authorization_code with PKCE',
};

/** Longest access token lifetime a client may ask for: one year. */
const MAX_ACCESS_TOKEN_TTL = 365 * 86_400;

/** RFC 6749 §3.3: scope-token = 1*( %x21 / %x23-5B / %x5D-7E ). */
const SCOPE_TOKEN = /^[\x21\x23-\x5b\x5d-\x7e]+$/;

/**
 * Validates a client metadata document and maps it to settings. A key with the value null
 * counts as absent. Every key must be one gatehouse implements: RFC 7591 §2 lets a server ignore
 * the others, but gatehouse refuses them, naming the key, rather than store a promise it does not
 * keep (docs/decisions.md). Keys without a typed column (`aud`, `response_types`,
 * `id_token_scope_claims`, `logo_uri`, `client_name#<language>` and `logo_uri#<language>`,
 * shown on the login page) are validated and kept in `metadata`.
 * Whether `aud` names registered clients needs the store: client-registration.ts checks it.
 */
/**
 * What a registration that names neither `grant_types` nor `refresh_tokens` gets, whichever front
 * end sends it (CLI, management API, dynamic registration): the console's new-client form starts
 * from it, so a client registered there with the form untouched is the API's default client.
 * Refresh tokens only when asked for (docs/cli.md, `--refresh-tokens`).
 */
export function registrationDefaults(authMethod: ClientAuthMethod | undefined): { grantTypes: GrantType[]; refreshTokens: boolean } {
  return { grantTypes: defaultGrantTypes(authMethod), refreshTokens: false };
}

export function parseClientMetadata(document: unknown): ClientSettings {
  if (typeof document !== 'object' || document === null || Array.isArray(document)) throw new InvalidClientMetadata('metadata', 'must be a JSON object');
  const doc = Object.fromEntries(Object.entries(document).filter(([, value]) => value !== null && value !== undefined));

  for (const key of GENERATED_KEYS) if (key in doc) throw new InvalidClientMetadata(key, 'is generated by gatehouse and cannot be set');
  for (const key of Object.keys(doc)) {
    if (IMPLEMENTED_KEYS.has(key)) continue;
    // Own keys only, as for grant_types below: "constructor" must not find Object.prototype's.
    if (Object.hasOwn(UNSUPPORTED_KEYS, key)) throw new InvalidClientMetadata(key, `is not supported: ${UNSUPPORTED_KEYS[key]}`);
    if (LOCALIZED_KEYS.some((base) => key.startsWith(`${base}#`))) continue;
    if (key.includes('#')) throw new InvalidClientMetadata(key, `is not supported: of the language-tagged metadata (RFC 7591 §2.2) only ${LOCALIZED_KEYS.map((base) => `${base}#<language>`).join(' and ')} are shown`);
    throw new InvalidClientMetadata(key, 'is not a client metadata key gatehouse implements; remove it (in an update, set it to null)');
  }

  const tokenEndpointAuthMethod = oneOf(doc, 'token_endpoint_auth_method', CLIENT_AUTH_METHOD_NAMES) as ClientAuthMethod | undefined;
  const resourceServer = resourceServerSettings(doc, tokenEndpointAuthMethod);
  const explicitGrants = doc.grant_types === undefined ? undefined : grantTypes(doc.grant_types);
  const defaults = registrationDefaults(tokenEndpointAuthMethod);
  const refreshTokens = optionalBoolean(doc, 'refresh_tokens') ?? explicitGrants?.includes('refresh_token') ?? defaults.refreshTokens;
  // A resource server needs no grant: it authenticates at introspection and revocation only.
  let grants = explicitGrants ?? (resourceServer ? [] : defaults.grantTypes);
  if (refreshTokens && !grants.includes('refresh_token')) {
    // A registered grant_types list is what the client asked for; only the default may be widened.
    if (explicitGrants) throw new InvalidClientMetadata('refresh_tokens', 'is true but grant_types does not include refresh_token');
    grants = [...grants, 'refresh_token'];
  }

  // RFC 6749 §4.4: client_credentials "MUST only be used by confidential clients" — a public
  // client could not prove it is the client the token is for; the password grant hands the
  // user's password to the client, so only a client that authenticates may hold it (RFC 9700
  // §2.4, docs/decisions.md PW2). Both declare Grant.confidential.
  const confidentialOnly = grants.find((grant) => CONFIDENTIAL_GRANT_TYPES.includes(grant));
  if (tokenEndpointAuthMethod === 'none' && confidentialOnly !== undefined) {
    throw new InvalidClientMetadata('grant_types', `"${confidentialOnly}" is for confidential clients only; a public client (token_endpoint_auth_method "none") cannot register it`);
  }

  // Redirect URIs belong to the authorization endpoint: a client of client_credentials only needs none.
  const redirectUris = uriList(doc, 'redirect_uris');
  if (grants.includes('authorization_code') && redirectUris.length === 0) {
    throw new InvalidClientMetadata('redirect_uris', 'at least one redirect URI is required for the authorization_code grant');
  }
  if (doc.response_types !== undefined) responseTypes(doc.response_types);
  oneOf(doc, 'application_type', APPLICATION_TYPES);
  optionalBoolean(doc, 'id_token_scope_claims');
  optionalBoolean(doc, 'consent_required');
  clientKeys(doc, tokenEndpointAuthMethod);
  if (doc.aud !== undefined) doc.aud = audienceList(doc.aud);
  if (doc.logo_uri !== undefined) logoUri(doc.logo_uri);
  oneOf(doc, 'access_token_format', ACCESS_TOKEN_FORMATS);
  signingAlg(doc, 'access_token_signed_response_alg');
  // Both describe the access tokens a resource server receives (RFC 9068, decision JA1): on any
  // other client they would promise something no token ever does.
  for (const key of ['access_token_format', 'access_token_signed_response_alg']) {
    if (doc[key] !== undefined && !resourceServer) throw new InvalidClientMetadata(key, 'is for resource servers only (resource_server: true): it describes the access tokens meant for one');
  }
  if (doc.allowed_cors_origins !== undefined) doc.allowed_cors_origins = corsOriginList(doc.allowed_cors_origins);
  for (const key of Object.keys(doc)) {
    if (key.startsWith(`${LOCALIZED_NAME}#`)) {
      languageTag(key, key.slice(LOCALIZED_NAME.length + 1));
      doc[key] = clientName(doc[key], key);
    } else if (key.startsWith(`${LOCALIZED_LOGO}#`)) {
      languageTag(key, key.slice(LOCALIZED_LOGO.length + 1));
      logoUri(doc[key], key);
    }
  }

  return {
    name: clientName(doc.client_name),
    redirectUris,
    tokenEndpointAuthMethod,
    grantTypes: grants,
    codeChallengeMethod: oneOf(doc, 'code_challenge_method', PKCE_METHODS) as PkceMethod | undefined,
    scope: doc.scope === undefined ? undefined : scope(doc.scope),
    refreshTokens,
    // Rotation by default: RFC 9700 §4.14.2 asks for rotation or sender-constrained refresh tokens.
    rotateRefreshTokens: optionalBoolean(doc, 'rotate_refresh_tokens') ?? true,
    accessTokenTtl: doc.access_token_ttl === undefined ? undefined : accessTokenTtl(doc.access_token_ttl),
    postLogoutRedirectUris: uriList(doc, 'post_logout_redirect_uris'),
    // OIDC Registration §2: RS256 unless the client registers another.
    idTokenSignedResponseAlg: signingAlg(doc, 'id_token_signed_response_alg') ?? DEFAULT_SIGNING_ALG,
    userinfoSignedResponseAlg: signingAlg(doc, 'userinfo_signed_response_alg'),
    authorizationPolicy: doc.authorization_policy === undefined ? undefined : policyName(doc.authorization_policy),
    metadata: Object.fromEntries(Object.entries(doc).filter(([key]) => !TYPED_KEYS.has(key))),
    active: optionalBoolean(doc, 'active'),
  };
}

/**
 * What is registered but not as the standards recommend, as `field: why` lines for the operator
 * (the CLI prints them as warnings): a private-use redirect scheme without a dot (RFC 8252 §7.1).
 */
export function clientWarnings(client: Pick<Client, 'redirectUris' | 'postLogoutRedirectUris'>): string[] {
  const warn = (field: string, uris: readonly string[]) => uris.map(redirectUriWarning).filter((w): w is string => w !== undefined).map((w) => `${field}: ${w}`);
  return [...warn('redirect_uris', client.redirectUris), ...warn('post_logout_redirect_uris', client.postLogoutRedirectUris)];
}

/**
 * The client as a metadata document: the wire view of `client show` and of registration
 * responses. Never carries the secret or its hash. Absent optional values are left out.
 */
export function clientView(client: Client): Record<string, unknown> {
  const extras = Object.fromEntries(Object.entries(client.metadata).filter(([key]) => !TYPED_KEYS.has(key) && !(GENERATED_KEYS as readonly string[]).includes(key)));
  return {
    client_id: client.clientId,
    client_name: client.name,
    redirect_uris: client.redirectUris,
    grant_types: client.grantTypes,
    token_endpoint_auth_method: client.tokenEndpointAuthMethod,
    code_challenge_method: client.codeChallengeMethod,
    scope: client.scope,
    refresh_tokens: client.refreshTokens,
    rotate_refresh_tokens: client.rotateRefreshTokens,
    access_token_ttl: client.accessTokenTtl,
    post_logout_redirect_uris: client.postLogoutRedirectUris,
    id_token_signed_response_alg: client.idTokenSignedResponseAlg,
    userinfo_signed_response_alg: client.userinfoSignedResponseAlg,
    authorization_policy: client.authorizationPolicy,
    active: client.active,
    created_at: new Date(client.createdAt).toISOString(),
    ...extras,
  };
}

function clientName(value: unknown, field = 'client_name'): string {
  if (value === undefined) throw new InvalidClientMetadata(field, 'is required');
  if (typeof value !== 'string' || value.trim() === '') throw new InvalidClientMetadata(field, 'must be a non-empty string');
  const name = value.trim();
  if ([...name].length > 255) throw new InvalidClientMetadata(field, 'must be at most 255 characters');
  if (/\p{Cc}/u.test(name)) throw new InvalidClientMetadata(field, 'must not contain control characters');
  return name;
}

/** The language-tagged keys gatehouse shows (on the login and consent pages): `client_name#fi`, `client_name#sv-FI`, `logo_uri#fi`. */
const LOCALIZED_NAME = 'client_name';
const LOCALIZED_LOGO = 'logo_uri';
const LOCALIZED_KEYS = [LOCALIZED_NAME, LOCALIZED_LOGO] as const;

/** BCP 47 (RFC 5646 §2.1) language tag of a `client_name#<tag>` key (RFC 7591 §2.2). */
function languageTag(field: string, tag: string): void {
  let valid = /^[A-Za-z]{2,8}(-[A-Za-z0-9]{1,8})*$/.test(tag);
  if (valid) {
    try {
      Intl.getCanonicalLocales(tag);
    } catch {
      valid = false;
    }
  }
  if (!valid) throw new InvalidClientMetadata(field, `${JSON.stringify(tag)} is not a BCP 47 language tag such as fi or sv-FI (RFC 7591 §2.2)`);
}

/**
 * `logo_uri` (RFC 7591 §2), shown on the login page. https, or http on a loopback host for
 * development; no credentials, no fragment; a host the page's Content-Security-Policy can name
 * (img-src is widened to this origin on the login page only, see imageSource in
 * src/http/plugins/security-headers.ts), so an IPv6 literal is refused.
 */
function logoUri(value: unknown, field = 'logo_uri'): void {
  const refuse = (why: string) => new InvalidClientMetadata(field, why);
  if (typeof value !== 'string' || value === '') throw refuse('must be a URL string');
  if (value.length > 2048 || /[^\x21-\x7e]/.test(value)) throw refuse('must be printable ASCII, at most 2048 characters');
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw refuse('is not a valid absolute URL');
  }
  if (url.username !== '' || url.password !== '') throw refuse('must not contain user information');
  if (value.includes('#')) throw refuse('must not contain a fragment');
  if (!/^[a-z0-9.-]+(:[0-9]+)?$/.test(url.host)) throw refuse('must name its host by a DNS name or an IPv4 address');
  if (url.protocol === 'https:') return;
  if (url.protocol === 'http:' && (url.hostname === '127.0.0.1' || url.hostname === 'localhost')) return;
  throw refuse('must be an https URL (http only on a loopback host)');
}

/**
 * The client's name in `language` (a locale of the login page, e.g. `fi`): `client_name#<tag>`
 * whose tag is the language exactly (case-insensitively), else one whose primary subtag is it
 * (`client_name#fi-FI`), else `client_name` (RFC 7591 §2.2: the untagged value is the default).
 */
export function clientNameFor(client: Pick<Client, 'name' | 'metadata'>, language: string): string {
  return localized(client.metadata, LOCALIZED_NAME, language) ?? client.name;
}

/** The value of `<base>#<tag>` for `language`: exact tag first, then by primary subtag; undefined when none is a string. */
function localized(metadata: Client['metadata'], base: string, language: string): string | undefined {
  const tagged = Object.entries(metadata).filter((entry): entry is [string, string] => entry[0].startsWith(`${base}#`) && typeof entry[1] === 'string');
  const wanted = language.toLowerCase();
  const tagOf = (key: string) => key.slice(base.length + 1).toLowerCase();
  return (tagged.find(([key]) => tagOf(key) === wanted) ?? tagged.find(([key]) => tagOf(key).split('-')[0] === wanted))?.[1];
}

/**
 * Whether the client is third-party: its users are asked for consent before the first code
 * (src/oauth/authorize/consent.ts). Only `true` counts; absent or anything else — a row stored
 * before the key was validated — is a first-party client, the default.
 */
export function consentRequired(client: Pick<Client, 'metadata'>): boolean {
  return client.metadata.consent_required === true;
}

/**
 * The client's registered `logo_uri`, when it is a string (a row stored before it was validated
 * may hold anything); with `language`, its `logo_uri#<tag>` for that language first (RFC 7591
 * §2.2, chosen as clientNameFor chooses the name).
 */
export function logoUriOf(client: Pick<Client, 'metadata'>, language?: string): string | undefined {
  const tagged = language === undefined ? undefined : localized(client.metadata, LOCALIZED_LOGO, language);
  return tagged ?? (typeof client.metadata.logo_uri === 'string' ? client.metadata.logo_uri : undefined);
}

function grantTypes(value: unknown): GrantType[] {
  const list = stringList(value, 'grant_types');
  for (const grant of list) {
    // Own keys only: "toString" found Object.prototype's and printed its source as the reason.
    if (Object.hasOwn(REFUSED_GRANTS, grant)) throw new InvalidClientMetadata('grant_types', `"${grant}": ${REFUSED_GRANTS[grant]}`);
    // Only grants the token endpoint implements (grants/registry.ts): a client may not register a promise nobody keeps.
    if (!(GRANT_TYPES_SUPPORTED as readonly string[]).includes(grant)) {
      throw new InvalidClientMetadata('grant_types', `"${grant}" is not supported; the grants are ${GRANT_TYPES_SUPPORTED.join(', ')}`);
    }
  }
  // An empty list is valid and disables every grant (Ubisecure semantics).
  return [...new Set(list)] as GrantType[];
}

/**
 * The keys of JWT client authentication (RFC 7591 §2, OIDC Registration §2; RFC 7523): `jwks`
 * (public keys inline) or `jwks_uri` (where they are published), never both, and one of them
 * for private_key_jwt — which is also the only method that uses them. `token_endpoint_auth_signing_alg`
 * narrows a JWT method to one of the algorithms it accepts (src/oauth/client-auth/registry.ts).
 */
function clientKeys(doc: Record<string, unknown>, method: ClientAuthMethod | undefined): void {
  const { jwks, jwks_uri: jwksUri } = doc;
  if (jwks !== undefined && jwksUri !== undefined) throw new InvalidClientMetadata('jwks', 'jwks and jwks_uri cannot both be registered (RFC 7591 §2): give one');
  if (method === 'private_key_jwt' && jwks === undefined && jwksUri === undefined) {
    throw new InvalidClientMetadata('token_endpoint_auth_method', 'private_key_jwt needs the client\'s public keys: register jwks or jwks_uri');
  }
  if ((jwks !== undefined || jwksUri !== undefined) && method !== 'private_key_jwt') {
    throw new InvalidClientMetadata(jwks !== undefined ? 'jwks' : 'jwks_uri', 'is used only by token_endpoint_auth_method private_key_jwt');
  }
  if (jwks !== undefined) publicKeySet(jwks, (why) => new InvalidClientMetadata('jwks', why)).keys.forEach(publicJwk);
  if (jwksUri !== undefined) {
    if (typeof jwksUri !== 'string') throw new InvalidClientMetadata('jwks_uri', 'must be a URL string');
    const problem = jwksUriProblem(jwksUri);
    if (problem) throw new InvalidClientMetadata('jwks_uri', problem);
  }
  const alg = doc.token_endpoint_auth_signing_alg;
  if (alg !== undefined) {
    const allowed = signingAlgsOf(method);
    if (allowed.length === 0) throw new InvalidClientMetadata('token_endpoint_auth_signing_alg', 'applies only to token_endpoint_auth_method private_key_jwt or client_secret_jwt');
    if (typeof alg !== 'string' || !allowed.includes(alg)) throw new InvalidClientMetadata('token_endpoint_auth_signing_alg', `must be one of ${allowed.join(', ')} for ${method}`);
  }
}

/** One registered public key, checked for the members its kty needs (RFC 7518 §6.2.1, §6.3.1; RFC 8037 §2); `use`, if given, must be sig. */
function publicJwk(jwk: Record<string, unknown>): void {
  const refuse = (why: string) => new InvalidClientMetadata('jwks', `${jwk.kid === undefined ? 'a key' : `key ${JSON.stringify(jwk.kid)}`} ${why}`);
  const needed = jwk.kty === 'RSA' ? ['n', 'e'] : jwk.kty === 'EC' ? ['crv', 'x', 'y'] : ['crv', 'x'];
  const missing = needed.find((member) => typeof jwk[member] !== 'string' || jwk[member] === '');
  if (missing !== undefined) throw refuse(`lacks "${missing}"`);
  if (jwk.use !== undefined && jwk.use !== 'sig') throw refuse('has a "use" other than sig');
  if (jwk.kid !== undefined && (typeof jwk.kid !== 'string' || jwk.kid.length > 255)) throw refuse('has a kid that is not a string of at most 255 characters');
}

function responseTypes(value: unknown): void {
  const list = stringList(value, 'response_types');
  if (list.some((type) => type !== 'code')) throw new InvalidClientMetadata('response_types', 'only "code" is supported (no implicit or hybrid flow)');
}

function uriList(doc: Record<string, unknown>, field: string): string[] {
  if (doc[field] === undefined) return [];
  const list = stringList(doc[field], field);
  for (const uri of list) {
    const problem = redirectUriProblem(uri);
    if (problem) throw new InvalidClientMetadata(field, `${JSON.stringify(uri)} ${problem}`);
  }
  return list;
}

/**
 * `aud` (Ubisecure): the client_ids this client may ask for as the audience of its tokens, by
 * sending them as scope values. Stored as a list without duplicates, in the order given.
 */
function audienceList(value: unknown): string[] {
  const list = stringList(value, 'aud');
  if (list.length > MAX_AUDIENCES) throw new InvalidClientMetadata('aud', `may name at most ${MAX_AUDIENCES} client_ids`);
  const bad = list.find((id) => id === '' || id.length > 255 || !SCOPE_TOKEN.test(id));
  // An audience is requested as a scope value, so it must be one (RFC 6749 §3.3).
  if (bad !== undefined) throw new InvalidClientMetadata('aud', `${JSON.stringify(bad)} cannot be a client_id requested as a scope value (RFC 6749 §3.3)`);
  return [...new Set(list)];
}

/** Most URIs one resource server may register in `resource_uris`. */
const MAX_RESOURCE_URIS = 100;

/**
 * `resource_server` and `resource_uris` (docs/decisions.md, "Resource servers and resource
 * indicators"): a resource server is a confidential client — it authenticates at introspection
 * and revocation — that may be named in other clients' `aud` and asked for with RFC 8707's
 * `resource` parameter as any of its `resource_uris`. Only a resource server may register
 * resource_uris. Returns whether the client is one; normalises `doc.resource_uris`.
 */
function resourceServerSettings(doc: Record<string, unknown>, method: ClientAuthMethod | undefined): boolean {
  const resourceServer = optionalBoolean(doc, 'resource_server') ?? false;
  if (resourceServer && method === 'none') {
    throw new InvalidClientMetadata('resource_server', 'a resource server is a confidential client (it authenticates at introspection); token_endpoint_auth_method "none" cannot be one');
  }
  if (doc.resource_scopes !== undefined) {
    if (!resourceServer) throw new InvalidClientMetadata('resource_scopes', 'only a resource server (resource_server: true) may declare scope values');
    doc.resource_scopes = resourceScopeList(doc.resource_scopes);
  }
  if (doc.resource_uris === undefined) return resourceServer;
  if (!resourceServer) throw new InvalidClientMetadata('resource_uris', 'only a resource server (resource_server: true) may register resource URIs');
  const list = stringList(doc.resource_uris, 'resource_uris');
  if (list.length > MAX_RESOURCE_URIS) throw new InvalidClientMetadata('resource_uris', `may list at most ${MAX_RESOURCE_URIS} URIs`);
  for (const uri of list) {
    const problem = resourceUriProblem(uri);
    if (problem) throw new InvalidClientMetadata('resource_uris', `${JSON.stringify(uri)} ${problem}`);
  }
  doc.resource_uris = [...new Set(list)];
  return resourceServer;
}

/** Most scope values one resource server may declare in `resource_scopes`. */
const MAX_RESOURCE_SCOPES = 100;

/**
 * `resource_scopes` (docs/decisions.md RS1): the scope values a resource server understands, which
 * a client asks for to get a token for it with that value (RFC 6749 §3.3: the server defines its
 * scope values; RFC 9728 §2 calls a protected resource's list `scopes_supported`). Each is an RFC
 * 6749 §3.3 scope-token of at most 255 characters and no OpenID Connect value; that no other
 * resource server declared it, and that it is no client_id, is the store's to say
 * (client-registration.ts). Normalised to a list without duplicates, in the order given.
 */
function resourceScopeList(value: unknown): string[] {
  const list = stringList(value, 'resource_scopes');
  if (list.length > MAX_RESOURCE_SCOPES) throw new InvalidClientMetadata('resource_scopes', `may declare at most ${MAX_RESOURCE_SCOPES} scope values`);
  const bad = list.find((token) => token === '' || token.length > 255 || !SCOPE_TOKEN.test(token));
  if (bad !== undefined) throw new InvalidClientMetadata('resource_scopes', `${JSON.stringify(bad)} is not a scope value (RFC 6749 §3.3: printable ASCII without spaces, quotes or backslashes), at most 255 characters`);
  const standard = list.find((token) => OIDC_STANDARD_SCOPES.has(token));
  if (standard !== undefined) throw new InvalidClientMetadata('resource_scopes', `${JSON.stringify(standard)} is a scope value OpenID Connect defines; choose a name of the API's own, such as orders.read`);
  return [...new Set(list)];
}

/** Longest resource URI, as a registered value and as a `resource` parameter. */
export const MAX_RESOURCE_URI_LENGTH = 2048;

/**
 * Why `value` cannot be a resource indicator, or undefined. RFC 8707 §2: "an absolute URI, as
 * specified by Section 4.3 of [RFC3986]" that "MUST NOT include a fragment component". gatehouse
 * registers only https URIs, or http on a loopback host for development (RFC 8707 §2 "SHOULD NOT
 * include a query component" is left to the operator: a query is accepted, compared exactly), and
 * no user information. A `resource` parameter is compared with the registered URIs exactly, so a
 * request for anything else is unknown (invalid_target) without a rule of its own.
 */
export function resourceUriProblem(value: string): string | undefined {
  if (value.length > MAX_RESOURCE_URI_LENGTH || /[^\x21-\x7e]/.test(value)) return `must be printable ASCII, at most ${MAX_RESOURCE_URI_LENGTH} characters`;
  if (value.includes('#')) return 'must not contain a fragment (RFC 8707 §2)';
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'is not an absolute URI (RFC 8707 §2)';
  }
  if (url.username !== '' || url.password !== '') return 'must not contain user information';
  if (url.protocol === 'https:') return undefined;
  if (url.protocol === 'http:' && isLoopbackHost(url.hostname)) return undefined;
  return 'must be an https URI (http only on a loopback host)';
}

/** Most origins one client may list in `allowed_cors_origins`. */
const MAX_CORS_ORIGINS = 100;

/**
 * `allowed_cors_origins`: the browser origins (RFC 6454 §6.2 serialization, `scheme://host[:port]`)
 * whose pages may read this client's answers from the token, revocation and UserInfo endpoints
 * (src/http/plugins/cors.ts). https, or http on a loopback host for development; no path, query,
 * fragment or user information; the default port is left out (browsers send `https://a.example`,
 * never `https://a.example:443`). Stored lower-case, without duplicates, in the order given.
 */
function corsOriginList(value: unknown): string[] {
  const list = stringList(value, 'allowed_cors_origins');
  if (list.length > MAX_CORS_ORIGINS) throw new InvalidClientMetadata('allowed_cors_origins', `may list at most ${MAX_CORS_ORIGINS} origins`);
  return [...new Set(list.map(corsOrigin))];
}

function corsOrigin(value: string): string {
  const refuse = (why: string) => new InvalidClientMetadata('allowed_cors_origins', `${JSON.stringify(value)} ${why}`);
  if (value.length > 2048 || /[^\x21-\x7e]/.test(value)) throw refuse('must be printable ASCII, at most 2048 characters');
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw refuse('is not an origin such as https://app.example.com');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw refuse('must be an https origin (http only on a loopback host)');
  if (url.protocol === 'http:' && !isLoopbackHost(url.hostname)) throw refuse('must be an https origin (http only on a loopback host)');
  // An origin is scheme, host and port only (RFC 6454 §6.2): what a browser sends in Origin.
  if (url.origin.toLowerCase() !== value.toLowerCase()) {
    throw refuse(`is not an origin: write it as ${url.origin} (scheme://host[:port], no path, no trailing slash, no default port)`);
  }
  return url.origin;
}

function isLoopbackHost(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '[::1]' || /^127(\.\d{1,3}){3}$/.test(hostname);
}

/**
 * The origins whose browser pages may read this client's answers (src/http/plugins/cors.ts): its
 * `allowed_cors_origins` when registered (an empty list: none), otherwise the origins of its https
 * and http redirect URIs (a private-use scheme is no web origin). Read from the stored client at
 * each use; a malformed stored value allows nothing (fails closed).
 */
export function corsOriginsOf(client: Pick<Client, 'redirectUris' | 'metadata'>): string[] {
  const listed = client.metadata.allowed_cors_origins;
  if (listed !== undefined) return Array.isArray(listed) ? listed.filter((origin): origin is string => typeof origin === 'string') : [];
  const origins = new Set<string>();
  for (const uri of client.redirectUris) {
    try {
      const url = new URL(uri);
      if (url.protocol === 'https:' || url.protocol === 'http:') origins.add(url.origin);
    } catch {
      // A stored redirect URI that no longer parses names no origin.
    }
  }
  return [...origins];
}

function scope(value: unknown): string {
  if (typeof value !== 'string') throw new InvalidClientMetadata('scope', 'must be a string of space-separated scope values');
  const tokens = value.split(' ').filter((token) => token !== '');
  if (tokens.length === 0) throw new InvalidClientMetadata('scope', 'must not be empty');
  const bad = tokens.find((token) => !SCOPE_TOKEN.test(token));
  if (bad !== undefined) throw new InvalidClientMetadata('scope', `${JSON.stringify(bad)} is not a valid scope value (RFC 6749 §3.3)`);
  return [...new Set(tokens)].join(' ');
}

/**
 * `authorization_policy`: the name of a stored policy (src/domain/policy.ts). That it exists is
 * the store's to say (a foreign key, migration 012); registration turns a missing one into this error.
 */
function policyName(value: unknown): string {
  if (typeof value !== 'string' || value === '' || value.length > 100) throw new InvalidClientMetadata('authorization_policy', 'must be the name of a policy (gatehouse policy list)');
  return value;
}

function accessTokenTtl(value: unknown): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > MAX_ACCESS_TOKEN_TTL) {
    throw new InvalidClientMetadata('access_token_ttl', `must be a whole number of seconds from 0 to ${MAX_ACCESS_TOKEN_TTL}`);
  }
  return value;
}

/**
 * `id_token_signed_response_alg` / `userinfo_signed_response_alg` (OIDC Registration §2), and
 * `access_token_signed_response_alg` (the JWT access tokens of a resource server, RFC 9068 §2.1): one of
 * the algorithms we sign with (src/crypto/algorithms.ts). `none` is refused by name: an unsigned
 * ID token would let anyone who can reach the client forge a login (OIDC Core §2 allows it only
 * when no token travels through the front channel, which is not a promise gatehouse can keep).
 */
function signingAlg(doc: Record<string, unknown>, field: string): SigningAlg | undefined {
  const value = doc[field];
  if (value === undefined) return undefined;
  if (value === 'none') throw new InvalidClientMetadata(field, `"none" is refused: gatehouse signs every token; use one of ${SIGNING_ALGS.join(', ')}`);
  if (!isSigningAlg(value)) throw new InvalidClientMetadata(field, `${JSON.stringify(value)} is not an algorithm gatehouse signs with; use one of ${SIGNING_ALGS.join(', ')}`);
  return value;
}

function oneOf(doc: Record<string, unknown>, field: string, allowed: readonly string[]): string | undefined {
  const value = doc[field];
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !allowed.includes(value)) throw new InvalidClientMetadata(field, `must be one of ${allowed.join(', ')}`);
  return value;
}

function optionalBoolean(doc: Record<string, unknown>, field: string): boolean | undefined {
  const value = doc[field];
  if (value === undefined || typeof value === 'boolean') return value;
  throw new InvalidClientMetadata(field, 'must be true or false');
}

function stringList(value: unknown, field: string): string[] {
  if (!Array.isArray(value) || value.some((item) => typeof item !== 'string')) throw new InvalidClientMetadata(field, 'must be an array of strings');
  return value as string[];
}

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
