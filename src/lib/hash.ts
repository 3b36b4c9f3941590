import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * SHA-256 of a high-entropy secret (token, code, generated client secret), base64url encoded.
 * At 256 bits of entropy a fast hash is enough: the store never holds a usable secret.
 */
export function hashSecret(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('base64url');
}

/** Compares two strings in time independent of where they differ (and of their lengths). */
export function constantTimeEqual(a: string, b: string): boolean {
  const da = createHash('sha256').update(a, 'utf8').digest();
  const db = createHash('sha256').update(b, 'utf8').digest();
  return timingSafeEqual(da, db) && a.length === b.length;
}
