/**
 * Reading the organization tree: an organization's entity name (its path of technical names from
 * the root, CustomerID's `Org/Dept`) and the users of an organization, optionally with those of
 * every sub-organization (REST API 2.1 `organizations/{id}/users/?recursive=true`).
 */
import { MAX_ORGANIZATION_DEPTH, type Organization } from '../domain/organization.ts';
import { TreeShapeError, type OrganizationStore, type UserQuery, type UserStore } from '../storage/ports.ts';
import { IdentityError } from './errors.ts';
import { getOrganization } from './organizations.ts';

/** `root/child/grandchild`: the technical names from the root down to `organization`. */
export async function organizationPath(deps: { organizations: OrganizationStore }, organization: Organization): Promise<string> {
  const names = [organization.technicalName];
  let parentId = organization.parentId;
  for (let depth = 0; parentId !== undefined && depth < MAX_ORGANIZATION_DEPTH; depth++) {
    const parent = await deps.organizations.get(parentId);
    if (!parent) break;
    names.unshift(parent.technicalName);
    parentId = parent.parentId;
  }
  return names.join('/');
}

export interface OrganizationUsersQuery extends Omit<UserQuery, 'organizationIds'> {
  /** Include the users of every organization below this one. */
  recursive?: boolean;
}

/**
 * The ids of the users of one organization (404 when it does not exist), or of its whole subtree
 * (409 `inconsistent` when the stored subtree is deeper than MAX_ORGANIZATION_DEPTH or cyclic:
 * rows written before the store refused such trees, to be repaired by hand).
 */
export async function userIdsOfOrganization(deps: { organizations: OrganizationStore; users: UserStore }, id: string, query: OrganizationUsersQuery = {}): Promise<string[]> {
  const organization = await getOrganization(deps, id);
  const organizationIds = query.recursive ? await subtreeIds(deps, organization) : [organization.id];
  const { recursive: _recursive, ...rest } = query;
  return deps.users.listIds({ ...rest, organizationIds });
}

async function subtreeIds(deps: { organizations: OrganizationStore }, organization: Organization): Promise<string[]> {
  try {
    return await deps.organizations.subtreeIds(organization.id);
  } catch (error) {
    if (error instanceof TreeShapeError) throw new IdentityError('inconsistent', `the organization tree below ${JSON.stringify(organization.technicalName)} is deeper than ${MAX_ORGANIZATION_DEPTH} levels or has a cycle; repair the parent references in the store`);
    throw error;
  }
}
