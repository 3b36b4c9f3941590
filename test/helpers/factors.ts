/**
 * Second factors for tests: a TOTP factor stored as an enrolment leaves it (a base32 secret in the
 * clear: no GATEHOUSE_KEY_ENCRYPTION_KEY in tests), recovery codes, and the code an authenticator
 * app would show at a time, computed by `otpauth` itself (RFC 6238), not by gatehouse's code.
 */
import { randomUUID } from 'node:crypto';
import { Secret, TOTP } from 'otpauth';
import { newRecoveryCodes, recoveryCodeHash } from '../../src/oauth/factors/recovery-codes.ts';
import type { Store } from '../../src/storage/ports.ts';

/** Gives the user a TOTP factor (SHA-1, 6 digits, 30 s); its base32 secret. */
export async function enrolTotp(store: Store, userId: string, now = Date.now()): Promise<string> {
  const secret = new Secret({ size: 20 }).base32;
  await store.factors.insertTotp({
    factor: { id: randomUUID(), userId, kind: 'totp', name: 'phone', createdAt: now, lastUsedAt: undefined },
    secret: { form: 'clear', value: secret },
    algorithm: 'SHA1',
    digits: 6,
    period: 30,
    lastStep: undefined,
  });
  return secret;
}

/** Gives the user a fresh set of recovery codes; the codes as shown to the user. */
export async function giveRecoveryCodes(store: Store, userId: string, now = Date.now()): Promise<string[]> {
  const codes = newRecoveryCodes((bytes) => Buffer.from(crypto.getRandomValues(new Uint8Array(bytes))).toString('hex'));
  await store.factors.replaceRecoveryCodes({ id: randomUUID(), userId, kind: 'recovery_codes', name: 'Recovery codes', createdAt: now, lastUsedAt: undefined }, codes.map(recoveryCodeHash));
  return codes;
}

/** The code an authenticator app shows for `secret` at `at` (ms). */
export function totpAt(secret: string, at: number): string {
  return TOTP.generate({ secret: Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30, timestamp: at });
}
