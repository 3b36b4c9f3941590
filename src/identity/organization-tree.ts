/**
 * Reading the organization tree: an organization's entity name (its path of technical names from
 * the root, CustomerID's `Org/Dept`) and the users of an organization, optionally with those of
 * every sub-organization (REST API 2.1 `organizations/{id}/users/?recursive=true`).
 */
import type { Organization } from '../domain/organization.ts';
import type { User } from '../domain/user.ts';
import type { OrganizationStore, UserQuery, UserStore } from '../storage/ports.ts';
import { getOrganization } from './organizations.ts';

/** Deeper than any real tree; a bound in case stored rows ever form a cycle. */
const MAX_DEPTH = 64;

/** `root/child/grandchild`: the technical names from the root down to `organization`. */
export async function organizationPath(deps: { organizations: OrganizationStore }, organization: Organization): Promise<string> {
  const names = [organization.technicalName];
  let parentId = organization.parentId;
  for (let depth = 0; parentId !== undefined && depth < MAX_DEPTH; depth++) {
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

/** The users of one organization (404 when it does not exist), or of its whole subtree. */
export async function usersOfOrganization(deps: { organizations: OrganizationStore; users: UserStore }, id: string, query: OrganizationUsersQuery = {}): Promise<User[]> {
  const organization = await getOrganization(deps, id);
  const organizationIds = query.recursive ? await deps.organizations.subtreeIds(organization.id) : [organization.id];
  const { recursive: _recursive, ...rest } = query;
  return deps.users.list({ ...rest, organizationIds });
}
