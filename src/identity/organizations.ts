/**
 * Organization use cases with CustomerID's defaults: the technical name defaults to a generated
 * UUID and the friendly name to the technical name; an organization without a parent sits at
 * the root.
 */
import type { Organization } from '../domain/organization.ts';
import type { Clock } from '../lib/clock.ts';
import type { Random } from '../lib/random.ts';
import { ConflictError, MissingReferenceError, TreeShapeError, type OrganizationQuery, type OrganizationStore } from '../storage/ports.ts';
import { checkedAttributes } from './attributes.ts';
import { IdentityError } from './errors.ts';
import { optionalText } from './text.ts';

export interface OrganizationDeps {
  organizations: OrganizationStore;
  clock: Clock;
  random: Random;
}

export interface NewOrganization {
  technicalName?: string;
  friendlyName?: string;
  parentId?: string;
  type?: string;
  /** A virtual organization groups others and holds no users of its own. */
  virtual?: boolean;
  attributes?: Organization['attributes'];
}

export async function createOrganization(deps: OrganizationDeps, input: NewOrganization): Promise<Organization> {
  // Checked here, first, whichever front end parsed them (the management API used to check them itself).
  const attributes = checkedAttributes(input.attributes);
  const id = deps.random.uuid();
  const technicalName = optionalText(input.technicalName, 'technicalName') ?? id;
  const parentId = optionalText(input.parentId, 'parentId');
  if (parentId !== undefined && !(await deps.organizations.get(parentId))) {
    throw new IdentityError('invalid_reference', `parent organization ${JSON.stringify(parentId)} does not exist`, 'parentId');
  }
  const now = deps.clock.now();
  const organization: Organization = {
    id,
    parentId,
    technicalName,
    friendlyName: optionalText(input.friendlyName, 'friendlyName') ?? technicalName,
    type: optionalText(input.type, 'type'),
    virtual: input.virtual ?? false,
    attributes,
    createdAt: now,
    updatedAt: now,
  };
  try {
    await deps.organizations.insert(organization);
  } catch (error) {
    if (error instanceof ConflictError) {
      const where = parentId === undefined ? 'at the root' : 'under that parent';
      throw new IdentityError('already_exists', `an organization named ${JSON.stringify(technicalName)} already exists ${where}`, 'technicalName');
    }
    // The parent was deleted between the check and the insert.
    if (error instanceof MissingReferenceError) throw new IdentityError('invalid_reference', `parent organization ${JSON.stringify(parentId)} does not exist`, 'parentId');
    if (error instanceof TreeShapeError) throw new IdentityError('invalid_argument', error.message, 'parentId');
    throw error;
  }
  return organization;
}

export async function getOrganization(deps: Pick<OrganizationDeps, 'organizations'>, id: string): Promise<Organization> {
  const organization = await deps.organizations.get(id);
  if (!organization) throw new IdentityError('not_found', `no organization has the id ${JSON.stringify(id)}`);
  return organization;
}

export async function listOrganizations(deps: Pick<OrganizationDeps, 'organizations'>, query: OrganizationQuery = {}): Promise<Organization[]> {
  return deps.organizations.list(query);
}

/** The matching organizations' ids only: what the identity API's listings answer. */
export async function listOrganizationIds(deps: Pick<OrganizationDeps, 'organizations'>, query: OrganizationQuery = {}): Promise<string[]> {
  return deps.organizations.listIds(query);
}
