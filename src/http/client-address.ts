import { isIP } from 'node:net';
import type { FastifyRequest } from 'fastify';

/**
 * The address a request comes from, as the throttle counts it and the audit log records it.
 * Fastify's `request.ip` honours X-Forwarded-For only when the peer is one of
 * GATEHOUSE_TRUSTED_PROXIES (server.ts `trustProxy`): from it, the right-most address the proxies
 * did not add. When that entry is not an IP address at all (a proxy passing garbage through, or
 * an address with a port), the peer's own address is used: failing closed, a forged header can
 * only make the caller share the proxy's counters, never escape them (Authentik CVE-2024-47070).
 */
export function clientAddress(request: FastifyRequest): string {
  const forwarded = request.ip;
  if (typeof forwarded === 'string' && isIP(forwarded) !== 0) return forwarded;
  const peer = request.socket.remoteAddress;
  return peer !== undefined && isIP(peer) !== 0 ? peer : 'unknown';
}
