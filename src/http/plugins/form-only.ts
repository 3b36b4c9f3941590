import type { FastifyRequest } from 'fastify';
import { InvalidRequest } from '../../oauth/errors.ts';
import type { RawParams } from '../params.ts';

/**
 * The back-channel endpoints take only application/x-www-form-urlencoded bodies (RFC 6749 §3.2,
 * RFC 7662 §2.1, RFC 7009 §2.1); a JSON or multipart body is invalid_request, not a parse of
 * something else.
 */
export async function requireFormBody(request: FastifyRequest): Promise<void> {
  if (request.method !== 'POST') return;
  const type = (request.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/x-www-form-urlencoded') throw new InvalidRequest('The request body must be application/x-www-form-urlencoded.');
}

/** The parsed form body; an empty body is no parameters. */
export function formBody(request: FastifyRequest): RawParams {
  return (request.body ?? {}) as RawParams;
}
