import type { Factor, FactorKind } from '../../domain/factor.ts';
import { emailCodeMethod } from './email-code.ts';
import type { CodeMethod, FactorMethod } from './method.ts';
import { passkeyMethod } from './passkey.ts';
import { recoveryCodesMethod } from './recovery-codes.ts';
import { totpMethod } from './totp.ts';

/**
 * The second-factor methods gatehouse implements. Adding one is a file exporting a `FactorMethod`
 * plus its entry here; the code methods' shapes must not overlap (test/oauth/factors.test.ts).
 */
export const FACTOR_METHODS = [totpMethod, recoveryCodesMethod, passkeyMethod, emailCodeMethod] as const satisfies readonly FactorMethod[];

// Every FactorKind the domain can store has a method here.
type Implemented = (typeof FACTOR_METHODS)[number]['kind'];
const _everyKindImplemented: [Exclude<FactorKind, Implemented>] extends [never] ? true : never = true;

/** The methods whose use is a code typed on the second factor's page. */
export const CODE_METHODS: readonly CodeMethod[] = (FACTOR_METHODS as readonly FactorMethod[]).filter((method): method is CodeMethod => method.style === 'code');

/** The code method whose codes look like `code`, if any. */
export function methodRecognising(code: string): CodeMethod | undefined {
  return CODE_METHODS.find((method) => method.recognises(code));
}

/**
 * The amr values (RFC 8176 §2) a use of `factor` adds to a sign-in, before `mfa`: what the levels
 * of authentication (acr) reason with when they ask whether a user could reach one. A method whose
 * values depend on the factor (a passkey: `hwk` or `swk`) answers for each factor; the others
 * declare theirs once.
 */
export function amrOfFactor(factor: Factor): readonly string[] {
  const method: FactorMethod | undefined = FACTOR_METHODS.find((m: FactorMethod) => m.kind === factor.kind);
  if (method === undefined) return [];
  return method.style === 'code' ? method.amr : method.amrOf(factor);
}
