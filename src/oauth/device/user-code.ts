import { randomInt } from 'node:crypto';

/**
 * User codes (RFC 8628 §6.1): 8 characters from 20 consonants, so no vowels spell words and no
 * pair of characters is easily confused (no 0/O, 1/I/L-style lookalikes among them). 20^8 ≈
 * 2.56 × 10^10 codes, about 34.6 bits (docs/security.md, "Device flow user codes").
 */
export const USER_CODE_ALPHABET = 'BCDFGHJKLMNPQRSTVWXZ';
export const USER_CODE_LENGTH = 8;

/** A fresh user code in its normalised form (no dash), each character drawn uniformly (randomInt is unbiased). */
export function generateUserCode(): string {
  let code = '';
  for (let i = 0; i < USER_CODE_LENGTH; i++) code += USER_CODE_ALPHABET[randomInt(USER_CODE_ALPHABET.length)];
  return code;
}

/** As shown to the user and sent in `user_code`: XXXX-XXXX (RFC 8628 §6.1 recommends a separator for readability). */
export function formatUserCode(code: string): string {
  return `${code.slice(0, 4)}-${code.slice(4)}`;
}

/** Longer input is no user code, whatever it holds: refused before any work. */
const MAX_INPUT = 64;

/**
 * What the user typed, as stored: upper case, without dashes and whitespace (RFC 8628 §6.1: typed
 * case-insensitively, punctuation ignored). undefined when it cannot be a user code at all; such
 * input still counts against the entry limit (the caller takes the hit first).
 */
export function normaliseUserCode(typed: string): string | undefined {
  if (typed.length > MAX_INPUT) return undefined;
  const code = typed.replace(/[\s-]/g, '').toUpperCase();
  if (code.length !== USER_CODE_LENGTH) return undefined;
  for (const char of code) if (!USER_CODE_ALPHABET.includes(char)) return undefined;
  return code;
}
