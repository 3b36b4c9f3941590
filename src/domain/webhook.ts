/**
 * Webhook endpoints (issue 26 item 4; docs/webhooks.md; decisions WH1–WH30): URLs administrators
 * register with the audit event types they want. Each stored audit event of a subscribed type
 * becomes one outbox message (channel 'webhook') per endpoint, signed the way the Standard
 * Webhooks specification describes when it is sent.
 *
 * The secret is a Standard Webhooks secret, `whsec_` and the base64 of 32 random bytes; it is
 * shown once (when made or rotated) and kept sealed under GATEHOUSE_KEY_ENCRYPTION_KEY when one is
 * set (WH8). During a rotation's overlap the previous secret signs too (WH9).
 */
/** Every event type in the catalogue, now and later (WH4). */
export const ALL_EVENTS = '*';
/** `*`, or names from the audit catalogue (src/observability/audit-catalog.ts, the one registry of event names: WH3). */
export type WebhookEvents = typeof ALL_EVENTS | readonly string[];

export interface WebhookEndpoint {
  id: string;
  url: string;
  description: string;
  events: WebhookEvents;
  enabled: boolean;
  createdAt: number;
  updatedAt: number;
  /** When the previous secret stops signing (undefined: no rotation in its overlap). */
  previousSecretUntil: number | undefined;
}

/** An endpoint with its secrets, as the store keeps them (sealed or `whsec_…` in the clear). */
export interface StoredWebhookEndpoint extends WebhookEndpoint {
  secret: string;
  previousSecret: string | undefined;
}

/** Limits of what an administrator may register (WH5): checked by the use cases, whoever asks. */
export const WEBHOOK_URL_LENGTH = 2000;
export const WEBHOOK_DESCRIPTION_LENGTH = 500;
export const WEBHOOK_EVENTS_MAX = 200;

/** A registration or change that breaks a rule; `field` is the wire name of what is wrong. */
export class WebhookInvalid extends Error {
  readonly field: string;
  constructor(field: string, message: string) {
    super(`${field}: ${message}`);
    this.name = 'WebhookInvalid';
    this.field = field;
  }
}

/** The event list as given (names, or ['*']) checked against the catalogue (`known`: the audit catalogue's test). */
export function webhookEvents(given: readonly string[], known: (name: string) => boolean): WebhookEvents {
  if (given.length === 0) throw new WebhookInvalid('events', 'name at least one event type, or "*" for all');
  if (given.length > WEBHOOK_EVENTS_MAX) throw new WebhookInvalid('events', `at most ${WEBHOOK_EVENTS_MAX} event types`);
  if (given.includes(ALL_EVENTS)) {
    if (given.length > 1) throw new WebhookInvalid('events', '"*" stands alone: it already means every event type');
    return ALL_EVENTS;
  }
  const unknown = given.filter((name) => !known(name));
  if (unknown.length > 0) throw new WebhookInvalid('events', `not in the event catalogue (docs/webhooks.md): ${unknown.slice(0, 5).join(', ')}`);
  return [...new Set(given)].sort();
}

export function subscribes(events: WebhookEvents, event: string): boolean {
  return events === ALL_EVENTS || (events as readonly string[]).includes(event);
}
