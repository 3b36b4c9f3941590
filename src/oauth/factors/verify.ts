/**
 * The second step of a sign-in: a code of one of the user's second factors, after the password
 * (docs/second-factors.md). One input takes any method's code: its shape says which method it is
 * (registry.ts). Throttled as passwords are, with counters of its own (kind `second_factor`,
 * src/oauth/throttling/password-attempts.ts): the attempt is reserved per user, per address and
 * per pair BEFORE the code is checked, so concurrent guesses on any number of instances get no
 * more checks than the threshold allows; a failure counts, a success takes the reservation back
 * and forgets the user's failures. A code is accepted once on every instance (the store's
 * conditional updates, FactorStore).
 */
import type { Factor, FactorKind } from '../../domain/factor.ts';
import type { Store, StoreTransaction } from '../../storage/ports.ts';
import type { OAuthDeps } from '../deps.ts';
import { passwordAbandoned, passwordFailed, passwordSucceeded, reservePasswordAttempt } from '../throttling/password-attempts.ts';
import { methodRecognising } from './registry.ts';

/** The user's second factors, oldest first: the login step asks for a code when there is any. */
export async function factorsOf(deps: { store: Pick<Store, 'factors'> }, userId: string): Promise<Factor[]> {
  return deps.store.factors.list(userId);
}

/** A factor as its owner and administrators see it; `codesLeft`: for recovery codes, how many are unused. */
export interface FactorSummary extends Factor {
  codesLeft?: number;
}

/** The user's factors, oldest first, each set of recovery codes with how many are left: the listing of the account page, the CLI, the management API and the console. */
export async function factorSummaries(store: Pick<StoreTransaction, 'factors'>, userId: string): Promise<FactorSummary[]> {
  const factors = await store.factors.list(userId);
  return Promise.all(factors.map(async (factor) => (factor.kind === 'recovery_codes' ? { ...factor, codesLeft: await store.factors.recoveryCodesLeft(factor.id) } : factor)));
}

/** Moved to changes.ts with the other changes of factors; kept here for the callers that import it from verify.ts. */
export { removeUserFactor } from './changes.ts';

export type SecondFactorDeps = Pick<OAuthDeps, 'config' | 'store' | 'clock' | 'audit'>;

export interface SecondFactorAttempt {
  userId: string;
  /** The user's stored username: the throttle counts per user by it, as it counts passwords. */
  username: string;
  /** As typed. */
  code: string;
  /** The client address (src/http/client-address.ts). */
  ip: string;
  clientId?: string;
  /** The kinds of factor this use may be of (a step-up to `phr` asks for a passkey only); absent: any of the user's. */
  kinds?: readonly FactorKind[];
}

/**
 * `ok`: the code was valid and is now used up; `amr` is what the session's amr gets after 'pwd'
 * (RFC 8176 §2: the method's values, then 'mfa'), so a session signed in with a password and a
 * TOTP code says ['pwd', 'otp', 'mfa'] (SA4). `refused`: wrong, used, or of no factor of the user's.
 * `throttled`: not checked, or checked and wrong and this failure made the user or the address
 * wait (as a password's does); either way, try again in `retryAfter` seconds.
 */
export type SecondFactorResult = { type: 'ok'; kind: FactorKind; amr: string[] } | { type: 'refused' } | { type: 'throttled'; retryAfter: number };

/** Marks a session that a second factor completed (RFC 8176 §2: multiple-factor authentication). */
export const MFA_AMR = 'mfa';

export async function verifySecondFactor(deps: SecondFactorDeps, attempt: SecondFactorAttempt): Promise<SecondFactorResult> {
  return throttledFactorUse(deps, attempt, async () => {
    // A code of a kind the level cannot use is refused as a wrong one, unchecked (and not used up).
    const recognised = methodRecognising(attempt.code);
    const method = recognised === undefined || (attempt.kinds !== undefined && !attempt.kinds.includes(recognised.kind)) ? undefined : recognised;
    const factorId = method === undefined ? undefined : await method.verify(deps, attempt.userId, attempt.code);
    return method === undefined || factorId === undefined ? undefined : { kind: method.kind, factorId, amr: method.amr };
  });
}

/** A factor's use that `check` found right: which factor, and the amr values it adds (before `mfa`). */
export interface FactorUse {
  kind: FactorKind;
  factorId: string;
  amr: readonly string[];
}

/**
 * One use of a second factor under the throttle, whatever its method: a code (verifySecondFactor)
 * or a passkey's assertion (src/oauth/authorize/passkey-sign-in.ts). The attempt is reserved
 * before `check` runs; `check` answers the factor used, or undefined when the proof is wrong.
 */
export async function throttledFactorUse(deps: SecondFactorDeps, attempt: Omit<SecondFactorAttempt, 'code'>, check: () => Promise<FactorUse | undefined>): Promise<SecondFactorResult> {
  const { userId, username, ip, clientId } = attempt;
  const context = { userId, username, ...(clientId === undefined ? {} : { clientId }) };
  const gate = await reservePasswordAttempt(deps, { kind: 'second_factor', username, ip });
  if (!gate.open) {
    deps.audit.emit({ event: 'factor.throttled', ...context, by: gate.by, retryAfter: gate.retryAfter, ip });
    return { type: 'throttled', retryAfter: gate.retryAfter };
  }
  let use: FactorUse | undefined;
  try {
    use = await check();
  } catch (error) {
    await passwordAbandoned(deps, gate.reservation);
    throw error;
  }
  if (use === undefined) {
    const retryAfter = await passwordFailed(deps, gate.reservation, context);
    deps.audit.emit({ event: 'factor.failed', ...context, ip });
    // As for a password (verify-credentials.ts): the failure that starts the wait already says so,
    // with its Retry-After, rather than the next try (decisions SA26).
    return retryAfter > 0 ? { type: 'throttled', retryAfter } : { type: 'refused' };
  }
  await passwordSucceeded(deps, gate.reservation);
  deps.audit.emit({ event: 'factor.verified', ...context, kind: use.kind, factorId: use.factorId, ip });
  return { type: 'ok', kind: use.kind, amr: [...use.amr, MFA_AMR] };
}
