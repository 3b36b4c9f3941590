import type { GrantType } from '../../domain/client.ts';
import { authorizationCodeGrant } from './authorization-code.ts';
import { clientCredentialsGrant } from './client-credentials.ts';
import type { Grant } from './grant.ts';
import { refreshTokenGrant } from './refresh-token.ts';

/**
 * The grants gatehouse implements, in the order discovery lists them. Adding a grant is one file
 * exporting a `Grant` plus its line here (docs/architecture.md, "How to add a grant").
 */
export const GRANTS = [authorizationCodeGrant, refreshTokenGrant, clientCredentialsGrant] as const satisfies readonly Grant[];

// Every GrantType the domain can store has a handler here, and no handler serves another type:
// a client row naming a grant nobody implements would be a promise nobody keeps.
type Implemented = (typeof GRANTS)[number]['type'];
const _everyGrantTypeImplemented: [Exclude<GrantType, Implemented>] extends [never] ? true : never = true;

/** The grant_type values served, in registry order: grant_types_supported and registration's allowed list. */
export const GRANT_TYPES_SUPPORTED: readonly GrantType[] = GRANTS.map((grant) => grant.type);

/** The grant_type values only confidential clients may register and use (Grant.confidential). */
export const CONFIDENTIAL_GRANT_TYPES: readonly GrantType[] = GRANTS.filter((grant: Grant) => grant.confidential === true).map((grant) => grant.type);

/** The grant registered for `grantType` (an own, exact match), if any. */
export function grantFor(grantType: string): Grant | undefined {
  return GRANTS.find((grant) => grant.type === grantType);
}

/** The body parameters any grant reads, each once, in registry order. */
export const GRANT_PARAMS: readonly string[] = [...new Set(GRANTS.flatMap((grant) => grant.params))];
