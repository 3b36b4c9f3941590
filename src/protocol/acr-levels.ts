/**
 * The levels of authentication as configured (GATEHOUSE_ACR_LEVELS, GATEHOUSE_ACR): their
 * requirements and the parsing of the setting. What a requirement asks of a sign-in is
 * src/oauth/levels.ts; docs/authorization.md, "Levels of authentication".
 */

/**
 * The requirements, weakest first; each implies the ones before it (a passkey is always used with
 * user verification, so every `hwk`/`swk` sign-in also says `mfa`: the passkeys' contract).
 * `phr` and `phrh` are the names of OpenID EAP ACR Values 1.0 §2: phishing-resistant, and
 * phishing-resistant with a hardware-bound key.
 */
export const REQUIREMENTS = ['single', 'multi', 'phr', 'phrh'] as const;
export type Requirement = (typeof REQUIREMENTS)[number];

/** One configured level: the acr value on the wire and what a sign-in needs to be given it. */
export interface AcrLevel {
  value: string;
  requirement: Requirement;
}

/**
 * GATEHOUSE_ACR_LEVELS: a list of `value=requirement` entries, weakest first; `phr` and `phrh`
 * alone mean themselves (OpenID EAP ACR Values 1.0). Throws an Error saying what is wrong.
 */
export function parseAcrLevels(entries: readonly string[]): AcrLevel[] {
  const levels = entries.map((entry): AcrLevel => {
    const at = entry.lastIndexOf('=');
    const value = at < 0 ? entry : entry.slice(0, at).trim();
    const requirement = at < 0 ? (entry === 'phr' || entry === 'phrh' ? entry : undefined) : entry.slice(at + 1).trim();
    if (requirement === undefined) throw new Error(`"${entry}" names no requirement: write value=requirement, the requirement one of ${REQUIREMENTS.join(', ')} (only phr and phrh stand alone)`);
    if (value === '' || /\s/.test(value)) throw new Error(`"${entry}": the acr value must be non-empty and hold no spaces (acr_values is a space-separated list)`);
    if (!(REQUIREMENTS as readonly string[]).includes(requirement)) throw new Error(`"${entry}": "${requirement}" is not a requirement; use one of ${REQUIREMENTS.join(', ')}`);
    return { value, requirement: requirement as Requirement };
  });
  return checkedLevels(levels);
}

/**
 * The levels of GATEHOUSE_ACR_LEVELS with GATEHOUSE_ACR, which names the level of a single-method
 * sign-in: put first as `single` when the list does not name it, and it must be `single` when it does.
 */
export function configuredLevels(acr: string | undefined, listed: readonly AcrLevel[] | undefined): AcrLevel[] {
  const levels = [...(listed ?? [])];
  if (acr === undefined) return levels;
  const named = levels.find((level) => level.value === acr);
  if (named !== undefined && named.requirement !== 'single') throw new Error(`GATEHOUSE_ACR names "${acr}", which GATEHOUSE_ACR_LEVELS maps to ${named.requirement}; GATEHOUSE_ACR is the level of a single-method sign-in`);
  return named === undefined ? checkedLevels([{ value: acr, requirement: 'single' }, ...levels]) : levels;
}

function checkedLevels(levels: AcrLevel[]): AcrLevel[] {
  levels.forEach((level, i) => {
    if (levels.findIndex((l) => l.value === level.value) !== i) throw new Error(`"${level.value}" is listed twice`);
    const previous = levels[i - 1];
    if (previous !== undefined && REQUIREMENTS.indexOf(previous.requirement) >= REQUIREMENTS.indexOf(level.requirement)) {
      throw new Error(`"${level.value}" (${level.requirement}) comes after "${previous.value}" (${previous.requirement}): list the levels weakest first, one per requirement (${REQUIREMENTS.join(' < ')})`);
    }
  });
  return levels;
}
