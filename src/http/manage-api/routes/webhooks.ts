/**
 * `/webhooks` (docs/webhooks.md; docs/management-api.md): webhook endpoints — register (the
 * secret is in the answer once), list, change, delete, rotate the secret — and each endpoint's
 * delivery log with redelivery. Event types are names from the audit catalogue (the same
 * registry `/audit-events` filters by), or `*`. Readers may list; the rest are changes.
 */
import { OUTBOX_STATUSES, type OutboxStatus } from '../../../domain/outbox.ts';
import { ALL_EVENTS, WEBHOOK_DESCRIPTION_LENGTH, WEBHOOK_EVENTS_MAX, WEBHOOK_URL_LENGTH, type WebhookEndpoint } from '../../../domain/webhook.ts';
import { MANAGE_API_PATH } from '../../../manage/management-clients.ts';
import type { OutboxEnvelope } from '../../../manage/outbox.ts';
import { AUDIT_EVENT_NAMES } from '../../../observability/audit-catalog.ts';
import { notFound } from '../errors.ts';
import { decodeCursor, listQuerySchema, pageSchema, toPage } from '../pagination.ts';
import type { JsonSchema, ManageRoute } from '../route.ts';
import { isoTime, pageLimit } from './identity-shared.ts';
import { isOutboxKey, outboxMessageSchema, outboxMessageView } from './outbox.ts';

const idSchema: JsonSchema = { type: 'string', maxLength: 64, pattern: '^[0-9a-fA-F-]+$', description: 'The endpoint id (a UUID).' };
const idParams: JsonSchema = { type: 'object', required: ['id'], properties: { id: idSchema } };
const messageParams: JsonSchema = { type: 'object', required: ['id', 'message_id'], properties: { id: idSchema, message_id: { ...idSchema, description: 'The delivery: its outbox message id, which is the `webhook-id` header.' } } };

const eventsSchema: JsonSchema = {
  type: 'array',
  minItems: 1,
  maxItems: WEBHOOK_EVENTS_MAX,
  items: { type: 'string', enum: [ALL_EVENTS, ...AUDIT_EVENT_NAMES] },
  description: 'Audit event names (docs/webhooks.md, "Event catalogue"), or `["*"]` for every event, those added later too.',
};
const urlSchema: JsonSchema = { type: 'string', minLength: 1, maxLength: WEBHOOK_URL_LENGTH, description: 'https (http only to a loopback host with GATEHOUSE_OUTBOUND_LOOPBACK); no private address unless GATEHOUSE_OUTBOUND_PRIVATE.' };
const descriptionSchema: JsonSchema = { type: 'string', maxLength: WEBHOOK_DESCRIPTION_LENGTH };

export const webhookSchema: JsonSchema = {
  type: 'object',
  required: ['id', 'url', 'description', 'events', 'enabled', 'created_at', 'updated_at', 'previous_secret_valid_until'],
  properties: {
    id: idSchema,
    url: { type: 'string' },
    description: { type: 'string' },
    events: { type: 'array', items: { type: 'string' } },
    enabled: { type: 'boolean', description: 'A disabled endpoint is sent nothing; its pending deliveries die (redeliver them after enabling it).' },
    created_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
    previous_secret_valid_until: { type: ['string', 'null'], format: 'date-time', description: 'After a rotation, the previous secret signs too until then.' },
  },
};

const withSecretSchema: JsonSchema = {
  type: 'object',
  required: ['endpoint', 'secret'],
  properties: { endpoint: webhookSchema, secret: { type: 'string', description: 'The signing secret (`whsec_…`), shown this once: the store keeps it sealed.' } },
};

const deliverySchema: JsonSchema = {
  ...outboxMessageSchema,
  required: [...(outboxMessageSchema.required as string[]), 'response_status'],
  properties: { ...(outboxMessageSchema.properties as Record<string, JsonSchema>), response_status: { type: ['integer', 'null'], description: "The endpoint's HTTP status at the last attempt it answered." } },
};

export function webhookView(e: WebhookEndpoint): Record<string, unknown> {
  return {
    id: e.id,
    url: e.url,
    description: e.description,
    events: e.events === ALL_EVENTS ? [ALL_EVENTS] : [...e.events],
    enabled: e.enabled,
    created_at: isoTime(e.createdAt),
    updated_at: isoTime(e.updatedAt),
    previous_secret_valid_until: e.previousSecretUntil === undefined ? null : isoTime(e.previousSecretUntil),
  };
}

export function deliveryView(m: OutboxEnvelope): Record<string, unknown> {
  return { ...outboxMessageView(m), response_status: m.responseStatus ?? null };
}

interface WebhookBody {
  url?: string;
  description?: string;
  events?: string[];
  enabled?: boolean;
}

export const webhookRoutes: ManageRoute[] = [
  {
    method: 'POST',
    path: '/webhooks',
    operationId: 'createWebhook',
    summary: 'Register a webhook endpoint',
    description: 'The answer holds the signing secret, once. 400 for a URL the outbound rules refuse (not https, a loopback or private address not allowed), an unknown event type or an oversized field.',
    tag: 'Webhooks',
    access: 'write',
    body: { type: 'object', required: ['url', 'events'], additionalProperties: false, properties: { url: urlSchema, description: descriptionSchema, events: eventsSchema, enabled: { type: 'boolean', description: 'Default true.' } } },
    responses: { 201: { description: 'Registered.', schema: withSecretSchema } },
    async handle(call) {
      const body = call.body as WebhookBody & { url: string; events: string[] };
      const made = await call.deps.admin.webhooks.create(call.acting, { url: body.url, description: body.description, events: body.events, enabled: body.enabled });
      return { status: 201, body: { endpoint: webhookView(made.endpoint), secret: made.secret }, headers: { location: `${MANAGE_API_PATH}/webhooks/${made.endpoint.id}` } };
    },
  },
  {
    method: 'GET',
    path: '/webhooks',
    operationId: 'listWebhooks',
    summary: 'List the webhook endpoints, oldest first',
    tag: 'Webhooks',
    access: 'read',
    responses: { 200: { description: 'Every endpoint (never a secret).', schema: { type: 'object', required: ['items'], properties: { items: { type: 'array', items: webhookSchema } } } } },
    async handle(call) {
      return { body: { items: (await call.deps.admin.webhooks.list()).map(webhookView) } };
    },
  },
  {
    method: 'GET',
    path: '/webhooks/:id',
    operationId: 'getWebhook',
    summary: 'One webhook endpoint',
    tag: 'Webhooks',
    access: 'read',
    params: idParams,
    responses: { 200: { description: 'The endpoint.', schema: webhookSchema } },
    async handle(call) {
      const endpoint = await call.deps.admin.webhooks.get(call.params.id!);
      if (endpoint === undefined) throw notFound(`no webhook endpoint ${call.params.id}`);
      return { body: webhookView(endpoint) };
    },
  },
  {
    method: 'PATCH',
    path: '/webhooks/:id',
    operationId: 'updateWebhook',
    summary: 'Change a webhook endpoint',
    description: 'Only the members given change. Pending deliveries go to the URL as it is when each is sent.',
    tag: 'Webhooks',
    access: 'write',
    params: idParams,
    body: { type: 'object', additionalProperties: false, minProperties: 1, properties: { url: urlSchema, description: descriptionSchema, events: eventsSchema, enabled: { type: 'boolean' } } },
    responses: { 200: { description: 'The endpoint as it now is.', schema: webhookSchema } },
    async handle(call) {
      const body = call.body as WebhookBody;
      const endpoint = await call.deps.admin.webhooks.update(call.acting, call.params.id!, body);
      if (endpoint === undefined) throw notFound(`no webhook endpoint ${call.params.id}`);
      return { body: webhookView(endpoint) };
    },
  },
  {
    method: 'DELETE',
    path: '/webhooks/:id',
    operationId: 'deleteWebhook',
    summary: 'Delete a webhook endpoint',
    description: 'Its pending deliveries are not sent (they go dead); its delivery log stays in the outbox until the cleanup job deletes it.',
    tag: 'Webhooks',
    access: 'write',
    params: idParams,
    responses: { 204: { description: 'Deleted.' } },
    async handle(call) {
      if (!(await call.deps.admin.webhooks.delete(call.acting, call.params.id!))) throw notFound(`no webhook endpoint ${call.params.id}`);
      return { status: 204 };
    },
  },
  {
    method: 'POST',
    path: '/webhooks/:id/rotate-secret',
    operationId: 'rotateWebhookSecret',
    summary: "Rotate a webhook endpoint's secret",
    description: 'A new secret, shown once; the previous one still signs every delivery beside it for GATEHOUSE_WEBHOOK_SECRET_OVERLAP, then stops.',
    tag: 'Webhooks',
    access: 'write',
    params: idParams,
    responses: { 200: { description: 'The new secret.', schema: withSecretSchema } },
    async handle(call) {
      const rotated = await call.deps.admin.webhooks.rotateSecret(call.acting, call.params.id!);
      if (rotated === undefined) throw notFound(`no webhook endpoint ${call.params.id}`);
      return { body: { endpoint: webhookView(rotated.endpoint), secret: rotated.secret } };
    },
  },
  {
    method: 'GET',
    path: '/webhooks/:id/deliveries',
    operationId: 'listWebhookDeliveries',
    summary: "A webhook endpoint's deliveries, newest first",
    description: 'Status, attempts, the last error and the HTTP status the endpoint last answered; never the payload.',
    tag: 'Webhooks',
    access: 'read',
    params: idParams,
    querystring: listQuerySchema(undefined, { status: { type: 'string', enum: [...OUTBOX_STATUSES], description: 'Only deliveries in this status.' } }),
    responses: { 200: { description: 'A page of deliveries.', schema: pageSchema(deliverySchema) } },
    async handle(call) {
      const limit = pageLimit(call);
      const key = decodeCursor(call.query.cursor, isOutboxKey);
      const rows = await call.deps.admin.webhooks.deliveries(call.params.id!, { status: call.query.status as OutboxStatus | undefined, after: key && { createdAt: key.c, id: key.i }, limit: limit + 1 });
      if (rows === undefined) throw notFound(`no webhook endpoint ${call.params.id}`);
      return { body: toPage(rows, limit, (m) => ({ c: m.createdAt, i: m.id }), deliveryView) };
    },
  },
  {
    method: 'POST',
    path: '/webhooks/:id/deliveries/:message_id/redeliver',
    operationId: 'redeliverWebhook',
    summary: 'Redeliver a dead or delivered webhook',
    description: 'Pending again, due now, attempts counted afresh, with the same `webhook-id`; out of the per-subject order (the deliveries after it have gone on). 409 when it is pending.',
    tag: 'Webhooks',
    access: 'write',
    params: messageParams,
    responses: { 200: { description: 'The delivery, pending again.', schema: deliverySchema } },
    async handle(call) {
      const message = await call.deps.admin.webhooks.redeliver(call.acting, call.params.id!, call.params.message_id!);
      if (message === undefined) throw notFound(`no delivery ${call.params.message_id} of webhook endpoint ${call.params.id}`);
      return { body: deliveryView(message) };
    },
  },
];
