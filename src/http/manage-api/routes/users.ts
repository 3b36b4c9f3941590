/**
 * `/users`: list (keyset by username, `?q=` over username, email and names, filters `status`,
 * `group`, `organization_id`), create, read, change, delete, set the password, enable, disable.
 * Each change calls the use case the CLI calls (src/manage/users.ts), which emits its audit event
 * naming the administrator (docs/management-api.md, "Users").
 */
import { USER_STATUSES, normalizeUsername, type User, type UserProfile } from '../../../domain/user.ts';
import { checkedAttributes } from '../../../identity/attributes.ts';
import type { UserChanges } from '../../../manage/users.ts';
import { listQuerySchema, pageSchema, toPage } from '../pagination.ts';
import { MANAGE_API_PATH } from '../../../manage/management-clients.ts';
import type { JsonSchema, ManageCall, ManageRoute } from '../route.ts';
import {
  attributeChangesSchema,
  attributesSchema,
  isoTime,
  nullableText,
  pageLimit,
  pageSearch,
  pathUser,
  stringCursor,
  text,
  uuidSchema,
} from './identity-shared.ts';

export const userSchema: JsonSchema = {
  type: 'object',
  required: ['id', 'username', 'status', 'created_at', 'updated_at'],
  properties: {
    id: { type: 'string' },
    username: { type: 'string' },
    email: { type: ['string', 'null'] },
    email_verified: { type: 'boolean', description: 'Whether the address was verified: a link followed or an administrator\'s explicit act (docs/email-verification.md). Never true without an address.' },
    given_name: { type: ['string', 'null'] },
    family_name: { type: ['string', 'null'] },
    name: { type: ['string', 'null'], description: 'Given and family name, when there is either.' },
    status: { type: 'string', enum: [...USER_STATUSES] },
    organization_id: { type: ['string', 'null'] },
    groups: { type: 'array', items: { type: 'string' }, description: "The names of the user's groups (single user only)." },
    attributes: { type: 'object', additionalProperties: { type: 'array', items: { type: 'string' } } },
    created_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
  },
};

export function userView(user: UserProfile & { attributes?: User['attributes'] }, groups?: string[]): Record<string, unknown> {
  const name = [user.givenName, user.familyName].filter(Boolean).join(' ');
  return {
    id: user.id,
    username: user.username,
    email: user.email ?? null,
    email_verified: user.emailVerified,
    given_name: user.givenName ?? null,
    family_name: user.familyName ?? null,
    name: name === '' ? null : name,
    status: user.status,
    organization_id: user.organizationId ?? null,
    ...(groups ? { groups } : {}),
    ...(user.attributes ? { attributes: user.attributes } : {}),
    created_at: isoTime(user.createdAt),
    updated_at: isoTime(user.updatedAt),
  };
}

async function fullView(call: ManageCall, user: User): Promise<Record<string, unknown>> {
  return userView(user, (await call.deps.admin.users.groupsOf(user.id)).map((g) => g.name));
}

const idParams: JsonSchema = { type: 'object', required: ['id'], properties: { id: uuidSchema } };

const passwordSchema: JsonSchema = { type: 'string', minLength: 1, maxLength: 4096, description: 'The password policy (docs/security.md, "Password policy"): at least GATEHOUSE_PASSWORD_MIN_LENGTH characters (8 by default), not a commonly used password, not the username or e-mail address; refused with 400 naming the rule.' };

/**
 * A route that queues a mail with a single-use link to the user's address (password reset, e-mail
 * verification): `{locale}` optional, 202 with the outbox message's id and the address.
 */
function mailedLinkRoute(r: { path: string; operationId: string; summary: string; description: string; send: (call: ManageCall, id: string, locale: string | undefined) => Promise<{ user: UserProfile; messageId: string }> }): ManageRoute {
  return {
    method: 'POST',
    path: r.path,
    operationId: r.operationId,
    summary: r.summary,
    description: r.description,
    tag: 'Users',
    access: 'write',
    params: idParams,
    body: { type: 'object', additionalProperties: false, properties: { locale: { type: 'string', enum: ['en', 'fi', 'sv'], description: 'The mail\'s language (default en).' } } },
    bodyOptional: true,
    responses: {
      202: {
        description: 'The mail is queued in the outbox.',
        schema: { type: 'object', required: ['message_id', 'to'], properties: { message_id: { type: 'string', description: 'The outbox message (GET /outbox/{id}).' }, to: { type: 'string' } } },
      },
    },
    async handle(call) {
      const user = await pathUser(call);
      const { locale } = call.body as { locale?: string };
      const sent = await r.send(call, user.id, locale);
      return { status: 202, body: { message_id: sent.messageId, to: sent.user.email } };
    },
  };
}

export const userRoutes: ManageRoute[] = [
  {
    method: 'GET',
    path: '/users',
    operationId: 'listUsers',
    summary: 'List users',
    description: 'In username order (case-insensitive), paged by a keyset cursor. `q` matches a substring of the username, email, given or family name, case-insensitively.',
    tag: 'Users',
    access: 'read',
    querystring: listQuerySchema('the username, email, given or family name', {
        status: { type: 'string', enum: [...USER_STATUSES] },
        group: { type: 'string', minLength: 1, maxLength: 255, description: 'Only members of the group of this name.' },
        organization_id: { type: 'string', pattern: '^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$', description: 'Only the users of the organization with this id.' },
    }),
    responses: { 200: { description: 'A page of users (without groups and custom attributes).', schema: pageSchema(userSchema) } },
    async handle(call) {
      const limit = pageLimit(call);
      const after = stringCursor(call);
      const rows = await call.deps.admin.users.page({
        after,
        limit,
        q: pageSearch(call),
        status: call.query.status as User['status'] | undefined,
        group: typeof call.query.group === 'string' ? call.query.group : undefined,
        organizationId: typeof call.query.organization_id === 'string' ? call.query.organization_id.toLowerCase() : undefined,
      });
      return { body: toPage(rows, limit, (u) => normalizeUsername(u.username), (u) => userView(u)) };
    },
  },
  {
    method: 'POST',
    path: '/users',
    operationId: 'createUser',
    summary: 'Create a user',
    description: 'Without `password` the user cannot sign in with one until it is set. `groups` must name existing groups.',
    tag: 'Users',
    access: 'write',
    body: {
      type: 'object',
      required: ['username'],
      additionalProperties: false,
      properties: {
        username: text,
        password: passwordSchema,
        email: text,
        email_verified: { type: 'boolean', description: 'true: the administrator vouches for the address (docs/email-verification.md); default false.' },
        given_name: text,
        family_name: text,
        status: { type: 'string', enum: ['enabled', 'disabled'] },
        organization_id: text,
        groups: { type: 'array', maxItems: 100, uniqueItems: true, items: text },
        attributes: attributesSchema,
      },
    },
    responses: { 201: { description: 'The new user.', schema: userSchema } },
    async handle(call) {
      const body = call.body as Record<string, unknown>;
      const user = await call.deps.admin.users.create(call.acting, {
        username: body.username as string,
        password: body.password as string | undefined,
        email: body.email as string | undefined,
        emailVerified: body.email_verified as boolean | undefined,
        givenName: body.given_name as string | undefined,
        familyName: body.family_name as string | undefined,
        status: body.status as User['status'] | undefined,
        organizationId: body.organization_id as string | undefined,
        groups: body.groups as string[] | undefined,
        attributes: checkedNewAttributes(body.attributes),
      });
      return { status: 201, body: await fullView(call, user), headers: { location: `${MANAGE_API_PATH}/users/${user.id}` } };
    },
  },
  {
    method: 'GET',
    path: '/users/:id',
    operationId: 'getUser',
    summary: 'Read a user, with the names of their groups',
    tag: 'Users',
    access: 'read',
    params: idParams,
    responses: { 200: { description: 'The user.', schema: userSchema } },
    async handle(call) {
      return { body: await fullView(call, await pathUser(call)) };
    },
  },
  {
    method: 'PATCH',
    path: '/users/:id',
    operationId: 'updateUser',
    summary: 'Change a user',
    description: 'The members given replace the stored values (null clears an optional one); for `attributes`, a list replaces that attribute and null deletes it, the others stay. A changed `email` is unverified unless `email_verified: true` comes with it (docs/email-verification.md). The status and the password have their own routes.',
    tag: 'Users',
    access: 'write',
    params: idParams,
    body: {
      type: 'object',
      minProperties: 1,
      additionalProperties: false,
      properties: { username: text, email: nullableText, email_verified: { type: 'boolean' }, given_name: nullableText, family_name: nullableText, organization_id: nullableText, attributes: attributeChangesSchema },
    },
    responses: { 200: { description: 'The user as changed.', schema: userSchema } },
    async handle(call) {
      const user = await pathUser(call);
      const body = call.body as Record<string, unknown>;
      const changes: UserChanges = {
        username: body.username as string | undefined,
        email: body.email as string | null | undefined,
        emailVerified: body.email_verified as boolean | undefined,
        givenName: body.given_name as string | null | undefined,
        familyName: body.family_name as string | null | undefined,
        organizationId: body.organization_id as string | null | undefined,
        attributes: body.attributes as UserChanges['attributes'],
      };
      const updated = await call.deps.admin.users.update(call.acting, user.id, changes);
      return { body: await fullView(call, updated) };
    },
  },
  {
    method: 'DELETE',
    path: '/users/:id',
    operationId: 'deleteUser',
    summary: 'Delete a user',
    description: 'Ends their SSO sessions and revokes their tokens in the same unit of work. It cannot be undone. Deleting the last enabled administrator is refused (409).',
    tag: 'Users',
    access: 'write',
    params: idParams,
    responses: { 204: { description: 'Deleted.' } },
    async handle(call) {
      const user = await pathUser(call);
      await call.deps.admin.users.delete(call.acting, user.id);
      return { status: 204 };
    },
  },
  {
    method: 'PUT',
    path: '/users/:id/password',
    operationId: 'setUserPassword',
    summary: "Set a user's password",
    description: "Also ends the user's SSO sessions and revokes their tokens: a password is reset because the old one may be known to someone else.",
    tag: 'Users',
    access: 'write',
    params: idParams,
    body: { type: 'object', required: ['password'], additionalProperties: false, properties: { password: passwordSchema } },
    responses: { 204: { description: 'The password is set.' } },
    async handle(call) {
      const user = await pathUser(call);
      const password = (call.body as { password: string }).password;
      await call.deps.admin.users.setPassword(call.acting, user.id, password);
      return { status: 204 };
    },
  },
  mailedLinkRoute({
    path: '/users/:id/password-reset',
    operationId: 'sendUserPasswordReset',
    summary: 'Send a user a password reset link',
    description:
      "Instead of setting a password: queues a mail to the user's e-mail address with a single-use link (GATEHOUSE_PASSWORD_RESET_LIFETIME) where the user chooses one (docs/password-reset.md). Nothing changes until the link is used. 409 while mail is off; 400 when the user has no e-mail address or is not enabled.",
    send: (call, id, locale) => call.deps.admin.users.sendPasswordReset(call.acting, id, { locale }),
  }),
  mailedLinkRoute({
    path: '/users/:id/email-verification',
    operationId: 'sendUserEmailVerification',
    summary: 'Send a user an e-mail verification link',
    description:
      "Queues a mail to the user's e-mail address with a single-use link (GATEHOUSE_EMAIL_VERIFICATION_LIFETIME); the address is verified when the user follows it (docs/email-verification.md). 409 while mail is off; 400 when the user has no e-mail address, it is verified already, or the user is not enabled.",
    send: (call, id, locale) => call.deps.admin.users.sendEmailVerification(call.acting, id, { locale }),
  }),
  ...(['enable', 'disable'] as const).map(
    (verb): ManageRoute => ({
      method: 'POST',
      path: `/users/:id/${verb}`,
      operationId: `${verb}User`,
      summary: verb === 'enable' ? 'Enable a user: they may sign in again' : "Disable a user: refuse their sign-ins, end their sessions and revoke their tokens",
      tag: 'Users',
      access: 'write',
      params: idParams,
      responses: { 200: { description: 'The user as changed.', schema: userSchema } },
      async handle(call) {
        const user = await pathUser(call);
        const status = verb === 'enable' ? 'enabled' : 'disabled';
        const changed = await call.deps.admin.users.setStatus(call.acting, user.id, status);
        return { body: await fullView(call, changed) };
      },
    }),
  ),
];

/** New custom attributes, checked by the use case's rules (names, values, counts). */
function checkedNewAttributes(value: unknown): User['attributes'] | undefined {
  if (value === undefined) return undefined;
  return checkedAttributes(value as Record<string, string[]>);
}
