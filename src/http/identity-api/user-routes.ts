/**
 * `/{identity_rest}/services/{2.0|2.1}/users/…`: list, create, read, update and delete users
 * (CustomerID REST API 2.0/2.1), and their group membership, which the product keeps in SSO and
 * gatehouse exposes here as a sub-collection:
 *
 *   GET    users/{id}/groups/         the names of the user's groups
 *   PUT    users/{id}/groups/{name}   make the user a member (201 when added, 200 when already one)
 *   DELETE users/{id}/groups/{name}   end the membership (404 when the user was not a member)
 */
import { isUuid } from '../../lib/uuid.ts';
import { ApiError, invalidArguments } from './errors.ts';
import type { ApiResult } from './render.ts';
import { userEntity } from './representation.ts';
import { userFilters } from './wire-filters.ts';
import { newUser, userChanges } from './wire-input.ts';
import { listing, pathId, requestAttributes, type ApiCall, type ApiRoute } from './route.ts';
import { attributeQuery, collectionResponse, entityBody, entityResponse, idParams, listQuery, membershipParams } from './schemas.ts';

const users = collectionResponse('users', 'A user id.');
const groups = collectionResponse('groups', 'A group name.');

function ids(list: string[]): ApiResult {
  return { body: { kind: 'collection', collection: 'Users', ids: list } };
}

function affected(id: string, status = 200, location?: string): ApiResult {
  return { status, location, body: { kind: 'collection', collection: 'Users', ids: [id] } };
}

/** `?organization=ID&recursive=true` lists that organization's subtree (CustomerID: "Include users from the suborganizations"). */
export async function listUserIds(call: ApiCall): Promise<ApiResult> {
  const { query } = call;
  const { users } = call.deps.admin;
  const filters = userFilters(query);
  const { limit, check } = listing(call);
  const exactMatch = (query.exactMatch as boolean | undefined) ?? false;
  if (query.recursive === true && filters.organizationId !== undefined) {
    const { organizationId, ...rest } = filters;
    if (!isUuid(organizationId)) throw invalidArguments('organization must be an organization id (a UUID) when recursive is true');
    return ids(check(await users.listIds({ subtreeOf: organizationId.toLowerCase(), filters: rest, exactMatch, limit })));
  }
  // Ids only, as on the wire: a listing never loads the users' attributes (memory per request stays
  // bounded by the listing cap times an id, whatever the users hold).
  return ids(check(await users.listIds({ filters, exactMatch, limit })));
}

export function userRoutes(version: '2.0' | '2.1'): ApiRoute[] {
  const base = `/${version}/users`;
  const v = version.replace('.', '');
  return [
    {
      method: 'GET',
      path: `${base}/`,
      operationId: `listUsers${v}`,
      summary: 'List user ids, filtered by any attributes',
      description: 'Every query parameter other than exactMatch, maxResults and recursive filters by the attribute of that name (built-in or custom). status takes a name (enabled) or a code (1). With organization=ID and recursive=true, the users of the whole subtree.',
      tag: 'Users',
      querystring: listQuery(true),
      responses: { 200: { description: 'The ids of the matching users.', schema: users } },
      handle: listUserIds,
    },
    {
      method: 'POST',
      path: `${base}/`,
      operationId: `createUser${v}`,
      summary: 'Create a user',
      description: 'Attributes come from the query string and/or the body (JSON or a <User> document). login is required; password (body only, since the query parameter password is the API credential) is optional.',
      tag: 'Users',
      querystring: attributeQuery,
      body: entityBody('user'),
      responses: { 201: { description: 'Created; the collection holds the new id.', schema: users } },
      async handle(call) {
        const user = await call.deps.admin.users.create(await call.acting(), newUser(requestAttributes(call, 'user')));
        return affected(user.id, 201, `${call.path}${user.id}`);
      },
    },
    {
      method: 'GET',
      path: `${base}/:id`,
      operationId: `getUser${v}`,
      summary: 'Read a user',
      tag: 'Users',
      params: idParams,
      responses: { 200: { description: 'The user.', schema: entityResponse } },
      async handle(call) {
        return { body: { kind: 'entity', entity: userEntity(await call.deps.admin.users.get(pathId(call))) } };
      },
    },
    {
      method: 'PUT',
      path: `${base}/:id`,
      operationId: `updateUser${v}`,
      summary: 'Update a user',
      description: 'The attributes given replace the stored ones, an empty value deletes one, the others stay. A new password, or a status other than enabled, ends the user’s sessions and revokes their tokens.',
      tag: 'Users',
      params: idParams,
      querystring: attributeQuery,
      body: entityBody('user'),
      responses: { 200: { description: 'Updated; the collection holds the id.', schema: users } },
      async handle(call) {
        const id = pathId(call);
        const changes = userChanges(requestAttributes(call, 'user'), id);
        // An unknown id is 404 before anything else: the use case reads the user first.
        await call.deps.admin.users.update(await call.acting(), id, changes);
        return affected(id);
      },
    },
    {
      method: 'DELETE',
      path: `${base}/:id`,
      operationId: `deleteUser${v}`,
      summary: 'Delete a user',
      description: 'Ends the user’s sessions, revokes their tokens and deletes the user. It cannot be undone.',
      tag: 'Users',
      params: idParams,
      responses: { 200: { description: 'Deleted; the collection holds the id.', schema: users } },
      async handle(call) {
        const id = pathId(call);
        await call.deps.admin.users.delete(await call.acting(), id);
        return affected(id);
      },
    },
    {
      method: 'GET',
      path: `${base}/:id/groups/`,
      operationId: `listUserGroups${v}`,
      summary: 'List the groups a user belongs to',
      tag: 'Group membership',
      params: idParams,
      responses: { 200: { description: 'The names of the user’s groups.', schema: groups } },
      async handle(call) {
        const { users } = call.deps.admin;
        const user = await users.get(pathId(call));
        const names = (await users.groupsOf(user.id)).map((g) => g.name);
        return { body: { kind: 'collection', collection: 'Groups', ids: names } };
      },
    },
    {
      method: 'PUT',
      path: `${base}/:id/groups/:group`,
      operationId: `addUserToGroup${v}`,
      summary: 'Add a user to a group',
      description: 'Idempotent: 201 when the membership was created, 200 when the user already was a member. The group must exist (`gatehouse group create`).',
      tag: 'Group membership',
      params: membershipParams,
      responses: {
        200: { description: 'The user already was a member.', schema: groups },
        201: { description: 'The user is now a member.', schema: groups },
      },
      async handle(call) {
        const user = await call.deps.admin.users.get(pathId(call));
        const { group, changed } = await call.deps.admin.groups.addMember(await call.acting(), call.params.group!, user.id);
        return { status: changed ? 201 : 200, location: changed ? call.path : undefined, body: { kind: 'collection', collection: 'Groups', ids: [group.name] } };
      },
    },
    {
      method: 'DELETE',
      path: `${base}/:id/groups/:group`,
      operationId: `removeUserFromGroup${v}`,
      summary: 'Remove a user from a group',
      tag: 'Group membership',
      params: membershipParams,
      responses: { 200: { description: 'The membership ended.', schema: groups } },
      async handle(call) {
        const user = await call.deps.admin.users.get(pathId(call));
        const { group, changed } = await call.deps.admin.groups.removeMember(await call.acting(), call.params.group!, user.id);
        if (!changed) throw new ApiError(404, 'Entity not found', `the user is not a member of ${JSON.stringify(group.name)}`);
        return { body: { kind: 'collection', collection: 'Groups', ids: [group.name] } };
      },
    },
  ];
}
