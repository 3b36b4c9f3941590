/**
 * The level of authentication an authorization request selects (issue 24, item 3;
 * docs/authorization.md, "Levels of authentication"), from, in this order:
 *
 * - the `claims` parameter's `acr` member of `id_token` or `userinfo` (OIDC Core §5.5.1.1):
 *   essential or voluntary, with `value` or `values`;
 * - `acr_values` (OIDC Core §3.1.2.1): voluntary, in order of preference;
 * - when the request asks neither, the client's `default_acr_values` (OIDC Registration §2:
 *   voluntary, overridden by the request);
 * - the client's authorization policy's `minimum_authentication`: always essential.
 *
 * Values that are not configured are ignored (a request is never refused for its acr_values,
 * §15.1), except that an essential `acr` naming only such values can never be met.
 */
import type { Client } from '../../domain/client.ts';
import { InvalidRequest } from '../errors.ts';
import { stronger, type AcrLevel, type Requirement, REQUIREMENTS } from '../levels.ts';

/** What a request asks of the authentication that answers it. */
export interface LevelDemand {
  /** The acr values asked for, in order of preference (essential ones first): the acr claim is the first of them met (levels.ts acrClaim). */
  requested: readonly string[];
  /** What the sign-in must meet before a code is issued (the policy's, an essential acr claim's); undefined: nothing. */
  essential: Requirement | undefined;
  /** An essential acr named only values that are not configured: no sign-in can meet it. */
  unmeetable: boolean;
  /** Voluntary requirements, in order of preference: asked for when the user can reach them. */
  preferred: readonly Requirement[];
}

export const NO_DEMAND: LevelDemand = { requested: [], essential: undefined, unmeetable: false, preferred: [] };

interface ClaimRequest {
  essential: boolean;
  values: string[];
}

/**
 * The request's demand. `claims` and `acrValues` are the parameters as sent; `policy` the client's
 * policy's minimum_authentication. Throws invalid_request only for a `claims` value that is not a
 * JSON object (OIDC Core §5.5); unknown members of it are ignored.
 */
export function selectLevel(levels: readonly AcrLevel[], input: { claims: string | undefined; acrValues: string | undefined; client: Pick<Client, 'metadata'>; policy: Requirement | undefined }): LevelDemand {
  const fromClaims = claimsAcr(input.claims);
  const fromParam = input.acrValues?.split(' ').filter((value) => value !== '');
  const defaults = defaultAcrValues(input.client);
  const voluntary = [...(fromClaims?.essential === false ? fromClaims.values : []), ...(fromParam ?? (fromClaims === undefined ? defaults : []))];
  const essentialValues = fromClaims?.essential === true ? fromClaims.values : [];
  const requirementOf = (value: string): Requirement | undefined => levels.find((level) => level.value === value)?.requirement;
  const essentialLevels = essentialValues.map(requirementOf).filter((r) => r !== undefined);
  // Any one of the essential values satisfies the request (§5.5.1.1 "values"): the weakest of them is the floor.
  const claimFloor = essentialLevels.length === 0 ? undefined : essentialLevels.reduce((a, b) => (REQUIREMENTS.indexOf(a) <= REQUIREMENTS.indexOf(b) ? a : b));
  return {
    requested: [...new Set([...essentialValues, ...voluntary])],
    essential: stronger(input.policy, claimFloor),
    unmeetable: essentialValues.length > 0 && essentialLevels.length === 0,
    preferred: voluntary.map(requirementOf).filter((r) => r !== undefined),
  };
}

/** The `acr` members of the claims parameter's id_token and userinfo requests, merged; undefined when neither has one. */
function claimsAcr(claims: string | undefined): ClaimRequest | undefined {
  if (claims === undefined) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(claims);
  } catch {
    throw new InvalidRequest('The claims parameter is not valid JSON (OIDC Core §5.5).');
  }
  if (!isObject(parsed)) throw new InvalidRequest('The claims parameter must be a JSON object (OIDC Core §5.5).');
  let found: ClaimRequest | undefined;
  for (const target of ['id_token', 'userinfo']) {
    const members = parsed[target];
    if (!isObject(members) || !Object.hasOwn(members, 'acr')) continue;
    // null: the claim is requested in the default manner (voluntary, any value).
    const acr = isObject(members.acr) ? members.acr : {};
    const values = typeof acr.value === 'string' ? [acr.value] : Array.isArray(acr.values) ? acr.values.filter((v): v is string => typeof v === 'string') : [];
    const essential = acr.essential === true;
    found = { essential: essential || found?.essential === true, values: [...(found?.values ?? []), ...values] };
  }
  return found;
}

/** OIDC Registration §2 default_acr_values, as registered (client-metadata.ts checked its shape). */
function defaultAcrValues(client: Pick<Client, 'metadata'>): string[] {
  const registered = client.metadata.default_acr_values;
  return Array.isArray(registered) ? registered.filter((v): v is string => typeof v === 'string') : [];
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
