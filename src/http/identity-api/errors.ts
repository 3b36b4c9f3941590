/**
 * Errors of the identity REST API. The HTTP status is authoritative; the body carries one of
 * CustomerID's error codes and a message ("REST API response messages - CustomerID": the
 * `<error><code/><message/></error>` document and its code list), so clients written for the
 * product keep understanding them. Nothing else — no stack, no SQL — ever reaches a body.
 */
import type { FastifyError, FastifyRequest } from 'fastify';
import { IdentityError } from '../../identity/errors.ts';
import { MailNotConfiguredError } from '../../domain/outbox.ts';
import { PayloadTooLarge, TemporarilyUnavailable, type OAuthError } from '../../oauth/errors.ts';
import { toOAuthError } from '../render/errors.ts';
import { WIRE_NAME_OF_FIELD } from './wire-names.ts';

/** CustomerID's error codes, as written in its documentation (the subset gatehouse answers with). */
export type ApiErrorCode =
  | 'Invalid arguments'
  | 'Authentication failed'
  | 'Unauthorized'
  | 'Already exists'
  | 'Parent not found'
  | 'Internal server error'
  | 'Entity not found'
  | 'Invalid reference'
  | 'Size limit exceeded'
  | 'Method not allowed'
  | 'Client error';

export interface ApiErrorOptions {
  /** WWW-Authenticate challenges (RFC 9110 §11.6.1), one header each. */
  challenges?: string[];
  /** The methods the resource allows, for 405 (RFC 9110 §15.5.6). */
  allow?: string;
  /** Logged, never sent. */
  detail?: string;
  /** Seconds, for 429 and 503: the Retry-After header (RFC 9110 §10.2.3). */
  retryAfter?: number;
}

export class ApiError extends Error {
  readonly status: number;
  readonly code: ApiErrorCode;
  readonly challenges: string[];
  readonly allow: string | undefined;
  readonly detail: string | undefined;
  readonly retryAfter: number | undefined;
  constructor(status: number, code: ApiErrorCode, message: string, options: ApiErrorOptions = {}) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.code = code;
    this.challenges = options.challenges ?? [];
    this.allow = options.allow;
    this.detail = options.detail;
    this.retryAfter = options.retryAfter;
  }
}

export function invalidArguments(message: string): ApiError {
  return new ApiError(400, 'Invalid arguments', message);
}

export function sizeLimitExceeded(message: string, status = 400): ApiError {
  return new ApiError(status, 'Size limit exceeded', message);
}

/** The use cases name fields as the domain does; the API's clients know them by their wire names. */
function wireMessage(error: IdentityError): string {
  const field = error.field;
  if (field === undefined || !Object.hasOwn(WIRE_NAME_OF_FIELD, field) || !error.message.startsWith(`${field} `)) return error.message;
  return `${WIRE_NAME_OF_FIELD[field]}${error.message.slice(field.length)}`;
}

/** The identity use cases' codes (src/identity/errors.ts) on the wire. */
function fromIdentityError(error: IdentityError): ApiError {
  const message = wireMessage(error);
  switch (error.code) {
    case 'invalid_argument':
      return new ApiError(400, 'Invalid arguments', message);
    case 'invalid_reference':
      return new ApiError(400, error.field === 'parentId' ? 'Parent not found' : 'Invalid reference', message);
    case 'not_found':
      return new ApiError(404, 'Entity not found', message);
    case 'already_exists':
      return new ApiError(409, 'Already exists', message);
    case 'in_use':
    case 'inconsistent':
    case 'last_administrator':
      return new ApiError(409, 'Client error', message);
    // As a caller the API's authorization refuses (auth.ts): 403 with CustomerID's `Unauthorized`.
    case 'administrators_only':
      return new ApiError(403, 'Unauthorized', message);
  }
}

/** Anything thrown, as an ApiError; unexpected errors are logged in full and answered without detail. */
export function toApiError(error: unknown, request: FastifyRequest): ApiError {
  if (error instanceof ApiError) {
    if (error.detail) request.log.info({ code: error.code, detail: error.detail }, 'identity API request refused');
    return error;
  }
  if (error instanceof IdentityError) return fromIdentityError(error);
  // Inviting with mail off (docs/invitations.md): refused, never dropped.
  if (error instanceof MailNotConfiguredError) return new ApiError(409, 'Client error', error.message);
  const e = error as FastifyError;
  if (Array.isArray(e.validation) && e.validation.length > 0) return invalidArguments(validationMessage(e));
  if (e.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return new ApiError(415, 'Invalid arguments', 'The request body must be application/json or application/xml.');
  // Everything else Fastify or the store may throw goes through the server's one classification.
  const oauth: OAuthError = toOAuthError(error, request);
  if (oauth instanceof PayloadTooLarge) return sizeLimitExceeded('The request body is larger than 64 KiB.', 413);
  if (oauth instanceof TemporarilyUnavailable) return new ApiError(503, 'Internal server error', 'The service is temporarily unavailable; try again shortly.');
  // An OAuthError's description is written to be shown (e.g. the server-wide parameter limits).
  if (oauth.status < 500) return invalidArguments(oauth.description);
  return new ApiError(500, 'Internal server error', 'The server could not complete the request.');
}

/** Ajv's first error as one line naming the parameter, e.g. `querystring/maxResults must be integer`. */
function validationMessage(e: FastifyError): string {
  const first = e.validation![0]!;
  const where = `${e.validationContext ?? 'request'}${first.instancePath}`;
  if (first.keyword === 'pattern' && first.instancePath.endsWith('/id')) return `${first.instancePath.slice(1)} must be a UUID`;
  if (first.keyword === 'not') return `${where} is not allowed${e.validationContext === 'body' ? ' (attributes go in the body\'s "attributes" object)' : ''}`;
  return `${where} ${first.message ?? 'is invalid'}`;
}
