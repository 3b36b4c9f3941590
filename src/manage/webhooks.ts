/**
 * Webhook endpoints as administrators manage them (docs/webhooks.md; decisions WH1–WH30): register,
 * list, change, delete, rotate the secret, and the delivery log of each with redelivery. The
 * same rules whoever asks — the management API (and so the console) and the CLI.
 *
 * The secret is returned only by `create` and `rotateSecret` (shown once); the views never hold
 * it. A URL is checked at registration against the outbound rules (https; loopback and private
 * literal addresses only as the settings allow), so a mistake is a 400 now rather than dead
 * deliveries later; a host name's addresses are checked at each delivery, where they are resolved.
 */
import { OutboxStateError } from '../domain/outbox.ts';
import { ALL_EVENTS, WEBHOOK_DESCRIPTION_LENGTH, WEBHOOK_URL_LENGTH, webhookEvents, WebhookInvalid, type StoredWebhookEndpoint, type WebhookEndpoint, type WebhookEvents } from '../domain/webhook.ts';
import { urlRefusal } from '../adapters/outbound-http.ts';
import { isAuditEventName } from '../observability/audit-catalog.ts';
import type { OutboxPageKey } from '../storage/ports.ts';
import { newWebhookSecret, storedSecret } from '../webhooks/signing.ts';
import type { Acting } from './acting.ts';
import { envelope, type OutboxEnvelope } from './outbox.ts';
import type { AdministrationPorts } from './ports.ts';

export interface WebhookInput {
  url: string;
  description?: string | undefined;
  /** Audit event names, or ['*'] for all. */
  events: readonly string[];
  enabled?: boolean | undefined;
}

export interface WebhookChanges {
  url?: string | undefined;
  description?: string | undefined;
  events?: readonly string[] | undefined;
  enabled?: boolean | undefined;
}

/** An endpoint and its new secret: the only time the secret is shown. */
export interface WebhookWithSecret {
  endpoint: WebhookEndpoint;
  secret: string;
}

export interface WebhookAdministration {
  create(acting: Acting, input: WebhookInput): Promise<WebhookWithSecret>;
  list(): Promise<WebhookEndpoint[]>;
  get(id: string): Promise<WebhookEndpoint | undefined>;
  /** undefined when there is no such endpoint. */
  update(acting: Acting, id: string, changes: WebhookChanges): Promise<WebhookEndpoint | undefined>;
  delete(acting: Acting, id: string): Promise<boolean>;
  /** A new secret; the previous one signs too for GATEHOUSE_WEBHOOK_SECRET_OVERLAP. undefined: no such endpoint. */
  rotateSecret(acting: Acting, id: string): Promise<WebhookWithSecret | undefined>;
  /** The endpoint's deliveries newest first (undefined: no such endpoint). */
  deliveries(id: string, query: { status?: 'pending' | 'delivered' | 'dead' | undefined; after?: OutboxPageKey | undefined; limit: number }): Promise<OutboxEnvelope[] | undefined>;
  /** A dead or delivered delivery of the endpoint sent again, with the same webhook id. undefined: no such delivery of it. */
  redeliver(acting: Acting, id: string, messageId: string): Promise<OutboxEnvelope | undefined>;
}

export type WebhookPorts = Pick<AdministrationPorts, 'store' | 'clock' | 'random' | 'audit' | 'settings' | 'webhooksChanged'>;

/** The view of a stored endpoint: without its secrets. */
export function publicEndpoint(e: StoredWebhookEndpoint): WebhookEndpoint {
  const { secret: _secret, previousSecret: _previous, ...rest } = e;
  return rest;
}

function checkedUrl(url: string, settings: WebhookPorts['settings']): string {
  if (url.length > WEBHOOK_URL_LENGTH) throw new WebhookInvalid('url', `at most ${WEBHOOK_URL_LENGTH} characters`);
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    throw new WebhookInvalid('url', 'is not an absolute URL');
  }
  if (target.username !== '' || target.password !== '') throw new WebhookInvalid('url', 'must not hold a user name or password');
  if (target.hash !== '') throw new WebhookInvalid('url', 'must not have a fragment');
  const why = urlRefusal(target, { allowLoopback: settings.outboundLoopback, allowPrivate: settings.outboundPrivate });
  if (why !== undefined) throw new WebhookInvalid('url', `refused: ${why} (docs/webhooks.md, "Where gatehouse may POST")`);
  return target.href;
}

function checkedDescription(description: string): string {
  if (description.length > WEBHOOK_DESCRIPTION_LENGTH) throw new WebhookInvalid('description', `at most ${WEBHOOK_DESCRIPTION_LENGTH} characters`);
  return description;
}

const eventList = (events: WebhookEvents): string[] => (events === ALL_EVENTS ? [ALL_EVENTS] : [...events]);

export function webhookAdministration(ports: WebhookPorts): WebhookAdministration {
  const { store, clock, audit, settings } = ports;
  // Every change takes effect in this process's routing at once; other processes read it within REFRESH_MS (WH13).
  const changed = async () => ports.webhooksChanged?.();
  return {
    async create(acting, input) {
      const url = checkedUrl(input.url, settings);
      const description = checkedDescription(input.description ?? '');
      const events = webhookEvents(input.events, isAuditEventName);
      const secret = newWebhookSecret();
      const now = clock.now();
      const stored: StoredWebhookEndpoint = { id: ports.random.uuid(), url, description, events, enabled: input.enabled ?? true, secret: storedSecret(secret, settings.keyEncryptionKey), previousSecret: undefined, previousSecretUntil: undefined, createdAt: now, updatedAt: now };
      await store.webhooks.insert(stored);
      audit.emit({ event: 'webhook.created', endpointId: stored.id, url, events: eventList(events), enabled: stored.enabled, actor: acting.actor });
      await changed();
      return { endpoint: publicEndpoint(stored), secret };
    },
    list: async () => (await store.webhooks.list()).map(publicEndpoint),
    async get(id) {
      const found = await store.webhooks.get(id);
      return found && publicEndpoint(found);
    },
    async update(acting, id, changes) {
      const next = {
        ...(changes.url === undefined ? {} : { url: checkedUrl(changes.url, settings) }),
        ...(changes.description === undefined ? {} : { description: checkedDescription(changes.description) }),
        ...(changes.events === undefined ? {} : { events: webhookEvents(changes.events, isAuditEventName) }),
        ...(changes.enabled === undefined ? {} : { enabled: changes.enabled }),
      };
      const updated = await store.webhooks.update(id, next, clock.now());
      if (updated === undefined) return undefined;
      audit.emit({ event: 'webhook.updated', endpointId: id, fields: Object.keys(next), actor: acting.actor });
      await changed();
      return publicEndpoint(updated);
    },
    async delete(acting, id) {
      const deleted = await store.webhooks.delete(id);
      if (!deleted) return false;
      audit.emit({ event: 'webhook.deleted', endpointId: id, actor: acting.actor });
      await changed();
      return true;
    },
    async rotateSecret(acting, id) {
      const secret = newWebhookSecret();
      const now = clock.now();
      const until = now + settings.webhookSecretOverlap * 1000;
      const rotated = await store.webhooks.rotateSecret(id, storedSecret(secret, settings.keyEncryptionKey), until, now);
      if (rotated === undefined) return undefined;
      audit.emit({ event: 'webhook.secret_rotated', endpointId: id, previousValidUntil: new Date(until).toISOString(), actor: acting.actor });
      return { endpoint: publicEndpoint(rotated), secret };
    },
    async deliveries(id, query) {
      if ((await store.webhooks.get(id)) === undefined) return undefined;
      return (await store.outbox.page({ ...query, endpointId: id })).map(envelope);
    },
    async redeliver(acting, id, messageId) {
      const current = await store.outbox.get(messageId);
      if (current === undefined || current.channel !== 'webhook' || current.endpointId !== id) return undefined;
      // One conditional write decides (dead or delivered turns pending); the read above only scopes it to the endpoint.
      const redelivered = await store.outbox.redeliver(messageId, clock.now(), { alsoDelivered: true });
      if (redelivered === undefined) throw new OutboxStateError('pending', `delivery ${messageId} is pending: it will be sent, there is nothing to redeliver`);
      audit.emit({ event: 'outbox.redelivered', messageId, channel: redelivered.channel, kind: redelivered.kind, actor: acting.actor });
      return envelope(redelivered);
    },
  };
}
