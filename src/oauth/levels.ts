/**
 * Levels of authentication (issue 24, item 3): what an acr value (OIDC Core §2) requires of a
 * sign-in, reasoned on the sign-in's amr alone (RFC 8176 §2), and what a user's factors could
 * still add. The configured levels (GATEHOUSE_ACR_LEVELS, GATEHOUSE_ACR) map each acr value to one
 * of four requirements, weakest first; docs/authorization.md, "Levels of authentication".
 */
import type { Factor, FactorKind } from '../domain/factor.ts';
import { REQUIREMENTS, type AcrLevel, type Requirement } from '../protocol/acr-levels.ts';
import { amrOfFactor } from './factors/registry.ts';

export { REQUIREMENTS, type AcrLevel, type Requirement } from '../protocol/acr-levels.ts';

/** Whether a sign-in that proved `amr` meets `requirement`. */
export function meets(requirement: Requirement, amr: readonly string[]): boolean {
  switch (requirement) {
    case 'single':
      return true;
    case 'multi':
      return amr.includes('mfa');
    case 'phr':
      return amr.includes('hwk') || amr.includes('swk');
    case 'phrh':
      return amr.includes('hwk');
  }
}

/** The stronger of two requirements (undefined is no requirement). */
export function stronger(a: Requirement | undefined, b: Requirement | undefined): Requirement | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return REQUIREMENTS.indexOf(a) >= REQUIREMENTS.indexOf(b) ? a : b;
}

/** The strongest configured level `amr` meets: the `acr` a session holds when nothing more precise was asked. */
export function achievedLevel(levels: readonly AcrLevel[], amr: readonly string[]): AcrLevel | undefined {
  return levels.findLast((level) => meets(level.requirement, amr));
}

/**
 * The acr claim of an authentication (OIDC Core §2, §5.5.1.1): the first requested value the
 * authentication meets, else the strongest configured level it meets; undefined when no level is
 * configured (the claim is then left out) or, with levels configured, when none is met.
 */
export function acrClaim(levels: readonly AcrLevel[], requested: readonly string[], amr: readonly string[]): string | undefined {
  for (const value of requested) {
    const level = levels.find((l) => l.value === value);
    if (level && meets(level.requirement, amr)) return level.value;
  }
  return achievedLevel(levels, amr)?.value;
}

/**
 * Which of the user's factors, used once more, would make a sign-in that proved `amr` meet
 * `requirement`: a use adds the factor's amr values (amrOfFactor) and `mfa`. The step-up page asks
 * for these kinds only ("asks only for what is missing"); none means the level is out of reach.
 */
export function raisingKinds(requirement: Requirement, amr: readonly string[], factors: readonly Factor[]): FactorKind[] {
  const kinds = factors.filter((factor) => meets(requirement, [...amr, ...amrOfFactor(factor), 'mfa'])).map((factor) => factor.kind);
  return [...new Set(kinds)];
}
