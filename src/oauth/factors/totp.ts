/**
 * TOTP (RFC 6238) factors, computed by the `otpauth` package: HMAC-SHA-1, 6 digits and 30-second
 * steps by default (RFC 6238 §4); imported factors may carry SHA-256/512, 7–8 digits or another
 * period. A code is checked against the current step and at most one step each side (RFC 6238
 * §5.2 allows a drift window; one step is the usual 30 seconds of clock skew or typing time),
 * and each step is accepted once (FactorStore.useTotpStep, one conditional UPDATE).
 */
import { Secret, TOTP, URI } from 'otpauth';
import QRCode from 'qrcode';
import type { StoredSecret, TotpAlgorithm } from '../../domain/factor.ts';
import { openTotpSecret, sealTotpSecret } from '../../crypto/key-encryption.ts';
import type { CodeMethod, FactorMethodDeps } from './method.ts';

/** Steps accepted on either side of the current one (RFC 6238 §5.2). */
export const DRIFT_STEPS = 1;

export const DEFAULT_TOTP = { algorithm: 'SHA1', digits: 6, period: 30 } as const satisfies TotpParameters;

export interface TotpParameters {
  algorithm: TotpAlgorithm;
  digits: number;
  period: number;
}

/** 160 bits: the HMAC-SHA-1 output length, what RFC 4226 §4 R6 recommends for the shared secret. */
const SECRET_BYTES = 20;

export const totpMethod = {
  style: 'code' as const,
  kind: 'totp' as const,
  // RFC 8176 §2: "otp", one-time password.
  amr: ['otp'],
  recognises: (code) => /^[0-9]{6,8}$/.test(compact(code)),
  async verify(deps, userId, code) {
    const token = compact(code);
    const now = deps.clock.now();
    for (const totp of await deps.store.factors.totpFactors(userId)) {
      if (totp.digits !== token.length) continue;
      const step = matchingStep(totp, openSecret(deps, totp.secret), token, now);
      if (step === undefined) continue;
      // The first factor the code is valid for decides: a replay of an accepted step is refused
      // here, atomically, on every instance, and is not tried on the user's other factors (two
      // factors of one secret, enrolled twice, would otherwise take the same code twice).
      return (await deps.store.factors.useTotpStep(totp.factor.id, step, now)) ? totp.factor.id : undefined;
    }
    return undefined;
  },
} satisfies CodeMethod;

/** Digits as typed, spaces and a middle separator allowed ("123 456"). */
function compact(code: string): string {
  return code.replace(/[\s-]/g, '');
}

/** The time step (RFC 6238 §4.2, T) whose code `token` is, within the drift window at `now` (ms); undefined: none. */
export function matchingStep(parameters: TotpParameters, base32Secret: string, token: string, now: number): number | undefined {
  const { algorithm, digits, period } = parameters;
  const delta = TOTP.validate({ token, secret: Secret.fromBase32(base32Secret), algorithm, digits, period, timestamp: now, window: DRIFT_STEPS });
  return delta === null ? undefined : TOTP.counter({ period, timestamp: now }) + delta;
}

/** The code of step at `now` (ms): for tests and for checking an import. */
export function totpCode(parameters: TotpParameters, base32Secret: string, now: number): string {
  const { algorithm, digits, period } = parameters;
  return TOTP.generate({ secret: Secret.fromBase32(base32Secret), algorithm, digits, period, timestamp: now });
}

/** A fresh random secret, base32 (RFC 4648 §6) as authenticator apps take it. */
export function newTotpSecret(): string {
  return new Secret({ size: SECRET_BYTES }).base32;
}

/** Whether `value` is a usable base32 secret (at least 80 bits, RFC 4226 §4 R6's minimum); spaces and padding allowed. Returns it normalised. */
export function parseBase32Secret(value: string): string | undefined {
  const text = value.replace(/[\s=]/g, '').toUpperCase();
  if (!/^[A-Z2-7]+$/.test(text) || text.length < 16) return undefined;
  return text;
}

/** The secret as stored: sealed when GATEHOUSE_KEY_ENCRYPTION_KEY is set (SA3), otherwise in the clear. */
export function storedSecret(base32Secret: string, keyEncryptionKey: string | undefined): StoredSecret {
  return keyEncryptionKey === undefined ? { form: 'clear', value: base32Secret } : { form: 'sealed', value: sealTotpSecret(base32Secret, keyEncryptionKey) };
}

/** The TOTP secret sealed or stored by `storedSecret`. A sealed secret with no key set cannot be opened: the server is misconfigured, and says so. */
function openSecret(deps: FactorMethodDeps, secret: StoredSecret): string {
  if (secret.form === 'clear') return secret.value;
  const key = deps.config.keyEncryptionKey;
  if (key === undefined) throw new Error('a TOTP secret is sealed but GATEHOUSE_KEY_ENCRYPTION_KEY is not set: set it to the key the secrets were sealed with');
  return openTotpSecret(secret.value, key);
}

/** The issuer an authenticator app shows: GATEHOUSE_TOTP_ISSUER, else the issuer URL's host. */
export function totpIssuer(config: { issuer: string; totpIssuer?: string | undefined }): string {
  return config.totpIssuer ?? new URL(config.issuer).host;
}

/**
 * The otpauth:// URI of the Key Uri Format (github.com/google/google-authenticator/wiki/Key-Uri-Format):
 * label `issuer:account`, and the secret, issuer, algorithm, digits and period as parameters.
 */
export function otpauthUri(issuer: string, account: string, base32Secret: string, parameters: TotpParameters = DEFAULT_TOTP): string {
  return URI.stringify(new TOTP({ issuer, label: account, secret: Secret.fromBase32(base32Secret), ...parameters }));
}

/** The URI as a QR code in SVG markup: drawn on the server, no script or external image, so the strict CSP holds. */
export function qrSvg(uri: string): Promise<string> {
  return QRCode.toString(uri, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 });
}

