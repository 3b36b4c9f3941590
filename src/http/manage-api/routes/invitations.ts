/**
 * `/invitations` (docs/invitations.md; docs/management-api.md): invite someone by e-mail address
 * (the mail is queued with the invitation; 409 when mail is off), list them newest first by
 * status, resend (a new link, the old one dead) and revoke. Never the link or its hash: the
 * token is only in the mail. Readers may list; the rest are changes.
 */
import { INVITATION_STATUSES } from '../../../domain/invitation.ts';
import type { InvitationView } from '../../../manage/invitations.ts';
import { MAIL_LOCALES } from '../../../oauth/outbox/mail.ts';
import { MANAGE_API_PATH } from '../../../manage/management-clients.ts';
import { decodeCursor, listQuerySchema, pageSchema, toPage } from '../pagination.ts';
import type { JsonSchema, ManageRoute } from '../route.ts';
import { isoTime, pageLimit } from './identity-shared.ts';

const idSchema: JsonSchema = { type: 'string', maxLength: 64, pattern: '^[0-9a-fA-F-]+$', description: 'The invitation id (a UUID).' };
const idParams: JsonSchema = { type: 'object', required: ['id'], properties: { id: idSchema } };
const text = (description: string): JsonSchema => ({ type: ['string', 'null'], maxLength: 256, description });

export const invitationSchema: JsonSchema = {
  type: 'object',
  required: ['id', 'email', 'given_name', 'family_name', 'organization_id', 'status', 'locale', 'invited_by', 'created_at', 'expires_at', 'ended_at', 'user_id'],
  properties: {
    id: idSchema,
    email: { type: 'string', description: 'The invited address; the account it makes has it as username and e-mail address.' },
    given_name: text('Given name of the account it makes.'),
    family_name: text('Family name of the account it makes.'),
    organization_id: text('The organization the account is made in.'),
    status: { type: 'string', enum: [...INVITATION_STATUSES], description: '`pending`: the link works until `expires_at`; `accepted`: the account `user_id` was made; `revoked`; `expired`.' },
    locale: { type: 'string', enum: [...MAIL_LOCALES], description: 'The language of the mail and its page.' },
    invited_by: { type: 'string', description: 'Who invited or last resent it: front end and caller (`manage-api:<user id>`, `cli:<OS user>`).' },
    created_at: { type: 'string', format: 'date-time' },
    expires_at: { type: 'string', format: 'date-time', description: "When the current link stops working (a resend moves it)." },
    ended_at: { type: ['string', 'null'], format: 'date-time', description: 'When it was accepted, revoked or retired as expired.' },
    user_id: text('The account it made (null until accepted, or after that account was deleted).'),
  },
};

const sentSchema: JsonSchema = {
  type: 'object',
  required: ['invitation', 'message_id'],
  properties: { invitation: invitationSchema, message_id: { type: 'string', description: 'The outbox message of its mail (GET /outbox/{id}).' } },
};

export function invitationView(i: InvitationView): Record<string, unknown> {
  return {
    id: i.id,
    email: i.email,
    given_name: i.givenName ?? null,
    family_name: i.familyName ?? null,
    organization_id: i.organizationId ?? null,
    status: i.status,
    locale: i.locale,
    invited_by: i.invitedBy,
    created_at: isoTime(i.createdAt),
    expires_at: isoTime(i.expiresAt),
    ended_at: i.endedAt === undefined ? null : isoTime(i.endedAt),
    user_id: i.userId ?? null,
  };
}

/** The cursor's key `{c: created_at, i: id}`. */
function isInvitationKey(key: unknown): key is { c: number; i: string } {
  const k = key as { c?: unknown; i?: unknown } | null;
  return typeof k === 'object' && k !== null && Number.isSafeInteger(k.c) && typeof k.i === 'string' && /^[0-9a-fA-F-]{1,64}$/.test(k.i);
}

export const invitationRoutes: ManageRoute[] = [
  {
    method: 'POST',
    path: '/invitations',
    operationId: 'createInvitation',
    summary: 'Invite someone by e-mail address',
    description:
      'Queues the invitation mail with the invitation, in one transaction: a link to choose a password, valid for GATEHOUSE_INVITATION_LIFETIME. 409 when mail is not configured, when an account with the address exists, or when a pending invitation to it exists (resend that one).',
    tag: 'Invitations',
    access: 'write',
    body: {
      type: 'object',
      required: ['email'],
      additionalProperties: false,
      properties: {
        email: { type: 'string', minLength: 1, maxLength: 256 },
        given_name: { type: 'string', maxLength: 256 },
        family_name: { type: 'string', maxLength: 256 },
        organization_id: { type: 'string', maxLength: 64 },
        locale: { type: 'string', enum: [...MAIL_LOCALES], description: 'The language of the mail and its page (default en).' },
      },
    },
    responses: { 201: { description: 'Invited; the mail is queued.', schema: sentSchema } },
    async handle(call) {
      const body = call.body as { email: string; given_name?: string; family_name?: string; organization_id?: string; locale?: string };
      const sent = await call.deps.admin.invitations.invite(call.acting, { email: body.email, givenName: body.given_name, familyName: body.family_name, organizationId: body.organization_id, locale: body.locale });
      return { status: 201, body: { invitation: invitationView(sent.invitation), message_id: sent.messageId }, headers: { location: `${MANAGE_API_PATH}/invitations/${sent.invitation.id}` } };
    },
  },
  {
    method: 'GET',
    path: '/invitations',
    operationId: 'listInvitations',
    summary: 'List the invitations, newest first',
    tag: 'Invitations',
    access: 'read',
    querystring: listQuerySchema(undefined, { status: { type: 'string', enum: [...INVITATION_STATUSES], description: 'Only invitations in this status now.' } }),
    responses: { 200: { description: 'A page of invitations.', schema: pageSchema(invitationSchema) } },
    async handle(call) {
      const limit = pageLimit(call);
      const key = decodeCursor(call.query.cursor, isInvitationKey);
      const rows = await call.deps.admin.invitations.page({ status: call.query.status as string | undefined, after: key && { createdAt: key.c, id: key.i }, limit });
      return { body: toPage(rows, limit, (i) => ({ c: i.createdAt, i: i.id }), invitationView) };
    },
  },
  {
    method: 'GET',
    path: '/invitations/:id',
    operationId: 'getInvitation',
    summary: 'One invitation',
    tag: 'Invitations',
    access: 'read',
    params: idParams,
    responses: { 200: { description: 'The invitation.', schema: invitationSchema } },
    async handle(call) {
      return { body: invitationView(await call.deps.admin.invitations.get(call.params.id!)) };
    },
  },
  {
    method: 'POST',
    path: '/invitations/:id/resend',
    operationId: 'resendInvitation',
    summary: 'Resend a pending invitation',
    description: 'A new link with a new lifetime, in a new mail; the old link stops working at once. Also for a pending invitation past its expiry. 409 when it was accepted or revoked, or mail is off.',
    tag: 'Invitations',
    access: 'write',
    params: idParams,
    responses: { 200: { description: 'Resent; the mail is queued.', schema: sentSchema } },
    async handle(call) {
      const sent = await call.deps.admin.invitations.resend(call.acting, call.params.id!);
      return { body: { invitation: invitationView(sent.invitation), message_id: sent.messageId } };
    },
  },
  {
    method: 'DELETE',
    path: '/invitations/:id',
    operationId: 'revokeInvitation',
    summary: 'Revoke a pending invitation',
    description: 'Its link stops working; the invitation stays in the list as `revoked`. 409 when it is not pending.',
    tag: 'Invitations',
    access: 'write',
    params: idParams,
    responses: { 200: { description: 'The revoked invitation.', schema: invitationSchema } },
    async handle(call) {
      return { body: invitationView(await call.deps.admin.invitations.revoke(call.acting, call.params.id!)) };
    },
  },
];
