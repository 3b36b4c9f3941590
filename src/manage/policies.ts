/**
 * The use cases of authorization policies: each takes who acts (acting.ts) and its input, runs the rules and the
 * unit of work of the change, and emits its audit event. Every front end calls these.
 *
 * The rules stay in src/oauth/policy/manage.ts (the document's checks, no renaming, a version
 * that every update raises); a policy in use is refused by the store (ON DELETE RESTRICT), and
 * the refusal here names the clients that use it, so each front end can say which.
 */
import { PolicyInUseError } from '../domain/errors.ts';
import type { Policy } from '../domain/policy.ts';
import { createPolicy, deletePolicy, getPolicy, listPolicies, updatePolicy } from '../oauth/policy/manage.ts';
import type { PageQuery } from '../storage/ports.ts';
import type { Acting } from './acting.ts';
import type { AdministrationPorts } from './ports.ts';

/** The policy is attached to these clients (the store's PolicyInUseError, with whom it refers to now). */
export class PolicyInUse extends PolicyInUseError {
  readonly policy: string;
  readonly clients: string[];
  constructor(refused: PolicyInUseError, policy: string, clients: string[]) {
    super(refused.message);
    this.policy = policy;
    this.clients = clients;
  }
}

export interface PolicyAdministration {
  /** A new policy from its wire document (version 1); the store's ConflictError when the name is taken; `policy.created`. */
  create(acting: Acting, document: unknown): Promise<Policy>;
  /** Replaces the document of the policy `name` (its version rises by one); `policy.updated`. */
  update(acting: Acting, name: string, document: unknown): Promise<Policy>;
  /** Deletes a policy no client uses (else PolicyInUse); `policy.deleted`. */
  delete(acting: Acting, name: string): Promise<void>;
  /** The policy (else PolicyNotFound) and the clients that use it. */
  get(name: string): Promise<{ policy: Policy; clients: string[] }>;
  /** Every policy, by name (the CLI's list). */
  list(): Promise<Policy[]>;
  /** One keyset page by name (the management API's listing). */
  page(query: PageQuery<string>): Promise<Policy[]>;
}

export function policyAdministration(ports: Pick<AdministrationPorts, 'store' | 'clock' | 'audit'>): PolicyAdministration {
  const { store, clock, audit } = ports;
  const deps = () => ({ policies: store.policies, clock });
  return {
    async create(acting, document) {
      const created = await createPolicy(deps(), document);
      audit.emit({ event: 'policy.created', policy: created.document.name, version: created.version, actor: acting.actor });
      return created;
    },
    async update(acting, name, document) {
      const updated = await updatePolicy(deps(), name, document);
      audit.emit({ event: 'policy.updated', policy: updated.document.name, version: updated.version, actor: acting.actor });
      return updated;
    },
    async delete(acting, name) {
      try {
        await deletePolicy(deps(), name);
      } catch (error) {
        if (!(error instanceof PolicyInUseError)) throw error;
        // Read after the refusal: the clients named are those it refers to now.
        throw new PolicyInUse(error, name, await store.policies.clientsUsing(name));
      }
      audit.emit({ event: 'policy.deleted', policy: name, actor: acting.actor });
    },
    async get(name) {
      const policy = await getPolicy(deps(), name);
      return { policy, clients: await store.policies.clientsUsing(policy.document.name) };
    },
    list: () => listPolicies(deps()),
    page: (query) => store.policies.page(query),
  };
}
