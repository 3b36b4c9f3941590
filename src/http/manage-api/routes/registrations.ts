/**
 * Pending self-registrations (docs/registration.md, "Approval"; docs/management-api.md): listed as
 * `GET /users?status=pending` (AM66); approved or rejected here. Each calls the use case the CLI
 * and the console call (src/manage/registrations.ts), which emits its audit event naming the
 * administrator. 409 when the user is not pending (approved, rejected or otherwise decided meanwhile).
 */
import type { JsonSchema, ManageRoute } from '../route.ts';
import { pathUser, uuidSchema } from './identity-shared.ts';
import { userSchema, userView } from './users.ts';

const idParams: JsonSchema = { type: 'object', required: ['id'], properties: { id: uuidSchema } };
const locale: JsonSchema = { type: 'string', enum: ['en', 'fi', 'sv'], description: 'The mail\'s language (default: the one the user registered in, else en).' };
const decided = (description: string): JsonSchema => ({
  type: 'object',
  required: ['user', 'message_id'],
  properties: { user: userSchema, message_id: { type: ['string', 'null'], description: `${description} (GET /outbox/{id}); null when none was queued (mail off, no e-mail address, or not asked for).` } },
});

export const registrationRoutes: ManageRoute[] = [
  {
    method: 'POST',
    path: '/users/:id/approve',
    operationId: 'approveRegistration',
    summary: 'Approve a pending registration: the user may sign in, and is mailed that the account is ready',
    description: 'Only for a user whose status is `pending` (GATEHOUSE_REGISTRATION_APPROVAL; list them with `GET /users?status=pending`): sets it to `enabled` and queues the "your account is ready" mail in the same unit of work. 409 when the user is not pending.',
    tag: 'Users',
    access: 'write',
    params: idParams,
    body: { type: 'object', additionalProperties: false, properties: { locale } },
    bodyOptional: true,
    responses: { 200: { description: 'The user as approved, and the mail queued.', schema: decided('The "your account is ready" mail') } },
    async handle(call) {
      const user = await pathUser(call);
      const { locale: language } = call.body as { locale?: string };
      const approved = await call.deps.admin.registrations.approve(call.acting, user.id, { locale: language });
      return { body: { user: userView(approved.user), message_id: approved.messageId ?? null } };
    },
  },
  {
    method: 'POST',
    path: '/users/:id/reject',
    operationId: 'rejectRegistration',
    summary: 'Reject a pending registration: the account is deleted',
    description: 'Only for a user whose status is `pending`: deletes the user and, unless `notify` is false, queues a mail saying the registration was not approved, in the same unit of work. 409 when the user is not pending.',
    tag: 'Users',
    access: 'write',
    params: idParams,
    body: { type: 'object', additionalProperties: false, properties: { locale, notify: { type: 'boolean', description: 'Mail the user that the registration was not approved (default true).' } } },
    bodyOptional: true,
    responses: { 200: { description: 'The user as it was before its deletion, and the mail queued.', schema: decided('The "not approved" mail') } },
    async handle(call) {
      const user = await pathUser(call);
      const { locale: language, notify } = call.body as { locale?: string; notify?: boolean };
      const rejected = await call.deps.admin.registrations.reject(call.acting, user.id, { locale: language, notify });
      return { body: { user: userView(rejected.user), message_id: rejected.messageId ?? null } };
    },
  },
];
