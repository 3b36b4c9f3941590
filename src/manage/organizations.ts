/**
 * The use cases of organizations and their tree: each takes who acts (acting.ts) and its input, runs the rules and the
 * unit of work of the change, and emits its audit event. Every front end calls these.
 *
 * The rules stay where they were (src/identity/organizations.ts, organization-changes.ts,
 * organization-tree.ts: the defaults, the tree's shape, "delete only what holds nothing"); what
 * moved here is the audit event, which only the management API emitted: a change made with the
 * CLI or the identity API is now audited the same way.
 */
import type { Organization } from '../domain/organization.ts';
import { deleteOrganization, updateOrganization, type OrganizationChanges } from '../identity/organization-changes.ts';
import { organizationPath, userIdsOfOrganization, type OrganizationUsersQuery } from '../identity/organization-tree.ts';
import { createOrganization, getOrganization, listOrganizationIds, listOrganizations, type NewOrganization } from '../identity/organizations.ts';
import type { OrganizationPageKey, OrganizationQuery, PageQuery } from '../storage/ports.ts';
import type { Acting } from './acting.ts';
import type { AdministrationPorts } from './ports.ts';

export type { NewOrganization, OrganizationChanges, OrganizationUsersQuery };

export interface OrganizationAdministration {
  /** A new organization (the identity rules' defaults: technical name = its id, friendly name = technical name); `organization.created`. */
  create(acting: Acting, input: NewOrganization): Promise<Organization>;
  /** The values given replace the stored ones, in one unit of work; `organization.updated` with the names of the fields given. */
  update(acting: Acting, id: string, changes: OrganizationChanges): Promise<Organization>;
  /** Deletes an organization that holds nothing (else `in_use`); `organization.deleted`. */
  delete(acting: Acting, id: string): Promise<Organization>;
  /** The organization, or IdentityError `not_found`. */
  get(id: string): Promise<Organization>;
  /** Every matching organization (the CLI's list). */
  list(query?: OrganizationQuery): Promise<Organization[]>;
  /** The matching organizations' ids only (the identity API's listings: their attributes are never loaded). */
  listIds(query: OrganizationQuery): Promise<string[]>;
  /** One keyset page in (technical name, id) order (the management API's listing). */
  page(query: PageQuery<OrganizationPageKey>): Promise<Organization[]>;
  /** `root/child/grandchild`: the technical names from the root down (the identity API's entityName). */
  path(organization: Organization): Promise<string>;
  /** The ids of the users of an organization, or of its whole subtree with `recursive`. */
  userIds(id: string, query: OrganizationUsersQuery): Promise<string[]>;
}

/** The changes' field names an `organization.updated` event lists, in this order. */
const CHANGE_FIELDS = ['friendlyName', 'technicalName', 'parentId', 'type', 'virtual', 'attributes'] as const satisfies readonly (keyof OrganizationChanges)[];

/** The names of the fields a change gives (undefined means "leave it"; null is a change). */
export function changedFields(changes: OrganizationChanges): string[] {
  return CHANGE_FIELDS.filter((name) => changes[name] !== undefined);
}

export function organizationAdministration(ports: Pick<AdministrationPorts, 'store' | 'clock' | 'random' | 'audit'>): OrganizationAdministration {
  const { store, clock, random, audit } = ports;
  // The change's unit of work is the store's transaction, called apart from the store object.
  const changeDeps = () => ({ organizations: store.organizations, users: store.users, transaction: store.transaction.bind(store), clock });
  return {
    async create(acting, input) {
      const created = await createOrganization({ organizations: store.organizations, clock, random }, input);
      audit.emit({ event: 'organization.created', organizationId: created.id, technicalName: created.technicalName, actor: acting.actor });
      return created;
    },
    async update(acting, id, changes) {
      const updated = await updateOrganization(changeDeps(), id, changes);
      audit.emit({ event: 'organization.updated', organizationId: updated.id, technicalName: updated.technicalName, fields: changedFields(changes), actor: acting.actor });
      return updated;
    },
    async delete(acting, id) {
      const deleted = await deleteOrganization(changeDeps(), id);
      audit.emit({ event: 'organization.deleted', organizationId: deleted.id, technicalName: deleted.technicalName, actor: acting.actor });
      return deleted;
    },
    get: (id) => getOrganization(store, id),
    list: (query) => listOrganizations(store, query),
    listIds: (query) => listOrganizationIds(store, query),
    page: (query) => store.organizations.page(query),
    path: (organization) => organizationPath(store, organization),
    userIds: (id, query) => userIdsOfOrganization(store, id, query),
  };
}
