/**
 * `/groups`: list (keyset by name, `?q=`), create, read, delete, and the members (keyset by
 * username), added and removed by user id. The administrators group (GATEHOUSE_ADMIN_GROUP)
 * cannot lose its last member nor be deleted through the API: that would leave nobody able to
 * manage gatehouse but someone with shell access (the rule: src/identity/administrators.ts;
 * docs/management-api.md, "Groups").
 */
import type { Group } from '../../../domain/group.ts';
import { normalizeUsername } from '../../../domain/user.ts';
import { notFound } from '../errors.ts';
import { listQuerySchema, pageSchema, toPage } from '../pagination.ts';
import { MANAGE_API_PATH } from '../../../manage/management-clients.ts';
import type { JsonSchema, ManageRoute } from '../route.ts';
import { isoTime, pageLimit, pageSearch, pathUser, stringCursor, text, uuidSchema } from './identity-shared.ts';

export const groupSchema: JsonSchema = {
  type: 'object',
  required: ['name', 'description', 'created_at'],
  properties: { name: { type: 'string' }, description: { type: ['string', 'null'] }, created_at: { type: 'string', format: 'date-time' } },
};

const memberSchema: JsonSchema = { type: 'object', required: ['id', 'username'], properties: { id: { type: 'string' }, username: { type: 'string' } } };

export function groupView(group: Group): Record<string, unknown> {
  return { name: group.name, description: group.description ?? null, created_at: isoTime(group.createdAt) };
}

const nameParams: JsonSchema = { type: 'object', required: ['name'], properties: { name: { type: 'string', minLength: 1, maxLength: 255 } } };
const memberParams: JsonSchema = { type: 'object', required: ['name', 'user_id'], properties: { name: { type: 'string', minLength: 1, maxLength: 255 }, user_id: uuidSchema } };

export const groupRoutes: ManageRoute[] = [
  {
    method: 'GET',
    path: '/groups',
    operationId: 'listGroups',
    summary: 'List groups',
    description: 'In name order (case-insensitive), paged by a keyset cursor; `q` matches a substring of the name.',
    tag: 'Groups',
    access: 'read',
    querystring: listQuerySchema('the name'),
    responses: { 200: { description: 'A page of groups.', schema: pageSchema(groupSchema) } },
    async handle(call) {
      const limit = pageLimit(call);
      const rows = await call.deps.admin.groups.page({ after: stringCursor(call), limit, q: pageSearch(call) });
      return { body: toPage(rows, limit, (g) => normalizeUsername(g.name), groupView) };
    },
  },
  {
    method: 'POST',
    path: '/groups',
    operationId: 'createGroup',
    summary: 'Create a group',
    description: 'Names are unique case-insensitively: 409 for a name taken.',
    tag: 'Groups',
    access: 'write',
    body: { type: 'object', required: ['name'], additionalProperties: false, properties: { name: text, description: text } },
    responses: { 201: { description: 'The new group.', schema: groupSchema } },
    async handle(call) {
      const body = call.body as { name: string; description?: string };
      const group = await call.deps.admin.groups.create(call.acting, body);
      return { status: 201, body: groupView(group), headers: { location: `${MANAGE_API_PATH}/groups/${encodeURIComponent(group.name)}` } };
    },
  },
  {
    method: 'GET',
    path: '/groups/:name',
    operationId: 'getGroup',
    summary: 'Read a group',
    tag: 'Groups',
    access: 'read',
    params: nameParams,
    responses: { 200: { description: 'The group.', schema: groupSchema } },
    async handle(call) {
      return { body: groupView(await call.deps.admin.groups.get(call.params.name ?? '')) };
    },
  },
  {
    method: 'DELETE',
    path: '/groups/:name',
    operationId: 'deleteGroup',
    summary: 'Delete a group and its memberships (the users stay)',
    description: 'The administrators group (GATEHOUSE_ADMIN_GROUP) cannot be deleted: 409.',
    tag: 'Groups',
    access: 'write',
    params: nameParams,
    responses: { 204: { description: 'Deleted.' } },
    async handle(call) {
      await call.deps.admin.groups.delete(call.acting, call.params.name ?? '');
      return { status: 204 };
    },
  },
  {
    method: 'GET',
    path: '/groups/:name/members',
    operationId: 'listGroupMembers',
    summary: "List a group's members",
    description: 'In username order (case-insensitive), paged by a keyset cursor; `q` matches a substring of the username.',
    tag: 'Groups',
    access: 'read',
    params: nameParams,
    querystring: listQuerySchema('the username'),
    responses: { 200: { description: 'A page of members.', schema: pageSchema(memberSchema) } },
    async handle(call) {
      const limit = pageLimit(call);
      const rows = await call.deps.admin.groups.memberPage(call.params.name ?? '', { after: stringCursor(call), limit, q: pageSearch(call) });
      return { body: toPage(rows, limit, (u) => normalizeUsername(u.username), (u) => ({ id: u.id, username: u.username })) };
    },
  },
  {
    method: 'PUT',
    path: '/groups/:name/members/:user_id',
    operationId: 'addGroupMember',
    summary: 'Add a user to a group',
    description: 'Idempotent: 201 when the user became a member, 200 when they already were one.',
    tag: 'Groups',
    access: 'write',
    params: memberParams,
    responses: {
      200: { description: 'The user already was a member.', schema: memberSchema },
      201: { description: 'The user is now a member.', schema: memberSchema },
    },
    async handle(call) {
      const user = await pathUser(call, 'user_id');
      const { changed } = await call.deps.admin.groups.addMember(call.acting, call.params.name ?? '', user.id);
      return { status: changed ? 201 : 200, body: { id: user.id, username: user.username } };
    },
  },
  {
    method: 'DELETE',
    path: '/groups/:name/members/:user_id',
    operationId: 'removeGroupMember',
    summary: 'Remove a user from a group',
    description: 'Removing the last enabled member of the administrators group (GATEHOUSE_ADMIN_GROUP) is refused (409). 404 when the user is not a member.',
    tag: 'Groups',
    access: 'write',
    params: memberParams,
    responses: { 204: { description: 'The membership ended.' } },
    async handle(call) {
      const user = await pathUser(call, 'user_id');
      // The rule that keeps an administrator runs in removeMember's unit of work.
      const { group, changed } = await call.deps.admin.groups.removeMember(call.acting, call.params.name ?? '', user.id);
      if (!changed) throw notFound(`${user.username} is not a member of ${JSON.stringify(group.name)}`);
      return { status: 204 };
    },
  },
];
