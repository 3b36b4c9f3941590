/**
 * `gatehouse admin bootstrap` (docs/cli.md, docs/management-api.md "Getting started"): what the
 * management API and the web console need before anyone can use them, made idempotently in ONE
 * unit of work with conditional inserts:
 *
 * - the clients `gatehouse-manage-api` (the API as a resource server) and `gatehouse-console`;
 * - the groups GATEHOUSE_ADMIN_GROUP and GATEHOUSE_ADMIN_READONLY_GROUP, marked as administrator
 *   groups (docs/decisions.md AD4; existing ones get the mark too);
 * - with a username that names nobody yet, the first administrator, in GATEHOUSE_ADMIN_GROUP.
 *
 * Whatever exists is left as it is (an existing user is not added to the group, nor is their
 * password touched): running it again changes nothing and says so. Bootstraps running at the same
 * time, on any instance, never fail or duplicate: every insert is conditional, and a user created
 * by another bootstrap between this one's read and its insert makes the whole unit run again, when
 * it finds the user there (docs/decisions.md MA6).
 */
import type { Config } from '../config.ts';
import type { User } from '../domain/user.ts';
import { administratorGroups, markAdministratorGroups } from '../identity/administrators.ts';
import { IdentityError } from '../identity/errors.ts';
import { hashPassword } from '../identity/passwords.ts';
import { passwordPolicyOf, type PasswordPolicy } from '../identity/password-policy.ts';
import { requiredText } from '../identity/text.ts';
import { checkedEmail, checkedPassword, newUserId } from '../identity/users.ts';
import type { Clock } from '../lib/clock.ts';
import type { Random } from '../lib/random.ts';
import type { Actor, AuditSink } from '../observability/audit.ts';
import { ConflictError, type Store, type StoreTransaction } from '../storage/ports.ts';
import type { Acting } from './acting.ts';
import { ensureManagementClientsIn } from './management-clients.ts';
import type { AdministrationPorts } from './ports.ts';

export interface BootstrapDeps {
  transaction: Store['transaction'];
  clock: Clock;
  random: Random;
}

export interface BootstrapInput {
  /** The first administrator's username; none: no user is created. */
  username?: string | undefined;
  /** Their password; none: one is generated and returned once. */
  password?: string | undefined;
  email?: string | undefined;
}

export interface BootstrapResult {
  /** The client_ids created. */
  clients: string[];
  /** The group names created. */
  groups: string[];
  /** The administrator created, or (`created: false`) the existing user of that name, left unchanged. */
  user?: { id: string; username: string; created: boolean };
  /** The generated password of a user created without one: shown once, never stored in the clear. */
  generatedPassword?: string;
  /** Whether anything was created at all. */
  changed: boolean;
}

/** 18 random bytes: a 24-character password, well past any guessing. */
const GENERATED_PASSWORD_BYTES = 18;
/** How often the unit is run again after another bootstrap took the username first (it then finds it). */
const MAX_RUNS = 3;

export async function bootstrap(deps: BootstrapDeps, config: Pick<Config, 'issuer' | 'manageAdminGroup' | 'manageReadonlyGroup'> & Partial<Pick<Config, 'passwordMinLength'>>, input: BootstrapInput = {}): Promise<BootstrapResult> {
  const wanted = input.username === undefined ? undefined : prepareUser(input, passwordPolicyOf(config));
  const generatedPassword = wanted && input.password === undefined ? deps.random.token(GENERATED_PASSWORD_BYTES) : undefined;
  // Hashed before the unit of work, which must stay short (Store.transaction).
  const passwordHash = wanted ? await hashPassword(input.password ?? generatedPassword!) : undefined;
  for (let run = 1; ; run++) {
    try {
      const result = await deps.transaction((tx) => bootstrapIn(tx, config, deps, wanted, passwordHash));
      return { ...result, ...(result.user?.created && generatedPassword !== undefined ? { generatedPassword } : {}) };
    } catch (error) {
      if (!(error instanceof ConflictError) || run >= MAX_RUNS) throw error;
    }
  }
}

function prepareUser(input: BootstrapInput, policy: PasswordPolicy): { username: string; email: string | undefined } {
  const username = requiredText(input.username, 'username');
  const email = checkedEmail(input.email);
  if (input.password !== undefined) checkedPassword(input.password, { username, email }, policy);
  return { username, email };
}

async function bootstrapIn(
  tx: StoreTransaction,
  config: Pick<Config, 'issuer' | 'manageAdminGroup' | 'manageReadonlyGroup'>,
  deps: Pick<BootstrapDeps, 'clock' | 'random'>,
  wanted: { username: string; email: string | undefined } | undefined,
  passwordHash: string | undefined,
): Promise<Omit<BootstrapResult, 'generatedPassword'>> {
  const now = deps.clock.now();
  const clients = await ensureManagementClientsIn(tx, config, now);
  const groups: string[] = [];
  for (const name of [config.manageAdminGroup, config.manageReadonlyGroup]) {
    if (await tx.groups.insertIfAbsent({ id: deps.random.uuid(), name, description: groupDescription(name, config), createdAt: now, administrator: true })) groups.push(name);
  }
  // Ones that existed already are marked too (docs/decisions.md AD4): not a change to report.
  await markAdministratorGroups(tx, administratorGroups(config));
  let user: BootstrapResult['user'];
  if (wanted) {
    const existing = await tx.users.getByUsername(wanted.username);
    if (existing) user = { id: existing.id, username: existing.username, created: false };
    else {
      const created: User = { id: await newUserId(tx, deps.random), username: wanted.username, status: 'enabled', givenName: undefined, familyName: undefined, email: wanted.email, emailVerified: false, organizationId: undefined, attributes: {}, createdAt: now, updatedAt: now };
      await tx.users.insert(created, passwordHash);
      const admins = await tx.groups.getByName(config.manageAdminGroup);
      if (!admins) throw new IdentityError('inconsistent', `the group ${config.manageAdminGroup} vanished during the bootstrap`);
      await tx.groups.addMember(admins.id, created.id);
      user = { id: created.id, username: created.username, created: true };
    }
  }
  return { clients, groups, ...(user ? { user } : {}), changed: clients.length > 0 || groups.length > 0 || user?.created === true };
}

function groupDescription(name: string, config: Pick<Config, 'manageAdminGroup'>): string {
  return name === config.manageAdminGroup ? 'Administrators of gatehouse: the management API and web console' : 'Read-only access to the management API and web console';
}

/** The audit events of what a bootstrap created, after it committed (Store.transaction: no effects inside). */
function emitBootstrapAudit(audit: AuditSink, result: BootstrapResult, config: Pick<Config, 'manageAdminGroup'>, actor: Actor): void {
  for (const clientId of result.clients) audit.emit({ event: 'client.created', clientId, authorizationPolicy: null, actor });
  if (result.user?.created) {
    audit.emit({ event: 'user.created', userId: result.user.id, username: result.user.username, actor });
    audit.emit({ event: 'user.group_added', userId: result.user.id, username: result.user.username, group: config.manageAdminGroup, actor });
  }
}

/** `gatehouse admin bootstrap` as a use case: the bootstrap's unit of work, then the audit events of what it created, naming who acts. */
export type BootstrapAdministration = (acting: Acting, input?: BootstrapInput) => Promise<BootstrapResult>;

export function bootstrapAdministration(ports: Pick<AdministrationPorts, 'store' | 'clock' | 'random' | 'audit' | 'settings'>): BootstrapAdministration {
  return async (acting, input = {}) => {
    const result = await bootstrap({ transaction: ports.store.transaction, clock: ports.clock, random: ports.random }, ports.settings, input);
    emitBootstrapAudit(ports.audit, result, ports.settings, acting.actor);
    return result;
  };
}
