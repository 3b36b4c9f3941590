/**
 * `/users/{id}/consents`: the third-party clients a user consented to (issue 13, item 4), and
 * withdrawing one, which also spends the client's codes and revokes its tokens for the user
 * (src/oauth/consents.ts withdrawConsent).
 */
import type { Consent } from '../../../domain/consent.ts';
import { notFound } from '../errors.ts';
import { decodeCursor, listQuerySchema, pageSchema, toPage } from '../pagination.ts';
import type { JsonSchema, ManageRoute } from '../route.ts';
import { isoTime, pageLimit, pathUser, uuidSchema } from './identity-shared.ts';

export const consentSchema: JsonSchema = {
  type: 'object',
  required: ['client_id', 'scope', 'granted_at', 'updated_at'],
  properties: {
    client_id: { type: 'string' },
    scope: { type: 'array', items: { type: 'string' }, description: 'The consented scope values (audiences included).' },
    granted_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
  },
};

export function consentView(consent: Consent): Record<string, unknown> {
  return { client_id: consent.clientId, scope: [...consent.scope], granted_at: isoTime(consent.grantedAt), updated_at: isoTime(consent.updatedAt) };
}

export const consentRoutes: ManageRoute[] = [
  {
    method: 'GET',
    path: '/users/:id/consents',
    operationId: 'listUserConsents',
    summary: "List a user's consents, by client_id",
    tag: 'Consents',
    access: 'read',
    params: { type: 'object', required: ['id'], properties: { id: uuidSchema } },
    querystring: listQuerySchema(undefined),
    responses: { 200: { description: 'A page of consents.', schema: pageSchema(consentSchema) } },
    async handle(call) {
      const user = await pathUser(call);
      const limit = pageLimit(call);
      const after = decodeCursor(call.query.cursor, (key): key is string => typeof key === 'string' && key.length <= 1024);
      const rows = await call.deps.admin.consents.page(user.id, { after, limit });
      return { body: toPage(rows, limit, (c) => c.clientId, consentView) };
    },
  },
  {
    method: 'DELETE',
    path: '/users/:id/consents/:client_id',
    operationId: 'withdrawUserConsent',
    summary: "Withdraw a user's consent to a client",
    description: "Deletes the consent, spends the client's unredeemed codes for the user and revokes every token the client holds for the user, in one unit of work. 404 when there is no such consent.",
    tag: 'Consents',
    access: 'write',
    params: { type: 'object', required: ['id', 'client_id'], properties: { id: uuidSchema, client_id: { type: 'string', minLength: 1, maxLength: 255 } } },
    responses: { 204: { description: 'Withdrawn.' } },
    async handle(call) {
      const user = await pathUser(call);
      const clientId = call.params.client_id ?? '';
      // Looked up first only to answer 404 without revoking a first-party client's tokens (which
      // has no consent); withdrawing is idempotent, so a withdrawal racing this one is harmless.
      if (!(await call.deps.admin.consents.find(user.id, clientId))) throw notFound(`user ${user.id} has no consent for client ${JSON.stringify(clientId.slice(0, 80))}`);
      await call.deps.admin.consents.withdraw(call.acting, user.id, clientId);
      return { status: 204 };
    },
  },
];
