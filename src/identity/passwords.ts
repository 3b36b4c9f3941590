/**
 * Password hashing: argon2id (RFC 9106) through @node-rs/argon2, whose async calls run on the
 * libuv thread pool, off the event loop. Hashes are PHC strings, so each one carries its own
 * salt and parameters and a later change of parameters does not break stored hashes.
 */
import { hash, parseOptions, verify, type Algorithm, type Options } from '@node-rs/argon2';

/**
 * The OWASP Password Storage Cheat Sheet's minimum for argon2id: 19 MiB of memory, 2 passes,
 * 1 lane. Exported so benchmarks can report what they measured.
 */
export const ARGON2_PARAMETERS = {
  algorithm: 'argon2id',
  memoryCost: 19_456,
  timeCost: 2,
  parallelism: 1,
} as const;

// `Algorithm` is an ambient const enum, which erasable TypeScript cannot reference by member.
const ARGON2ID = 2 as Algorithm;

const OPTIONS: Options = {
  algorithm: ARGON2ID,
  memoryCost: ARGON2_PARAMETERS.memoryCost,
  timeCost: ARGON2_PARAMETERS.timeCost,
  parallelism: ARGON2_PARAMETERS.parallelism,
};

/**
 * An argon2id hash, with the parameters above, of a random password that was thrown away.
 * Verifying against it costs what verifying a real password costs.
 */
export const DUMMY_HASH = '$argon2id$v=19$m=19456,t=2,p=1$vrHxhWaMsp9jRxH6SSswtg$ohwr9mLSrppQByNUm1yr6o6LHDdeN/8gi7R0J8TugPY';

/**
 * Unicode passwords are compared in NFKC form, so the same password typed on two keyboards
 * (composed or decomposed accents, full-width digits) verifies (NIST SP 800-63B §5.1.1.2).
 */
function normalized(password: string): string {
  return password.normalize('NFKC');
}

export async function hashPassword(password: string): Promise<string> {
  return hash(normalized(password), OPTIONS);
}

/**
 * Whether `password` matches `passwordHash`. Never throws: a malformed or foreign hash is simply
 * no match. A missing hash (a user without a password) still burns one verification's time.
 */
export async function verifyPassword(passwordHash: string | undefined, password: string): Promise<boolean> {
  if (passwordHash === undefined || passwordHash === '') {
    await dummyVerify(password);
    return false;
  }
  try {
    return await verify(passwordHash, normalized(password));
  } catch {
    return false;
  }
}

/**
 * Spends the time of one verification and answers nothing. A login for an unknown username
 * calls this so that its response time does not reveal which usernames exist (OWASP
 * Authentication Cheat Sheet, "Authentication Responses").
 */
export async function dummyVerify(password: string): Promise<void> {
  try {
    await verify(DUMMY_HASH, normalized(password));
  } catch {
    // Nothing to report: the point is the time spent.
  }
}

/** True when `passwordHash` was made with other parameters than today's, so a login may rehash it. */
export function needsRehash(passwordHash: string): boolean {
  try {
    const used = parseOptions(passwordHash);
    return (
      used.algorithm !== ARGON2ID ||
      used.memoryCost !== ARGON2_PARAMETERS.memoryCost ||
      used.timeCost !== ARGON2_PARAMETERS.timeCost ||
      used.parallelism !== ARGON2_PARAMETERS.parallelism
    );
  } catch {
    return true;
  }
}
