import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { InvalidClient, InsufficientScope, InvalidRequest, InvalidToken, OAuthError, PayloadTooLarge, ServerError, SlowDown, TemporarilyUnavailable } from '../../oauth/errors.ts';

/**
 * Turns anything thrown into an OAuthError: ours pass through, Fastify's request errors become
 * invalid_request, an unreachable store becomes temporarily_unavailable, and everything else
 * server_error, logged in full with the request id and never shown to the client.
 */
export function toOAuthError(error: unknown, request: FastifyRequest): OAuthError {
  if (error instanceof OAuthError) {
    if (error.detail) request.log.info({ err: error.error, detail: error.detail }, 'request refused');
    return error;
  }
  const e = error as FastifyError & { code?: string };
  if (e.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return new PayloadTooLarge('The request body is too large.');
  if (e.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return new InvalidRequest('The request body must be application/x-www-form-urlencoded.');
  if (typeof e.statusCode === 'number' && e.statusCode >= 400 && e.statusCode < 500) return new InvalidRequest('The request is malformed.', { detail: e.message });
  if (isStoreUnavailable(e)) {
    request.log.error({ err: error }, 'store unavailable');
    return new TemporarilyUnavailable('The service is temporarily unavailable; try again shortly.');
  }
  request.log.error({ err: error }, 'unexpected error');
  return new ServerError('The server could not complete the request.');
}

const UNAVAILABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', '57P01', '57P03', '08000', '08001', '08003', '08006', '53300']);

function isStoreUnavailable(e: { code?: string; message?: string; errcode?: number }): boolean {
  if (e.code && UNAVAILABLE_CODES.has(e.code)) return true;
  if (e.errcode === 5 || e.errcode === 6) return true; // SQLITE_BUSY, SQLITE_LOCKED after the busy timeout
  // pg: a connection lost mid-query, the pool's wait for a connection, a query past its timeout.
  return /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Query read timeout/i.test(e.message ?? '');
}

/** RFC 6749 §5.2 / RFC 7662 §2.3 / RFC 6750 §3: a JSON error body, never cached, with the right challenge. */
export function sendJsonError(reply: FastifyReply, error: OAuthError): FastifyReply {
  reply.code(error.status).header('cache-control', 'no-store').header('pragma', 'no-cache');
  // Every 401 carries a challenge (RFC 9110 §15.5.2); Basic is the scheme clients can retry with.
  if (error instanceof InvalidClient) reply.header('www-authenticate', 'Basic realm="gatehouse", charset="UTF-8"');
  if (error instanceof SlowDown) reply.header('retry-after', String(error.retryAfter));
  if (error instanceof TemporarilyUnavailable) reply.header('retry-after', '5');
  return reply.type('application/json').send({ error: error.error, error_description: error.description });
}

/** RFC 6750 §3: a Bearer challenge; no error attribute when the request carried no token at all. */
export function bearerChallenge(error: OAuthError | undefined): string {
  if (!error) return 'Bearer realm="gatehouse"';
  const parts = [`Bearer realm="gatehouse"`, `error="${error.error}"`, `error_description="${error.description}"`];
  if (error instanceof InsufficientScope) parts.push(`scope="${error.scope}"`);
  return parts.join(', ');
}

export function isBearerError(error: OAuthError): boolean {
  return error instanceof InvalidToken || error instanceof InsufficientScope;
}

/** The JSON error handler of the token-style routes (token, introspection, revocation, status). */
export function jsonErrorHandler(error: unknown, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  return sendJsonError(reply, toOAuthError(error, request));
}
