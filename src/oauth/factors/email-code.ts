/**
 * E-mail one-time codes (issue 25 item 5; docs/second-factors.md, "E-mail codes"; decisions
 * AM90–AM99): a second factor whose codes are mailed to an address the user proved they read,
 * and the generic "send a code, check a code" that a verification by code uses where a link does
 * not suit (`sendEmailCode`, `checkEmailCode`, purpose `verify_email`).
 *
 * - A code is 8 letters of Crockford's alphabet without I, L, O, U (22^8 ≈ 2^35.7), shown as
 *   ABCD-EFGH: letters only, so its shape overlaps neither TOTP's digits nor the 16-character
 *   recovery codes (test/oauth/factors.test.ts), and the one code field takes it (AM92).
 * - The store keeps an HMAC-SHA-256 of it, keyed by GATEHOUSE_KEY_ENCRYPTION_KEY when set and
 *   bound to the user and the purpose (AM93); a code is taken once by one conditional DELETE
 *   (EmailCodeStore.take) and lives GATEHOUSE_EMAIL_CODE_LIFETIME (10 minutes by default).
 * - Sends are budgeted per hour per user and per address (GATEHOUSE_EMAIL_CODES_PER_HOUR, AM94):
 *   no page can be used to flood a mailbox. Each mail is written with its code in one unit of
 *   work through the outbox (docs/mail.md) and handed to the sender at once.
 * - Checks are throttled like every second factor's: a sign-in's code goes through
 *   verifySecondFactor (the method below); an enrolment's or a verification's through the same
 *   per-user and per-address counters (kind `second_factor`), so a guesser gains nothing by
 *   switching purpose (AM95).
 * - amr: `otp` (RFC 8176 §2, one-time password), then `mfa` after a password: an e-mail code
 *   meets the `multi` level, never `phr` or `phrh` (AM90).
 */
import { createHmac } from 'node:crypto';
import type { EmailCode, EmailCodePurpose, Factor } from '../../domain/factor.ts';
import type { UserProfile } from '../../domain/user.ts';
import { ConflictError, MissingReferenceError } from '../../storage/ports.ts';
import type { OAuthDeps } from '../deps.ts';
import { mailMessage, type MailKind, type MailLocale } from '../outbox/mail.ts';
import { counterKey } from '../throttling/keys.ts';
import { passwordAbandoned, passwordFailed, passwordSucceeded, reservePasswordAttempt } from '../throttling/password-attempts.ts';
import { FactorUserMissingError, validFactorName } from './enrolment.ts';
import type { CodeMethod } from './method.ts';

/** Crockford's base32 letters (no I, L, O, U: they read as 1, 1, 0, V). */
const ALPHABET = 'ABCDEFGHJKMNPQRSTVWXYZ';
export const EMAIL_CODE_LENGTH = 8;
/** The budgets' fixed window: one hour. */
const WINDOW_SECONDS = 3600;

export const DEFAULT_EMAIL_FACTOR_NAME = 'E-mail codes';

export const emailCodeMethod = {
  style: 'code' as const,
  kind: 'email_otp' as const,
  // RFC 8176 §2 registers no value for e-mail; `otp` ("one-time password") is what the code is (AM90).
  amr: ['otp'],
  recognises: (code) => normalizeEmailCode(code) !== undefined,
  async verify(deps, userId, code) {
    const normalized = normalizeEmailCode(code);
    if (normalized === undefined) return undefined;
    const now = deps.clock.now();
    const taken = await deps.store.emailCodes.take(userId, 'sign_in', emailCodeHash(deps.config, userId, 'sign_in', normalized), now);
    if (taken?.factorId === undefined) return undefined;
    await deps.store.factors.touch(taken.factorId, now);
    return taken.factorId;
  },
} satisfies CodeMethod;

/** The code in the one form hashed (8 capitals of the alphabet), or undefined when it has not an e-mail code's shape. Case, spaces and hyphens are forgiven. */
export function normalizeEmailCode(code: string): string | undefined {
  const text = code.toUpperCase().replace(/[\s-]/g, '');
  if (text.length !== EMAIL_CODE_LENGTH) return undefined;
  for (const c of text) if (!ALPHABET.includes(c)) return undefined;
  return text;
}

/** A fresh code, ABCD-EFGH, uniformly from `randomHex` (rejection sampling: 242 = 11 × 22, so no letter is likelier). */
export function newEmailCode(randomHex: (bytes: number) => string): string {
  let code = '';
  while (code.length < EMAIL_CODE_LENGTH) {
    for (const byte of Buffer.from(randomHex(16), 'hex')) {
      if (byte < 242 && code.length < EMAIL_CODE_LENGTH) code += ALPHABET[byte % ALPHABET.length];
    }
  }
  return `${code.slice(0, 4)}-${code.slice(4)}`;
}

/**
 * What the store keeps of a code (AM93): HMAC-SHA-256 over the purpose, the user and the code.
 * Keyed by GATEHOUSE_KEY_ENCRYPTION_KEY when set, so a copy of the database alone cannot try the
 * 2^36 codes offline; without it, the key is a fixed label and only the short lifetime and the
 * single use protect a code read from the database.
 */
export function emailCodeHash(config: Pick<OAuthDeps['config'], 'keyEncryptionKey'>, userId: string, purpose: EmailCodePurpose, normalized: string): string {
  return createHmac('sha256', config.keyEncryptionKey ?? 'gatehouse e-mail code')
    .update(`${purpose}\n${userId}\n${normalized}`)
    .digest('base64url');
}

/** The address as pages show it before it is proved to the reader: the first character of the local part, then `***@` and the domain (j***@example.com). */
export function maskAddress(address: string): string {
  const at = address.lastIndexOf('@');
  if (at <= 0) return '***';
  return `${[...address.slice(0, at)][0]}***${address.slice(at)}`;
}

export type EmailCodeDeps = Pick<OAuthDeps, 'config' | 'store' | 'clock' | 'random' | 'audit' | 'mail'>;

export interface EmailCodeRequest {
  user: Pick<UserProfile, 'id' | 'username'>;
  purpose: EmailCodePurpose;
  address: string;
  /** A sign-in's code: the e-mail factor it is for. */
  factorId?: string | undefined;
  locale: MailLocale;
  ip?: string | undefined;
}

/** `sent`: queued (and handed to the sender); `throttled`: the user's or the address's hourly budget is spent, nothing sent; `off`: mail is not configured. */
export type EmailCodeSent = { type: 'sent'; messageId: string; masked: string } | { type: 'throttled'; retryAfter: number } | { type: 'off' };

const MAIL_KIND: Record<EmailCodePurpose, MailKind> = { sign_in: 'email_code_sign_in', enrol: 'email_code_enrol', verify_email: 'email_code_verify_email' };

/**
 * Sends a fresh code of `purpose` to `address`: the hourly budgets of the user and of the address
 * taken first (one atomic conditional upsert, RateLimitStore.take), then the code's row and its
 * mail's outbox row in one unit of work, then the mail handed to the sender (a failure there is
 * the outbox's to retry). Earlier codes stay valid until they expire: mail can be slow, and the
 * budget bounds how many are outstanding.
 */
export async function sendEmailCode(deps: EmailCodeDeps, request: EmailCodeRequest): Promise<EmailCodeSent> {
  const { user, purpose, address, ip } = request;
  const mail = deps.mail;
  if (mail === undefined) {
    deps.audit.emit({ event: 'email_code.refused', userId: user.id, purpose, reason: 'off', ip });
    return { type: 'off' };
  }
  const now = deps.clock.now();
  const limit = deps.config.emailCodesPerHour;
  const budgets = [
    { key: counterKey('email-code-user', user.id), limit },
    { key: counterKey('email-code-address', address.toLowerCase()), limit },
  ];
  const counted = await deps.store.rateLimits.take(budgets, now, now + WINDOW_SECONDS * 1000);
  if (counted.length < budgets.length) {
    deps.audit.emit({ event: 'email_code.refused', userId: user.id, purpose, reason: 'throttled', ip });
    return { type: 'throttled', retryAfter: WINDOW_SECONDS };
  }
  const code = newEmailCode((bytes) => deps.random.hex(bytes));
  const lifetime = deps.config.emailCodeLifetime;
  const id = deps.random.uuid();
  const rendered = mail.composer.compose(MAIL_KIND[purpose], request.locale, { issuer: deps.config.issuer, username: user.username, code, minutes: String(Math.round(lifetime / 60)) });
  const message = mailMessage({ id, kind: MAIL_KIND[purpose], to: address, locale: request.locale, mail: rendered, dedupeKey: `mail.email_code:${id}`, now });
  const row: EmailCode = {
    id,
    userId: user.id,
    factorId: request.factorId,
    purpose,
    address,
    codeHash: emailCodeHash(deps.config, user.id, purpose, normalizeEmailCode(code)!),
    createdAt: now,
    expiresAt: now + lifetime * 1000,
  };
  try {
    await deps.store.transaction(async (tx) => {
      await tx.emailCodes.insert(row);
      await tx.outbox.enqueue(message);
    });
  } catch (error) {
    // The user or the factor was deleted meanwhile: nothing to send to.
    if (error instanceof MissingReferenceError) throw new FactorUserMissingError();
    throw error;
  }
  deps.audit.emit({ event: 'email_code.sent', userId: user.id, purpose, messageId: id, ...(request.factorId === undefined ? {} : { factorId: request.factorId }), ip });
  // The code is wanted now, not at the sender's next tick; should this fail, the outbox retries it.
  await mail.deliverNow(id).catch(() => undefined);
  return { type: 'sent', messageId: id, masked: maskAddress(address) };
}

/** `ok`: the code was right and is used up; `refused`: wrong, used or expired; `throttled`: not checked (as a second factor's code). */
export type EmailCodeCheck<T> = { type: 'ok'; value: T } | { type: 'refused' } | { type: 'throttled'; retryAfter: number };

/**
 * A code check under the second factor's throttle (AM95): the attempt reserved per user and per
 * address before `take` runs; `take` answers what the right code gave, or undefined when wrong.
 */
async function throttledCheck<T>(deps: EmailCodeDeps, user: Pick<UserProfile, 'id' | 'username'>, purpose: EmailCodePurpose, ip: string | undefined, take: () => Promise<T | undefined>): Promise<EmailCodeCheck<T>> {
  const gate = await reservePasswordAttempt(deps, { kind: 'second_factor', username: user.username, ip });
  if (!gate.open) return { type: 'throttled', retryAfter: gate.retryAfter };
  let value: T | undefined;
  try {
    value = await take();
  } catch (error) {
    await passwordAbandoned(deps, gate.reservation);
    throw error;
  }
  if (value === undefined) {
    const retryAfter = await passwordFailed(deps, gate.reservation, { userId: user.id, username: user.username });
    deps.audit.emit({ event: 'email_code.failed', userId: user.id, purpose, ip });
    return retryAfter > 0 ? { type: 'throttled', retryAfter } : { type: 'refused' };
  }
  await passwordSucceeded(deps, gate.reservation);
  return { type: 'ok', value };
}

/**
 * Checks a code of `purpose` sent to the user (by `sendEmailCode`), throttled; `ok` with the code's
 * row (the address it went to: what a verification marks verified). For a verification where a
 * link does not suit; a sign-in's code is checked by the method above, through verifySecondFactor.
 */
export async function checkEmailCode(deps: EmailCodeDeps, input: { user: Pick<UserProfile, 'id' | 'username'>; purpose: Exclude<EmailCodePurpose, 'sign_in'>; code: string; ip?: string | undefined }): Promise<EmailCodeCheck<EmailCode>> {
  const { user, purpose, ip } = input;
  const result = await throttledCheck(deps, user, purpose, ip, async () => {
    const normalized = normalizeEmailCode(input.code);
    if (normalized === undefined) return undefined;
    return deps.store.emailCodes.take(user.id, purpose, emailCodeHash(deps.config, user.id, purpose, normalized), deps.clock.now());
  });
  if (result.type === 'ok') deps.audit.emit({ event: 'email_code.used', userId: user.id, purpose, ip });
  return result;
}

/** The user's e-mail factor (at most one: AM91), if any. */
export async function emailFactorOf(deps: Pick<OAuthDeps, 'store'>, userId: string): Promise<Factor | undefined> {
  return (await deps.store.factors.list(userId)).find((factor) => factor.kind === 'email_otp');
}

/** Why an enrolment cannot start: no address on the profile, one e-mail factor already, or mail not configured. */
export type EmailEnrolmentStart = EmailCodeSent | { type: 'no_email' } | { type: 'enrolled' };

/**
 * Starts an e-mail factor's enrolment (AM91): a code of purpose `enrol` to the address of the
 * user's profile now. The factor is stored only when that code comes back (`confirmEmailEnrolment`),
 * which proves the user reads that mailbox.
 */
export async function startEmailEnrolment(deps: EmailCodeDeps, user: UserProfile, options: { locale: MailLocale; ip?: string | undefined }): Promise<EmailEnrolmentStart> {
  if (deps.mail === undefined) return { type: 'off' };
  if (user.email === undefined) return { type: 'no_email' };
  if ((await emailFactorOf(deps, user.id)) !== undefined) return { type: 'enrolled' };
  return sendEmailCode(deps, { user, purpose: 'enrol', address: user.email, locale: options.locale, ip: options.ip });
}

export type EmailEnrolmentConfirm = { type: 'enrolled'; factor: Factor } | { type: 'refused' } | { type: 'throttled'; retryAfter: number } | { type: 'already' };

/**
 * Confirms an enrolment with the code that was mailed: in ONE unit of work the code is taken
 * (one conditional DELETE) and the factor stored with the address the code went to. Concurrent
 * confirmations store one factor: of one code, only one take wins; of two codes, the second
 * insert meets the one-e-mail-factor-per-user index and its unit of work rolls back (`already`).
 */
export async function confirmEmailEnrolment(deps: EmailCodeDeps, user: Pick<UserProfile, 'id' | 'username'>, input: { code: string; name?: string | undefined; ip?: string | undefined }): Promise<EmailEnrolmentConfirm> {
  const name = validFactorName(input.name ?? DEFAULT_EMAIL_FACTOR_NAME);
  let already = false;
  const result = await throttledCheck(deps, user, 'enrol', input.ip, async () => {
    const normalized = normalizeEmailCode(input.code);
    if (normalized === undefined) return undefined;
    try {
      return await deps.store.transaction(async (tx) => {
        const now = deps.clock.now();
        const taken = await tx.emailCodes.take(user.id, 'enrol', emailCodeHash(deps.config, user.id, 'enrol', normalized), now);
        if (taken === undefined) return undefined;
        const factor: Factor = { id: deps.random.uuid(), userId: user.id, kind: 'email_otp', name, createdAt: now, lastUsedAt: undefined, email: taken.address };
        await tx.factors.insertEmailFactor(factor);
        await tx.emailCodes.deleteOfUser(user.id, 'enrol');
        return factor;
      });
    } catch (error) {
      if (error instanceof MissingReferenceError) throw new FactorUserMissingError();
      if (!(error instanceof ConflictError)) throw error;
      // Right code, but an e-mail factor was stored meanwhile (a concurrent confirmation): not a guess.
      already = true;
      return null;
    }
  });
  if (result.type !== 'ok') return result;
  if (already || result.value === null) return { type: 'already' };
  const factor = result.value;
  deps.audit.emit({ event: 'email_code.used', userId: user.id, purpose: 'enrol', factorId: factor.id, ip: input.ip });
  deps.audit.emit({ event: 'factor.enrolled', userId: user.id, kind: 'email_otp', factorId: factor.id, name: factor.name, ...(input.ip === undefined ? {} : { ip: input.ip }) });
  return { type: 'enrolled', factor };
}

/**
 * Sends a sign-in code for a user's e-mail factor (the second factor's page, "Send a code by
 * e-mail"): `none` when the user has no e-mail factor (or it may not serve this sign-in).
 */
export async function sendSignInCode(deps: EmailCodeDeps, user: Pick<UserProfile, 'id' | 'username'>, options: { locale: MailLocale; ip?: string | undefined }): Promise<EmailCodeSent | { type: 'none' }> {
  const factor = await emailFactorOf(deps, user.id);
  if (factor?.email === undefined) return { type: 'none' };
  return sendEmailCode(deps, { user, purpose: 'sign_in', address: factor.email, factorId: factor.id, locale: options.locale, ip: options.ip });
}
