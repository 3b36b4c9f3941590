/**
 * `/{identity_rest}/services/{2.0|2.1}/organizations/…` (CustomerID REST API 2.0/2.1): list,
 * create (parameters in the query string as the product takes them, or a body), read, update,
 * delete, and the users of an organization with `recursive` over its sub-organizations.
 */
import type { Organization } from '../../domain/organization.ts';
import type { RestRouteDeps } from '../deps.ts';
import type { ApiResult } from './render.ts';
import { organizationEntity } from './representation.ts';
import { organizationFilters, userFilters } from './wire-filters.ts';
import { newOrganization, organizationChanges } from './wire-input.ts';
import { listing, pathId, requestAttributes, type ApiCall, type ApiRoute } from './route.ts';
import { attributeQuery, collectionResponse, entityBody, entityResponse, idParams, listQuery } from './schemas.ts';

const organizations = collectionResponse('organizations', 'An organization id.');
const users = collectionResponse('users', 'A user id.');

function affected(id: string, status = 200, location?: string): ApiResult {
  return { status, location, body: { kind: 'collection', collection: 'Organizations', ids: [id] } };
}

export async function organizationResult(deps: RestRouteDeps, organization: Organization): Promise<ApiResult> {
  return { body: { kind: 'entity', entity: organizationEntity(organization, await deps.admin.organizations.path(organization)) } };
}

export async function listOrganizationIds(call: ApiCall): Promise<ApiResult> {
  const { limit, check } = listing(call);
  const filters = organizationFilters(call.query);
  // Ids only, as on the wire: the organizations' attributes are never loaded for a listing.
  const found = check(await call.deps.admin.organizations.listIds({ filters, exactMatch: (call.query.exactMatch as boolean | undefined) ?? false, limit }));
  return { body: { kind: 'collection', collection: 'Organizations', ids: found } };
}

export function organizationRoutes(version: '2.0' | '2.1'): ApiRoute[] {
  const base = `/${version}/organizations`;
  const v = version.replace('.', '');
  return [
    {
      method: 'GET',
      path: `${base}/`,
      operationId: `listOrganizations${v}`,
      summary: 'List organization ids, filtered by any attributes',
      description: 'Every query parameter other than exactMatch and maxResults filters by the attribute of that name, e.g. technicalName=acme, parentOrganizationId=ID or a custom attribute.',
      tag: 'Organizations',
      querystring: listQuery(false),
      responses: { 200: { description: 'The ids of the matching organizations.', schema: organizations } },
      handle: listOrganizationIds,
    },
    {
      method: 'POST',
      path: `${base}/`,
      operationId: `createOrganization${v}`,
      summary: 'Create an organization',
      description:
        'Attributes from the query string (virtual, technicalName, friendlyName, parentOrganizationId, organizationType or organizationClass, custom attributes such as vatnumber=12345) and/or the body. technicalName defaults to the new id, friendlyName to technicalName; without parentOrganizationId the organization sits at the root.',
      tag: 'Organizations',
      querystring: attributeQuery,
      body: entityBody('organization'),
      responses: { 201: { description: 'Created; the collection holds the new id.', schema: organizations } },
      async handle(call) {
        const created = await call.deps.admin.organizations.create(await call.acting(), newOrganization(requestAttributes(call, 'organization')));
        return affected(created.id, 201, `${call.path}${created.id}`);
      },
    },
    {
      method: 'GET',
      path: `${base}/:id`,
      operationId: `getOrganization${v}`,
      summary: 'Read an organization',
      tag: 'Organizations',
      params: idParams,
      responses: { 200: { description: 'The organization; entityName is its path of technical names from the root.', schema: entityResponse } },
      async handle(call) {
        return organizationResult(call.deps, await call.deps.admin.organizations.get(pathId(call)));
      },
    },
    {
      method: 'PUT',
      path: `${base}/:id`,
      operationId: `updateOrganization${v}`,
      summary: 'Update an organization',
      description: 'The attributes given replace the stored ones, an empty value deletes one (an empty parentOrganizationId moves it to the root), the others stay.',
      tag: 'Organizations',
      params: idParams,
      querystring: attributeQuery,
      body: entityBody('organization'),
      responses: { 200: { description: 'Updated; the collection holds the id.', schema: organizations } },
      async handle(call) {
        const id = pathId(call);
        const changes = organizationChanges(requestAttributes(call, 'organization'), id);
        await call.deps.admin.organizations.update(await call.acting(), id, changes);
        return affected(id);
      },
    },
    {
      method: 'DELETE',
      path: `${base}/:id`,
      operationId: `deleteOrganization${v}`,
      summary: 'Delete an empty organization',
      description: 'Refused with 409 while it has sub-organizations or users. It cannot be undone.',
      tag: 'Organizations',
      params: idParams,
      responses: { 200: { description: 'Deleted; the collection holds the id.', schema: organizations } },
      async handle(call) {
        const id = pathId(call);
        await call.deps.admin.organizations.delete(await call.acting(), id);
        return affected(id);
      },
    },
    {
      method: 'GET',
      path: `${base}/:id/users/`,
      operationId: `listOrganizationUsers${v}`,
      summary: 'List the users of an organization',
      description: 'With recursive=true, also the users of every sub-organization. Other query parameters filter by user attributes, as in the users listing.',
      tag: 'Organizations',
      params: idParams,
      querystring: listQuery(true),
      responses: { 200: { description: 'The ids of the users.', schema: users } },
      async handle(call) {
        const { limit, check } = listing(call);
        const { query } = call;
        const filters = userFilters(query);
        const found = check(await call.deps.admin.organizations.userIds(pathId(call), { filters, exactMatch: (query.exactMatch as boolean | undefined) ?? false, limit, recursive: query.recursive === true }));
        return { body: { kind: 'collection', collection: 'Users', ids: found } };
      },
    },
  ];
}
