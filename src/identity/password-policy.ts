/**
 * The password policy every way of choosing a password goes through (checkedPassword in
 * users.ts: identity API, management API and console, CLI, password reset, invitations, account
 * page), after NIST SP 800-63B-4 §3.1.1.2 ("Password Verifiers"):
 *
 * - a minimum length (GATEHOUSE_PASSWORD_MIN_LENGTH, at least 8: "SHALL require ... a minimum of
 *   eight characters"; 15 where the password is the only factor, decisions AM70) and a maximum
 *   well past the 64 characters the document asks to allow, that keeps hashing cost bounded;
 * - no composition rules ("SHALL NOT impose other composition rules");
 * - a blocklist of "values known to be commonly used, expected, or compromised"
 *   (common-passwords.txt next to this file, loaded once when the module is first imported) and
 *   the context-specific words the document names: the username and the e-mail address;
 * - lengths counted in Unicode code points, and every comparison made after NFKC normalisation
 *   ("the password SHOULD be normalized using NFKC"; passwords.ts hashes the same form),
 *   case-insensitively so that `Password1` is as refused as `password1`.
 */
import { readFileSync } from 'node:fs';
import { IdentityError } from './errors.ts';

export interface PasswordPolicy {
  /** The fewest code points a new password may have (GATEHOUSE_PASSWORD_MIN_LENGTH). */
  minLength: number;
}

/** The policy of the settings (GATEHOUSE_PASSWORD_MIN_LENGTH); the default one where they lack it (tests of other use cases). */
export function passwordPolicyOf(settings: { passwordMinLength?: number | undefined }): PasswordPolicy {
  return { minLength: settings.passwordMinLength ?? DEFAULT_PASSWORD_MIN_LENGTH };
}

/** SP 800-63B-4 §3.1.1.2's floor, and GATEHOUSE_PASSWORD_MIN_LENGTH's default (AM70). */
export const DEFAULT_PASSWORD_MIN_LENGTH = 8;
export const DEFAULT_PASSWORD_POLICY: PasswordPolicy = { minLength: DEFAULT_PASSWORD_MIN_LENGTH };
/** Well past SP 800-63B-4's "at least 64"; a bound keeps argon2id's cost predictable. */
export const MAX_PASSWORD_LENGTH = 1024;

/** Why a password was refused: each front end words it in its own language (the pages: i18n). */
export type PasswordRefusal = 'too_short' | 'too_long' | 'common' | 'context';

/** A refused password: invalid_argument on the `password` field, with the rule that refused it. */
export class PasswordRefused extends IdentityError {
  readonly reason: PasswordRefusal;
  /** The minimum length of the policy that refused it (what a `too_short` message states). */
  readonly minLength: number;
  constructor(reason: PasswordRefusal, message: string, minLength: number) {
    super('invalid_argument', message, 'password');
    this.name = 'PasswordRefused';
    this.reason = reason;
    this.minLength = minLength;
  }
}

/** The words a password must not be (§3.1.1.2: "context-specific words, such as ... the username"). */
export interface PasswordContext {
  username?: string | undefined;
  email?: string | undefined;
}

/** The comparison form: NFKC, then lower case (a password's case adds little against a list). */
function comparable(text: string): string {
  return text.normalize('NFKC').toLowerCase();
}

function loadCommonPasswords(): Set<string> {
  const text = readFileSync(new URL('./common-passwords.txt', import.meta.url), 'utf8');
  const words = new Set<string>();
  for (const line of text.split('\n')) if (line !== '' && !line.startsWith('#')) words.add(comparable(line));
  return words;
}

/** Read once, when the module is first imported (at start), never per request. */
const COMMON_PASSWORDS = loadCommonPasswords();

/** How many entries the shipped list holds (docs and tests). */
export const COMMON_PASSWORD_COUNT = COMMON_PASSWORDS.size;

/**
 * The password when it passes every rule; throws PasswordRefused (invalid_argument, field
 * `password`) naming the first rule it breaks. Returns the password as typed: hashing
 * normalises it (passwords.ts).
 */
export function checkPassword(password: unknown, context: PasswordContext = {}, policy: PasswordPolicy = DEFAULT_PASSWORD_POLICY): string {
  if (typeof password !== 'string') throw new IdentityError('invalid_argument', 'password must be a string', 'password');
  const form = comparable(password);
  const length = [...password.normalize('NFKC')].length;
  if (length < policy.minLength) throw new PasswordRefused('too_short', `password must be at least ${policy.minLength} characters`, policy.minLength);
  if (length > MAX_PASSWORD_LENGTH) throw new PasswordRefused('too_long', `password must be at most ${MAX_PASSWORD_LENGTH} characters`, policy.minLength);
  if (COMMON_PASSWORDS.has(form)) throw new PasswordRefused('common', 'password is one of the most commonly used passwords: choose another', policy.minLength);
  const words = [context.username, context.email, context.email?.split('@')[0]].filter((word): word is string => word !== undefined && word.trim() !== '');
  if (words.some((word) => comparable(word.trim()) === form)) throw new PasswordRefused('context', 'password must not be the username or the e-mail address', policy.minLength);
  return password;
}

/** The page message key of a refusal (the interaction pages' i18n; `{min}` is the policy's minimum). */
export function refusalMessageKey(reason: PasswordRefusal): 'passwordTooShort' | 'passwordTooLong' | 'passwordCommon' | 'passwordContext' {
  return ({ too_short: 'passwordTooShort', too_long: 'passwordTooLong', common: 'passwordCommon', context: 'passwordContext' } as const)[reason];
}
