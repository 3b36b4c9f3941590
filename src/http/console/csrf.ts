/**
 * CSRF protection of the console's forms (OWASP CSRF Cheat Sheet: "signed double-submit" and
 * "verifying origin with standard headers"), two independent checks on every POST:
 *
 * 1. The form's hidden `csrf_token` must equal SHA-256 over a fixed label and the session cookie's
 *    value. A cross-site page can make the browser send the cookie but cannot read it, so it cannot
 *    compute the field. It is derived, not keyed by a per-process secret, so every instance behind a
 *    load balancer computes the same token (docs/decisions.md CO3); the cookie is a 256-bit-strong
 *    access token, so the hash reveals nothing usable and cannot be guessed.
 * 2. The request's Origin (or, without one, its Referer) must be the issuer's origin. The console's
 *    pages send `Referrer-Policy: same-origin`, under which browsers send a real Origin with a
 *    same-origin form post (with `no-referrer` they would send `Origin: null`).
 */
import { createHash } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { constantTimeEqual } from '../../lib/hash.ts';

const LABEL = 'gatehouse console csrf v1\u0000';

/** The form token of the session whose cookie value is `session`. */
export function csrfTokenFor(session: string): string {
  return createHash('sha256').update(LABEL, 'utf8').update(session, 'utf8').digest('base64url');
}

/** Whether `submitted` is the token of `session`, compared in constant time. */
export function csrfTokenValid(session: string, submitted: unknown): boolean {
  return typeof submitted === 'string' && constantTimeEqual(csrfTokenFor(session), submitted);
}

/**
 * Whether the request comes from a page of `origin`: its Origin header equals it, or, when the
 * browser sent none, its Referer is under it. Neither header → refused: every browser that runs
 * the console sends Origin with a form POST.
 */
export function sameOrigin(request: FastifyRequest, origin: string): boolean {
  const header = request.headers.origin;
  if (typeof header === 'string') return header === origin;
  const referer = request.headers.referer;
  if (typeof referer !== 'string') return false;
  try {
    return new URL(referer).origin === origin;
  } catch {
    return false;
  }
}
