import type { Factor, FactorKind } from '../../domain/factor.ts';
import type { OAuthDeps } from '../deps.ts';

/** What a method verifies codes with: the store, the time, and the key that opens sealed secrets. */
export type FactorMethodDeps = Pick<OAuthDeps, 'config' | 'store' | 'clock'>;

/**
 * A second-factor method whose use is a code typed into the one field of the second factor's
 * page (TOTP, recovery codes): its kind, the amr values (RFC 8176 §2) a code of it adds to the
 * session, the shape its codes have (so one input field takes any method's code), and its check.
 * `verify` accepts each code once, on every instance (the store's conditional updates).
 */
export interface CodeMethod {
  style: 'code';
  kind: FactorKind;
  amr: readonly string[];
  /** Whether `code`, as typed, looks like one of this method's codes (checked before any store read). */
  recognises(code: string): boolean;
  /** Whether `code` is a valid, unused code of one of the user's factors of this kind; when it is, it is used up and its factor's id returned. */
  verify(deps: FactorMethodDeps, userId: string, code: string): Promise<string | undefined>;
}

/**
 * A method whose use is a ceremony between the browser and an authenticator (WebAuthn): no code
 * to type, so it has routes and use cases of its own (src/oauth/authorize/passkey-sign-in.ts);
 * here it declares what a use of one of its factors adds to the amr, which may differ by factor
 * (a passkey: `hwk` or `swk`).
 */
export interface CeremonyMethod {
  style: 'ceremony';
  kind: FactorKind;
  amrOf(factor: Factor): readonly string[];
}

/** A second-factor method (registry.ts). */
export type FactorMethod = CodeMethod | CeremonyMethod;
