/**
 * The identity API's authorization policy (issue 13, item 5; docs/identity-api.md, "OAuth 2.0
 * bearer token"; docs/decisions.md PO11–PO15). The identity API is a resource server whose client
 * is GATEHOUSE_API_CLIENT_ID; who may call it with a user's bearer token is decided by that
 * client's policy's access rules, as for any other client — not by a special case.
 *
 * A deployment gets a default policy, `identity-api`, letting in the members of GATEHOUSE_API_GROUP
 * (what the bearer check did before), created at startup and attached to the API client when that
 * client has no policy of its own. From then on it is an ordinary policy: `gatehouse policy update
 * identity-api --file …` changes who may call the API, or another policy is attached to the API
 * client. GATEHOUSE_API_GROUP is only the group of the policy when it is first created.
 */
import type { Client } from '../../domain/client.ts';
import { parsePolicyDocument, PolicyDocumentError, type PolicyDocument } from '../../domain/policy.ts';
import type { Clock } from '../../lib/clock.ts';
import { ConflictError, type Store } from '../../storage/ports.ts';

/** The name of the seeded policy, and the one the bearer check falls back to. */
export const IDENTITY_API_POLICY = 'identity-api';

/**
 * The policy whose access rules decide who may call the identity API: the API client's own, or,
 * when it has none (it was registered after the last start, or does not exist), the seeded
 * `identity-api` by name. A policy of that name that is not stored (deleted) lets no one in
 * (readPolicy fails closed, docs/decisions.md PO8).
 */
export function identityApiPolicyName(apiClient: Pick<Client, 'authorizationPolicy'> | undefined): string {
  return apiClient?.authorizationPolicy ?? IDENTITY_API_POLICY;
}

/** What seeding did: whether it created the policy, and whether it attached it to the API client. */
export interface SeedOutcome {
  created: boolean;
  attached: boolean;
}

/** How often the unit is tried when another instance inserted the policy between its read and its insert. */
const SEED_ATTEMPTS = 3;

/**
 * Creates the `identity-api` policy if it is absent and attaches it to the API client if that
 * client exists and has no policy, in one unit of work. Idempotent, and safe when several
 * instances start at once: a policy another instance inserted meanwhile is a ConflictError (or a
 * serialization failure, which the store retries), after which the unit runs again and finds it;
 * the attach is a conditional write (only where the client's policy is still NULL), so a policy an
 * administrator attached is never overwritten. An existing policy is never changed.
 */
export async function seedIdentityApiPolicy(deps: { store: Pick<Store, 'transaction'>; clock: Clock }, settings: { apiClientId: string; apiGroup: string }): Promise<SeedOutcome> {
  const document = defaultDocument(settings.apiGroup);
  for (let attempt = 1; ; attempt++) {
    try {
      return await deps.store.transaction(async (tx) => {
        const now = deps.clock.now();
        let created = false;
        if ((await tx.policies.get(IDENTITY_API_POLICY)) === undefined) {
          await tx.policies.insert({ document, version: 1, createdAt: now, updatedAt: now });
          created = true;
        }
        const attached = await tx.clients.attachPolicyIfNone(settings.apiClientId, IDENTITY_API_POLICY, now);
        return { created, attached };
      });
    } catch (error) {
      // Another instance's insert won: the policy is there now, which is all this one wanted.
      if (error instanceof ConflictError && attempt < SEED_ATTEMPTS) continue;
      throw error;
    }
  }
}

/** `{"name":"identity-api","access":{"groups":[GATEHOUSE_API_GROUP]}}`, checked like any policy document. */
function defaultDocument(apiGroup: string): PolicyDocument {
  try {
    return parsePolicyDocument({ name: IDENTITY_API_POLICY, access: { groups: [apiGroup] } });
  } catch (error) {
    if (error instanceof PolicyDocumentError) throw new Error(`GATEHOUSE_API_GROUP cannot be the group of the identity-api policy: ${error.message}`, { cause: error });
    throw error;
  }
}
