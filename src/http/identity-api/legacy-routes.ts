/**
 * The legacy API, `/{legacy_service}/services/…` (CustomerID's `eidm2`, schema 1.2; the product
 * also answers it at `/{identity_rest}/services/…`): the read operations, over the same data and
 * filters as 2.x, in the 1.2 shapes — `<idlist><Id>…</Id></idlist>` and entity elements led by
 * their `<Id>`.
 *
 * Ids: the 1.x product used entity URLs (`https://HOST/eidm2/services/org/example1/dep1`);
 * gatehouse answers plain UUIDs, the same ids as 2.x, so a client can move between the two APIs
 * with the ids it holds. Both spellings of each path the product used are served
 * (`users/` and `user/{id}`, `orgs/` and `org/{id}`, plus the `organizations/` forms).
 */
import { listOrganizationIds, organizationResult } from './organization-routes.ts';
import { userEntity } from './representation.ts';
import { pathId, type ApiRoute } from './route.ts';
import { collectionResponse, entityResponse, idParams, listQuery } from './schemas.ts';
import { listUserIds } from './user-routes.ts';

const users = collectionResponse('users', 'A user id.');
const organizations = collectionResponse('organizations', 'An organization id.');
const TAG = 'Legacy (schema 1.2)';

export function legacyRoutes(): ApiRoute[] {
  const userList: ApiRoute = {
    method: 'GET',
    path: '/users/',
    operationId: 'legacyListUsers',
    summary: 'List user ids (schema 1.2)',
    description: 'Filters, exactMatch, maxResults and recursive as in 2.x. XML (<idlist>) unless JSON is asked for.',
    tag: TAG,
    querystring: listQuery(true),
    responses: { 200: { description: 'The ids of the matching users.', schema: users } },
    handle: listUserIds,
  };
  const userReads: ApiRoute[] = ['/users/:id', '/user/:id'].map((path, i) => ({
    method: 'GET',
    path,
    operationId: i === 0 ? 'legacyGetUser' : 'legacyGetUserSingular',
    summary: 'Read a user (schema 1.2)',
    tag: TAG,
    params: idParams,
    responses: { 200: { description: 'The user.', schema: entityResponse } },
    async handle(call) {
      return { body: { kind: 'entity', entity: userEntity(await call.deps.admin.users.get(pathId(call))) } };
    },
  }));
  const organizationLists: ApiRoute[] = ['/organizations/', '/orgs/'].map((path, i) => ({
    method: 'GET',
    path,
    operationId: i === 0 ? 'legacyListOrganizations' : 'legacyListOrgs',
    summary: 'List organization ids (schema 1.2)',
    tag: TAG,
    querystring: listQuery(false),
    responses: { 200: { description: 'The ids of the matching organizations.', schema: organizations } },
    handle: listOrganizationIds,
  }));
  const organizationReads: ApiRoute[] = ['/organizations/:id', '/org/:id'].map((path, i) => ({
    method: 'GET',
    path,
    operationId: i === 0 ? 'legacyGetOrganization' : 'legacyGetOrg',
    summary: 'Read an organization (schema 1.2)',
    tag: TAG,
    params: idParams,
    responses: { 200: { description: 'The organization.', schema: entityResponse } },
    async handle(call) {
      return organizationResult(call.deps, await call.deps.admin.organizations.get(pathId(call)));
    },
  }));
  return [userList, ...userReads, ...organizationLists, ...organizationReads];
}
