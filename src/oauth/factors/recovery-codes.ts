/**
 * Recovery codes: a set of 10 single-use codes shown once, for when the authenticator is lost.
 * Each is 16 characters of Crockford's base32 (80 bits, NIST SP 800-63B §5.1.2.1's minimum for a
 * look-up secret at 64 bits, with room), written xxxx-xxxx-xxxx-xxxx; the store keeps only their
 * SHA-256 (80 random bits make a fast hash enough, and the throttle bounds guesses). Typing is
 * forgiving: case, spaces, hyphens, and o/i/l for 0/1/1 are all accepted.
 */
import { hashSecret } from '../../lib/hash.ts';
import type { CodeMethod } from './method.ts';

export const RECOVERY_CODE_COUNT = 10;

/** Crockford's base32: digits and letters without i, l, o, u. */
const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';
const LENGTH = 16;

export const recoveryCodesMethod = {
  style: 'code' as const,
  kind: 'recovery_codes' as const,
  // RFC 8176 §2 has no value of its own for them: a recovery code is a one-time password (SA4).
  amr: ['otp'],
  recognises: (code) => normalizeRecoveryCode(code) !== undefined,
  async verify(deps, userId, code) {
    const normalized = normalizeRecoveryCode(code);
    if (normalized === undefined) return undefined;
    return deps.store.factors.useRecoveryCode(userId, hashSecret(normalized), deps.clock.now());
  },
} satisfies CodeMethod;

/** The code in the one form hashed (16 lowercase alphabet characters), or undefined when it has not a recovery code's shape. */
export function normalizeRecoveryCode(code: string): string | undefined {
  const text = code
    .toLowerCase()
    .replace(/[\s-]/g, '')
    .replace(/o/g, '0')
    .replace(/[il]/g, '1');
  if (text.length !== LENGTH) return undefined;
  for (const c of text) if (!ALPHABET.includes(c)) return undefined;
  return text;
}

/** `count` fresh codes, formatted for people, from `randomHex` (bytes as hex: deps.random.hex). */
export function newRecoveryCodes(randomHex: (bytes: number) => string, count = RECOVERY_CODE_COUNT): string[] {
  return Array.from({ length: count }, () => format(encode(Buffer.from(randomHex(10), 'hex'))));
}

/** The SHA-256 the store keeps of a code. */
export function recoveryCodeHash(code: string): string {
  const normalized = normalizeRecoveryCode(code);
  if (normalized === undefined) throw new Error('not a recovery code');
  return hashSecret(normalized);
}

/** 10 bytes → 16 base32 characters, 5 bits each. */
function encode(bytes: Buffer): string {
  let bits = 0n;
  for (const b of bytes) bits = (bits << 8n) | BigInt(b);
  let out = '';
  for (let i = LENGTH - 1; i >= 0; i--) out += ALPHABET[Number((bits >> BigInt(5 * i)) & 31n)];
  return out;
}

function format(code: string): string {
  return code.match(/.{4}/g)!.join('-');
}
