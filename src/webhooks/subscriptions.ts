/**
 * Where webhook deliveries come from (docs/webhooks.md, "Where deliveries come from"; decisions
 * WH11–WH14): the audit events on their way into the store.
 *
 * The audit store sink (src/observability/audit-store-sink.ts) writes events in batches, off the
 * requests' paths. The writer here is what it writes through: for each batch it asks the
 * subscription snapshot which enabled endpoints want which events, and writes the events and one
 * outbox message per (event, endpoint) in ONE transaction — a stored audit event and its queued
 * webhooks exist together or not at all (WH11). With no endpoint subscribed, a batch is written
 * exactly as before: one INSERT, nothing more (WH12).
 *
 * The snapshot is the enabled endpoints held in memory: refreshed by this process whenever one of
 * its use cases changes an endpoint, and every REFRESH_MS from the store, so a change made by
 * another instance or the CLI takes effect here within that time (WH13). Only the routing is
 * cached: the transport reads the endpoint (URL, secrets, enabled) again when it sends.
 */
import type { NewOutboxMessage } from '../domain/outbox.ts';
import { subscribes, type WebhookEvents } from '../domain/webhook.ts';
import { AuditIds } from '../observability/audit-store-sink.ts';
import type { AuditRecord, AuditStore, OutboxStore, WebhookStore } from '../storage/ports.ts';

/** How often each process reads the endpoints again (ms). */
export const REFRESH_MS = 5_000;

/** The JSON a webhook delivers (docs/webhooks.md, "Payload"): the Standard Webhooks envelope. */
export interface WebhookPayload {
  type: string;
  /** ISO 8601, the event's time. */
  timestamp: string;
  data: Record<string, unknown>;
}

interface Subscribed {
  id: string;
  url: string;
  events: WebhookEvents;
}

export interface SubscriptionLog {
  error(fields: object, message: string): void;
}

const snake = (name: string) => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/**
 * The payload of `record`: its fields snake_case as the management API lists audit events
 * (docs/management-api.md, "Audit events"), the event's id as `audit_event_id`. The stored record
 * already holds fingerprints in place of credentials (audit-store-sink.ts, toRecord): no secret.
 */
export function webhookPayload(record: AuditRecord): WebhookPayload {
  const { actor, ...rest } = record.data as { actor?: Record<string, unknown> } & Record<string, unknown>;
  const data: Record<string, unknown> = { audit_event_id: record.id };
  if (record.userId !== undefined) data.user_id = record.userId;
  if (record.clientId !== undefined) data.client_id = record.clientId;
  if (actor !== undefined) data.actor = Object.fromEntries(Object.entries(actor).map(([k, v]) => [snake(k), v]));
  for (const [key, value] of Object.entries(rest)) data[snake(key)] = value;
  return { type: record.event, timestamp: new Date(record.at).toISOString(), data };
}

/**
 * The subject whose events must arrive in order at one endpoint (WH15): the user the event is
 * about, else its client; an event about neither (a key rotation) has no order to keep.
 */
export function subjectOf(record: Pick<AuditRecord, 'userId' | 'clientId'>): string | undefined {
  if (record.userId !== undefined) return `user:${record.userId}`;
  if (record.clientId !== undefined) return `client:${record.clientId}`;
  return undefined;
}

/**
 * An outbox event about a webhook message (`outbox.dead`, `outbox.redelivered` of channel
 * webhook) is never itself delivered as a webhook (WH14): an endpoint that is down would
 * otherwise be sent the news of its own failed deliveries, each of which dies in turn — without end.
 */
function aboutAWebhook(record: AuditRecord): boolean {
  return record.event.startsWith('outbox.') && record.data.channel === 'webhook';
}

export class WebhookSubscriptions {
  readonly #store: Pick<WebhookStore, 'list'>;
  readonly #log: SubscriptionLog | undefined;
  #endpoints: readonly Subscribed[] = [];
  /** The union of the endpoints' event types (`all` when one takes every type): a Set lookup per event. */
  #wanted: ReadonlySet<string> | 'all' = new Set();
  // Message ids: UUIDv7 in the order the events were emitted, so (createdAt, id) orders the messages of one ms too.
  readonly #ids = new AuditIds();
  #timer: NodeJS.Timeout | undefined;
  #refreshing: Promise<void> | undefined;

  constructor(store: Pick<WebhookStore, 'list'>, log?: SubscriptionLog) {
    this.#store = store;
    this.#log = log;
  }

  /** Reads the enabled endpoints again. Concurrent calls share one read that starts after the latest. */
  async refresh(): Promise<void> {
    const previous = this.#refreshing ?? Promise.resolve();
    const next = previous.then(async () => {
      const endpoints = await this.#store.list({ enabledOnly: true });
      this.#endpoints = endpoints.map((e) => ({ id: e.id, url: e.url, events: e.events }));
      this.#wanted = endpoints.some((e) => e.events === '*') ? 'all' : new Set(endpoints.flatMap((e) => e.events as readonly string[]));
    });
    this.#refreshing = next.catch(() => undefined);
    return next;
  }

  /** Whether any enabled endpoint wants `event` (the snapshot's answer). */
  wants(event: string): boolean {
    return this.#wanted === 'all' || this.#wanted.has(event);
  }

  /** One outbox message per (record, subscribed endpoint), in the records' order. */
  messages(records: readonly AuditRecord[]): NewOutboxMessage[] {
    if (this.#endpoints.length === 0) return [];
    const out: NewOutboxMessage[] = [];
    for (const record of records) {
      if (!this.wants(record.event) || aboutAWebhook(record)) continue;
      const subject = subjectOf(record);
      for (const endpoint of this.#endpoints) {
        if (!subscribes(endpoint.events, record.event)) continue;
        out.push({
          id: this.#ids.next(record.at),
          channel: 'webhook',
          kind: `webhook.${record.event}`,
          destination: endpoint.url,
          payload: { ...webhookPayload(record) },
          // One message per event and endpoint, however often the batch is written (WH17).
          dedupeKey: `webhook:${endpoint.id}:${record.id}`,
          createdAt: record.at,
          nextAttemptAt: record.at,
          endpointId: endpoint.id,
          ...(subject === undefined ? {} : { orderingKey: `${endpoint.id}/${subject}` }),
        });
      }
    }
    return out;
  }

  /** Refreshes every `intervalMs` (a failed read is logged; the snapshot stays as it was). */
  start(intervalMs = REFRESH_MS): void {
    clearInterval(this.#timer);
    this.#timer = setInterval(() => void this.refresh().catch((error: unknown) => this.#log?.error({ err: error }, 'could not read the webhook endpoints; keeping the last ones read')), intervalMs);
    this.#timer.unref();
  }

  stop(): void {
    clearInterval(this.#timer);
  }
}

/**
 * What the audit store sink writes a batch through: the events, and in the same transaction the
 * webhooks they cause. `keepEvents` false (GATEHOUSE_AUDIT_STORE=off): only the webhooks.
 */
export function webhookAuditWriter(store: { audit: Pick<AuditStore, 'insertMany' | 'insertManyWithMessages'>; outbox: Pick<OutboxStore, 'enqueueMany'> }, subscriptions: WebhookSubscriptions, keepEvents: boolean): Pick<AuditStore, 'insertMany'> {
  return {
    async insertMany(records) {
      const messages = subscriptions.messages(records);
      if (!keepEvents) {
        await store.outbox.enqueueMany(messages);
        return;
      }
      if (messages.length === 0) await store.audit.insertMany(records);
      else await store.audit.insertManyWithMessages(records, messages);
    },
  };
}

/** A sink that passes on only the events some endpoint wants: the store sink's filter when audit events are not stored. */
export function subscribedOnly<T extends { emit(event: { event: string }): void }>(sink: T, subscriptions: Pick<WebhookSubscriptions, 'wants'>): Pick<T, 'emit'> {
  return { emit: (event) => (subscriptions.wants(event.event) ? sink.emit(event) : undefined) } as Pick<T, 'emit'>;
}
