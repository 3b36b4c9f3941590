/**
 * Managing authorization policies (the CLI's `gatehouse policy …`): documents checked by
 * parsePolicyDocument, stored by name with a version that every update raises.
 */
import { parsePolicyDocument, type Policy } from '../../domain/policy.ts';
import type { Clock } from '../../lib/clock.ts';
import type { PolicyStore } from '../../storage/ports.ts';

export interface PolicyDeps {
  policies: PolicyStore;
  clock: Clock;
}

/** No policy has this name. */
export class PolicyNotFound extends Error {
  constructor(name: string) {
    super(`no policy is named ${JSON.stringify(name)}`);
    this.name = 'PolicyNotFound';
  }
}

/** Stores a new policy from its wire document; ConflictError when the name is taken. */
export async function createPolicy(deps: PolicyDeps, wire: unknown): Promise<Policy> {
  const document = parsePolicyDocument(wire);
  const now = deps.clock.now();
  const policy: Policy = { document, version: 1, createdAt: now, updatedAt: now };
  await deps.policies.insert(policy);
  return policy;
}

/**
 * Replaces the document of the policy `name`. The document's own name must be `name` (a rename
 * would orphan the clients that refer to it): it may be left out, and is then taken from `name`.
 */
export async function updatePolicy(deps: PolicyDeps, name: string, wire: unknown): Promise<Policy> {
  const given = typeof wire === 'object' && wire !== null && !Array.isArray(wire) && !('name' in wire) ? { name, ...wire } : wire;
  const document = parsePolicyDocument(given);
  if (document.name !== name) throw new PolicyRenamed(name, document.name);
  const updated = await deps.policies.update(document, deps.clock.now());
  if (!updated) throw new PolicyNotFound(name);
  return updated;
}

export class PolicyRenamed extends Error {
  constructor(name: string, given: string) {
    super(`name: the document names ${JSON.stringify(given)}, not ${JSON.stringify(name)}; a policy cannot be renamed (create a new one and move the clients to it)`);
    this.name = 'PolicyRenamed';
  }
}

export async function getPolicy(deps: Pick<PolicyDeps, 'policies'>, name: string): Promise<Policy> {
  const policy = await deps.policies.get(name);
  if (!policy) throw new PolicyNotFound(name);
  return policy;
}

export async function listPolicies(deps: Pick<PolicyDeps, 'policies'>): Promise<Policy[]> {
  return deps.policies.list();
}

/** Deletes a policy no client refers to; PolicyInUseError (src/storage/ports.ts) while one does. */
export async function deletePolicy(deps: Pick<PolicyDeps, 'policies'>, name: string): Promise<void> {
  if (!(await deps.policies.delete(name))) throw new PolicyNotFound(name);
}
