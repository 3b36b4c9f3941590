/**
 * Changing and deleting organizations, with CustomerID's update rule (REST API 2.0, "Update
 * organization"): the attributes given replace the stored ones, an empty value deletes one, and
 * the attributes not given stay as they are.
 */
import type { Organization } from '../domain/organization.ts';
import type { Clock } from '../lib/clock.ts';
import { ConflictError, MissingReferenceError, OrganizationInUseError, TreeShapeError, type OrganizationStore, type Store, type UserStore } from '../storage/ports.ts';
import { applyAttributeChanges, type AttributeChanges } from './attributes.ts';
import { IdentityError } from './errors.ts';
import { getOrganization } from './organizations.ts';
import { optionalText, requiredText } from './text.ts';

export interface OrganizationChangeDeps {
  organizations: OrganizationStore;
  users: UserStore;
  /** A change reads the organization, checks and writes it in one unit of work. */
  transaction: Store['transaction'];
  clock: Clock;
}

export interface OrganizationChanges {
  technicalName?: string;
  /** null resets it to the technical name, the default of a new organization. */
  friendlyName?: string | null;
  type?: string | null;
  /** null moves the organization to the root. */
  parentId?: string | null;
  virtual?: boolean;
  attributes?: AttributeChanges;
}

export async function updateOrganization(deps: OrganizationChangeDeps, id: string, changes: OrganizationChanges): Promise<Organization> {
  await getOrganization(deps, id); // not_found before anything else
  const now = deps.clock.now();
  let technicalName = changes.technicalName;
  let parentId: string | undefined;
  // One unit of work: the organization is read, checked and written in it, so a concurrent
  // change is not undone, and "has no users, so it may become virtual" still holds when it commits.
  try {
    return await deps.transaction(async (tx) => {
      const current = await getOrganization(tx, id);
      technicalName = changes.technicalName === undefined ? current.technicalName : requiredText(changes.technicalName, 'technicalName');
      const friendlyName = changes.friendlyName === undefined ? current.friendlyName : (optionalText(changes.friendlyName, 'friendlyName') ?? technicalName);
      const type = changes.type === undefined ? current.type : optionalText(changes.type, 'type');
      parentId = changes.parentId === undefined ? current.parentId : await checkedParent(tx, changes.parentId);
      const virtual = changes.virtual ?? current.virtual;
      if (virtual && !current.virtual && (await tx.users.listIds({ organizationIds: [current.id], limit: 1 })).length > 0) {
        throw new IdentityError('invalid_argument', `organization ${JSON.stringify(current.technicalName)} has users, so it cannot become virtual`, 'virtual');
      }
      const attributes = changes.attributes === undefined ? current.attributes : applyAttributeChanges(current.attributes, changes.attributes);
      const next: Organization = { ...current, technicalName, friendlyName, type, parentId, virtual, attributes, updatedAt: now };
      if (!(await tx.organizations.update(next))) throw gone(id);
      return next;
    });
  } catch (error) {
    if (error instanceof ConflictError) throw new IdentityError('already_exists', `an organization named ${JSON.stringify(technicalName)} already exists ${parentId === undefined ? 'at the root' : 'under that parent'}`, 'technicalName');
    if (error instanceof MissingReferenceError) throw new IdentityError('invalid_reference', `parent organization ${JSON.stringify(parentId)} does not exist`, 'parentId');
    // The store checks the tree in the transaction that moves (a check here could race another move).
    if (error instanceof TreeShapeError) throw new IdentityError('invalid_argument', error.message, 'parentId');
    throw error;
  }
}

/**
 * Deletes an organization that holds nothing: an organization with sub-organizations or users
 * is refused (`in_use`), because deleting cannot be undone (CustomerID: "Remove" is final) and
 * silently orphaning users would lose their place in the tree.
 */
export async function deleteOrganization(deps: Pick<OrganizationChangeDeps, 'organizations' | 'users'>, id: string): Promise<Organization> {
  const organization = await getOrganization(deps, id);
  const [child] = await deps.organizations.listIds({ filters: { parentOrganizationId: organization.id }, exactMatch: true, limit: 1 });
  if (child) throw new IdentityError('in_use', `organization ${JSON.stringify(organization.technicalName)} has sub-organizations; delete or move them first`);
  const [member] = await deps.users.listIds({ organizationIds: [organization.id], limit: 1 });
  if (member) throw new IdentityError('in_use', `organization ${JSON.stringify(organization.technicalName)} has users; delete or move them first`);
  try {
    if (!(await deps.organizations.delete(organization.id))) throw gone(id);
  } catch (error) {
    // A sub-organization was added in between (the store refuses to orphan it).
    if (error instanceof MissingReferenceError) throw new IdentityError('in_use', `organization ${JSON.stringify(organization.technicalName)} has sub-organizations; delete or move them first`);
    // A user was added in between (the store checks again in the transaction that deletes).
    if (error instanceof OrganizationInUseError) throw new IdentityError('in_use', `organization ${JSON.stringify(organization.technicalName)} has users; delete or move them first`);
    throw error;
  }
  return organization;
}

/**
 * A new parent must exist. That it is not the organization itself or below it (no cycles), and
 * that the tree stays within MAX_ORGANIZATION_DEPTH, the store checks atomically with the move.
 */
async function checkedParent(deps: Pick<OrganizationChangeDeps, 'organizations'>, parentId: string | null): Promise<string | undefined> {
  const wanted = parentId === null ? undefined : optionalText(parentId, 'parentId');
  if (wanted === undefined) return undefined;
  const parent = await deps.organizations.get(wanted);
  if (!parent) throw new IdentityError('invalid_reference', `parent organization ${JSON.stringify(wanted)} does not exist`, 'parentId');
  return parent.id;
}

function gone(id: string): IdentityError {
  return new IdentityError('not_found', `organization ${JSON.stringify(id)} no longer exists`);
}
