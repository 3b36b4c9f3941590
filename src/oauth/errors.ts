/**
 * One class per RFC error code. Each knows its HTTP status and whether it may be sent to the
 * client's redirect_uri; `description` is safe to show the client, `detail` goes only to the log.
 * Rendering to the wire happens in one place: src/http/render/.
 */
export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'unsupported_response_type'
  | 'invalid_scope'
  | 'invalid_target'
  | 'access_denied'
  | 'login_required'
  | 'interaction_required'
  | 'consent_required'
  | 'unmet_authentication_requirements'
  | 'request_not_supported'
  | 'request_uri_not_supported'
  | 'invalid_token'
  | 'insufficient_scope'
  | 'invalid_redirect_uri'
  | 'server_error'
  | 'temporarily_unavailable'
  | 'slow_down'
  | 'authorization_pending'
  | 'expired_token'
  | 'invalid_client_metadata'
  | 'invalid_software_statement';

export interface OAuthErrorOptions {
  /** Logged, never sent. */
  detail?: string;
  cause?: unknown;
}

export abstract class OAuthError extends Error {
  abstract readonly error: OAuthErrorCode;
  abstract readonly status: number;
  /** May this error be delivered to the (already validated) redirect_uri? RFC 6749 §4.1.2.1. */
  readonly redirectable: boolean = true;
  readonly description: string;
  readonly detail: string | undefined;

  constructor(description: string, options: OAuthErrorOptions = {}) {
    super(description, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.description = sanitizeDescription(description);
    this.detail = options.detail;
  }
}

/**
 * error_description may hold only %x20-21 / %x23-5B / %x5D-7E (RFC 6749 §4.1.2.1, §5.2): anything
 * else, including `"` and `\`, is replaced so a hostile parameter echoed in a message cannot break it.
 */
export function sanitizeDescription(text: string): string {
  return text.replace(/[^\x20\x21\x23-\x5b\x5d-\x7e]/g, '?').slice(0, 300);
}

export class InvalidRequest extends OAuthError {
  readonly error = 'invalid_request';
  readonly status: number = 400;
}

/** The body is larger than the endpoint accepts. */
export class PayloadTooLarge extends InvalidRequest {
  override readonly status: number = 413;
}


/** Client authentication failed (RFC 6749 §5.2): 401, with a Basic challenge when Basic was tried. */
export class InvalidClient extends OAuthError {
  readonly error = 'invalid_client';
  readonly status = 401;
  override readonly redirectable = false;
  /** The scheme the client tried, for the WWW-Authenticate challenge. */
  readonly usedBasic: boolean;
  constructor(description: string, options: OAuthErrorOptions & { usedBasic?: boolean } = {}) {
    super(description, options);
    this.usedBasic = options.usedBasic ?? false;
  }
}

export class InvalidGrant extends OAuthError {
  readonly error = 'invalid_grant';
  readonly status = 400;
}

export class UnauthorizedClient extends OAuthError {
  readonly error = 'unauthorized_client';
  readonly status = 400;
}

export class UnsupportedGrantType extends OAuthError {
  readonly error = 'unsupported_grant_type';
  readonly status = 400;
}

export class UnsupportedResponseType extends OAuthError {
  readonly error = 'unsupported_response_type';
  readonly status = 400;
}

export class InvalidScope extends OAuthError {
  readonly error = 'invalid_scope';
  readonly status = 400;
}

/**
 * RFC 8707 §2: a `resource` parameter that is not an absolute URI without a fragment, names no
 * registered resource server, or names one the client may not obtain tokens for (its `aud`).
 * Answered at the authorization endpoint by redirect (§2: "invalid_target" in the error response),
 * at the token and device authorization endpoints with 400 (RFC 6749 §5.2).
 */
export class InvalidTarget extends OAuthError {
  readonly error = 'invalid_target';
  readonly status = 400;
}

export class AccessDenied extends OAuthError {
  readonly error = 'access_denied';
  readonly status: number = 403;
}

/** RFC 8628 §3.5: the user denied the device authorization; a token error, so 400 (RFC 6749 §5.2). */
export class DeviceAccessDenied extends AccessDenied {
  override readonly status: number = 400;
}

/** RFC 8628 §3.5: the user has not yet approved or denied; the client keeps polling at its interval. */
export class AuthorizationPending extends OAuthError {
  readonly error = 'authorization_pending';
  readonly status = 400;
  override readonly redirectable = false;
}

/** RFC 8628 §3.5: the device_code has expired; the client may start a new device authorization. */
export class ExpiredToken extends OAuthError {
  readonly error = 'expired_token';
  readonly status = 400;
  override readonly redirectable = false;
}

/** OIDC Core §3.1.2.6. */
export class LoginRequired extends OAuthError {
  readonly error = 'login_required';
  readonly status = 400;
}

export class InteractionRequired extends OAuthError {
  readonly error = 'interaction_required';
  readonly status = 400;
}

/**
 * OpenID Connect Core Unmet Authentication Requirements 1.0 §2: the server cannot authenticate the
 * user as the client requires (an essential `acr`, or the client's policy): sent to the redirect URI.
 */
export class UnmetAuthenticationRequirements extends OAuthError {
  readonly error = 'unmet_authentication_requirements';
  readonly status = 400;
}

export class ConsentRequired extends OAuthError {
  readonly error = 'consent_required';
  readonly status = 400;
}

export class RequestNotSupported extends OAuthError {
  readonly error = 'request_not_supported';
  readonly status = 400;
}

export class RequestUriNotSupported extends OAuthError {
  readonly error = 'request_uri_not_supported';
  readonly status = 400;
}

/** RFC 6750 §3.1: the bearer token is missing its mark (expired, revoked, unknown, malformed). */
export class InvalidToken extends OAuthError {
  readonly error = 'invalid_token';
  readonly status = 401;
  override readonly redirectable = false;
}

export class InsufficientScope extends OAuthError {
  readonly error = 'insufficient_scope';
  readonly status = 403;
  override readonly redirectable = false;
  readonly scope: string;
  constructor(description: string, scope: string, options: OAuthErrorOptions = {}) {
    super(description, options);
    this.scope = scope;
  }
}

/**
 * The client_id names no active client at the authorization endpoint: shown to the user as a page,
 * never redirected (RFC 6749 §4.1.2.1). Its code is invalid_client, the code RFC 6749 §5.2 gives
 * an unknown client, but it is not InvalidClient: no client authentication was tried, so it is a
 * 400 without a WWW-Authenticate challenge (docs/decisions.md F5).
 */
export class UnknownClient extends OAuthError {
  readonly error = 'invalid_client';
  readonly status = 400;
  override readonly redirectable = false;
}

/**
 * The redirect_uri could not be verified for a known client: shown to the user, never redirected
 * (RFC 6749 §4.1.2.1, §3.1.2.4). `applicationUri` is where the page may offer to go back: the
 * origin of one of the client's registered redirect URIs (check-redirect-uri.ts), never anything
 * the request sent.
 */
export class InvalidRedirectUri extends OAuthError {
  readonly error = 'invalid_redirect_uri';
  readonly status = 400;
  override readonly redirectable = false;
  readonly applicationUri: string | undefined;
  constructor(description: string, options: OAuthErrorOptions & { applicationUri?: string | undefined } = {}) {
    super(description, options);
    this.applicationUri = options.applicationUri;
  }
}

export class ServerError extends OAuthError {
  readonly error = 'server_error';
  readonly status = 500;
}

/** The store is unreachable or overloaded; the request may be retried (RFC 6749 §4.1.2.1). */
export class TemporarilyUnavailable extends OAuthError {
  readonly error = 'temporarily_unavailable';
  readonly status = 503;
}

/** Too many attempts; `retryAfter` seconds until the next may succeed. */
export class SlowDown extends OAuthError {
  readonly error = 'slow_down';
  readonly status: number = 429;
  readonly retryAfter: number;
  constructor(description: string, retryAfter: number, options: OAuthErrorOptions = {}) {
    super(description, options);
    this.retryAfter = retryAfter;
  }
}

/**
 * RFC 8628 §3.5: a device polled sooner than its interval. The same code as the throttle's
 * SlowDown, but a token-endpoint error of the polling rules, so 400 (RFC 6749 §5.2); `retryAfter`
 * is the new interval (the old one plus 5 seconds).
 */
export class PollingSlowDown extends SlowDown {
  override readonly status: number = 400;
  override readonly redirectable = false;
}

/** RFC 7591 §3.2.2: a client metadata value is invalid (the description names the field). */
export class InvalidClientMetadataError extends OAuthError {
  readonly error = 'invalid_client_metadata';
  readonly status = 400;
  override readonly redirectable = false;
}

/** RFC 7591 §3.2.2: the software statement is invalid (gatehouse accepts none: docs/decisions.md DR*). */
export class InvalidSoftwareStatement extends OAuthError {
  readonly error = 'invalid_software_statement';
  readonly status = 400;
  override readonly redirectable = false;
}
