/**
 * Enrolling second factors (docs/second-factors.md). A TOTP factor is enrolled in two steps:
 * `startTotpEnrolment` makes a fresh secret and what shows it to an authenticator app (the
 * otpauth:// URI and its QR code) and stores nothing; `confirmTotpEnrolment` stores the factor
 * only once a code from the app verifies against it, so a secret the app never took is never
 * required at sign-in. The code confirmed is its factor's first accepted step: it cannot be
 * replayed at sign-in. Recovery codes are made (or made anew) in one step and shown once.
 * An administrator can also import a TOTP secret from another server (`importTotpFactor`).
 */
import type { Factor, TotpAlgorithm, TotpFactor } from '../../domain/factor.ts';
import type { Actor } from '../../observability/audit.ts';
import { MissingReferenceError, type StoreTransaction } from '../../storage/ports.ts';
import type { OAuthDeps } from '../deps.ts';
import { newRecoveryCodes, recoveryCodeHash } from './recovery-codes.ts';
import { DEFAULT_TOTP, matchingStep, newTotpSecret, otpauthUri, parseBase32Secret, qrSvg, storedSecret, totpIssuer, type TotpParameters } from './totp.ts';

/** The store only for its factors: an administrator's import runs in a unit of work (src/manage/user-factors.ts). */
export type EnrolmentDeps = Pick<OAuthDeps, 'config' | 'clock' | 'random' | 'audit'> & { store: Pick<StoreTransaction, 'factors'> };

/** A bad input to an enrolment or import: `field` names what is wrong. Front ends answer it as a clear error (400, a CLI message), never a 5xx. */
export class FactorInputError extends Error {
  readonly field: string;
  constructor(field: string, message: string) {
    super(message);
    this.name = 'FactorInputError';
    this.field = field;
  }
}

/** The user does not exist (deleted meanwhile). */
export class FactorUserMissingError extends Error {
  constructor() {
    super('the user does not exist');
    this.name = 'FactorUserMissingError';
  }
}

export interface TotpEnrolment {
  /** Base32 (RFC 4648 §6), for the app's "enter a key" and for `confirmTotpEnrolment`. The caller keeps it until then: nothing is stored. */
  secret: string;
  /** The otpauth:// URI (Key Uri Format). */
  uri: string;
  /** The URI as a QR code, SVG markup to inline in a page. */
  qrSvg: string;
}

/** What storing a TOTP factor needs: of the configuration, only the key that seals its secret. */
type StoringDeps = Pick<EnrolmentDeps, 'store' | 'clock' | 'random'> & { config: Pick<EnrolmentDeps['config'], 'keyEncryptionKey'> };

export const DEFAULT_TOTP_NAME = 'Authenticator app';
export const RECOVERY_CODES_NAME = 'Recovery codes';

/** A fresh TOTP secret for `account` (the username the app shows), its URI and QR code. Stores nothing. */
export async function startTotpEnrolment(deps: Pick<OAuthDeps, 'config'>, account: string): Promise<TotpEnrolment> {
  const secret = newTotpSecret();
  const uri = otpauthUri(totpIssuer(deps.config), account, secret);
  return { secret, uri, qrSvg: await qrSvg(uri) };
}

export type ConfirmResult = { type: 'enrolled'; factor: Factor } | { type: 'wrong_code' };

/**
 * Stores the TOTP factor of `secret` for the user if `code` is its code now (within the drift
 * window); otherwise stores nothing. Not throttled: the secret is the caller's own, fresh one,
 * so a guess there gains nothing. `actor`: an administrator acting for the user; absent, the user.
 */
export async function confirmTotpEnrolment(
  deps: EnrolmentDeps,
  userId: string,
  input: { secret: string; code: string; name?: string | undefined },
  actor?: Actor,
): Promise<ConfirmResult> {
  const secret = parseBase32Secret(input.secret);
  if (secret === undefined) throw new FactorInputError('secret', 'the secret is not a base32 TOTP secret of at least 80 bits');
  const name = validFactorName(input.name ?? DEFAULT_TOTP_NAME);
  const now = deps.clock.now();
  const step = matchingStep(DEFAULT_TOTP, secret, input.code.replace(/[\s-]/g, ''), now);
  if (step === undefined) return { type: 'wrong_code' };
  const factor = await storeTotp(deps, userId, secret, DEFAULT_TOTP, name, step);
  deps.audit.emit({ event: 'factor.enrolled', userId, kind: 'totp', factorId: factor.id, name, ...(actor === undefined ? {} : { actor }) });
  return { type: 'enrolled', factor };
}

export interface TotpImport {
  /** Base32, as the other server exported it (spaces and padding allowed). */
  secret: string;
  name?: string | undefined;
  digits?: number | undefined;
  period?: number | undefined;
  algorithm?: string | undefined;
}

/**
 * Stores a TOTP factor whose secret comes from another server (migrating users without making
 * them enrol again). Checked, not trusted: base32 of at least 80 bits, 6–8 digits, a period of
 * 10–120 seconds, SHA1/SHA256/SHA512. The caller (src/manage) emits the audit event.
 */
export async function importTotpFactor(deps: StoringDeps, userId: string, input: TotpImport): Promise<Factor> {
  const secret = parseBase32Secret(input.secret);
  if (secret === undefined) throw new FactorInputError('secret', 'the secret is not base32 (RFC 4648) of at least 16 characters (80 bits)');
  const digits = input.digits ?? DEFAULT_TOTP.digits;
  if (!Number.isInteger(digits) || digits < 6 || digits > 8) throw new FactorInputError('digits', 'digits must be 6, 7 or 8');
  const period = input.period ?? DEFAULT_TOTP.period;
  if (!Number.isInteger(period) || period < 10 || period > 120) throw new FactorInputError('period', 'the period must be a whole number of seconds from 10 to 120');
  const algorithm = (input.algorithm ?? DEFAULT_TOTP.algorithm).toUpperCase().replace('-', '');
  if (!isAlgorithm(algorithm)) throw new FactorInputError('algorithm', 'the algorithm must be SHA1, SHA256 or SHA512');
  return storeTotp(deps, userId, secret, { algorithm, digits, period }, validFactorName(input.name ?? DEFAULT_TOTP_NAME), undefined);
}

/**
 * A new set of recovery codes for the user, replacing any earlier set in one unit of work
 * (FactorStore.replaceRecoveryCodes): the old codes stop working when the new ones exist. The
 * codes are returned once, here; the store keeps their SHA-256 only.
 */
export async function regenerateRecoveryCodes(deps: Pick<EnrolmentDeps, 'store' | 'clock' | 'random' | 'audit'>, userId: string, actor?: Actor): Promise<{ factor: Factor; codes: string[] }> {
  const codes = newRecoveryCodes((bytes) => deps.random.hex(bytes));
  const factor: Factor = { id: deps.random.uuid(), userId, kind: 'recovery_codes', name: RECOVERY_CODES_NAME, createdAt: deps.clock.now(), lastUsedAt: undefined };
  await missingUser(() => deps.store.factors.replaceRecoveryCodes(factor, codes.map(recoveryCodeHash)));
  deps.audit.emit({ event: 'factor.enrolled', userId, kind: 'recovery_codes', factorId: factor.id, name: factor.name, ...(actor === undefined ? {} : { actor }) });
  return { factor, codes };
}

async function storeTotp(deps: StoringDeps, userId: string, secret: string, parameters: TotpParameters, name: string, lastStep: number | undefined): Promise<Factor> {
  const factor: Factor = { id: deps.random.uuid(), userId, kind: 'totp', name, createdAt: deps.clock.now(), lastUsedAt: undefined };
  const totp: TotpFactor = { factor, secret: storedSecret(secret, deps.config.keyEncryptionKey), ...parameters, lastStep };
  await missingUser(() => deps.store.factors.insertTotp(totp));
  return factor;
}

async function missingUser<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof MissingReferenceError) throw new FactorUserMissingError();
    throw error;
  }
}

/** The longest name a factor may have (characters): what a list shows on one line. */
export const MAX_FACTOR_NAME = 64;

/**
 * The name of a factor as every front end accepts it (decisions SA101): trimmed, 1 to
 * MAX_FACTOR_NAME characters, no control characters (C0, DEL, C1: they would break a terminal's
 * table or a log line). FactorInputError `name` otherwise.
 */
export function validFactorName(name: string): string {
  const trimmed = name.trim();
  // eslint-disable-next-line no-control-regex
  if (trimmed === '' || [...trimmed].length > MAX_FACTOR_NAME || /[\u0000-\u001f\u007f-\u009f]/.test(trimmed)) {
    throw new FactorInputError('name', `the name must be 1 to ${MAX_FACTOR_NAME} characters, without control characters`);
  }
  return trimmed;
}

function isAlgorithm(value: string): value is TotpAlgorithm {
  return value === 'SHA1' || value === 'SHA256' || value === 'SHA512';
}
