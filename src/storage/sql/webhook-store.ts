import type { Kysely } from 'kysely';
import { ALL_EVENTS, type StoredWebhookEndpoint, type WebhookEvents } from '../../domain/webhook.ts';
import { WEBHOOK_LIST_LIMIT, type WebhookStore } from '../ports.ts';
import { translated } from './errors.ts';
import type { Database, WebhookEndpointsTable } from './schema.ts';

/** Webhook endpoints (migration 036, `webhook_endpoints`); the race rules are WebhookStore's (ports.ts). */
export class SqlWebhookStore implements WebhookStore {
  readonly #db: Kysely<Database>;

  constructor(db: Kysely<Database>) {
    this.#db = db;
  }

  async insert(e: StoredWebhookEndpoint): Promise<void> {
    await translated(`webhook endpoint ${e.id}`, () => this.#db.insertInto('webhook_endpoints').values(toRow(e)).execute());
  }

  async get(id: string): Promise<StoredWebhookEndpoint | undefined> {
    const row = await this.#db.selectFrom('webhook_endpoints').selectAll().where('id', '=', id).executeTakeFirst();
    return row && fromRow(row);
  }

  async list(options: { enabledOnly?: boolean } = {}): Promise<StoredWebhookEndpoint[]> {
    let q = this.#db.selectFrom('webhook_endpoints').selectAll();
    if (options.enabledOnly === true) q = q.where('enabled', '=', 1);
    const rows = await q.orderBy('created_at').orderBy('id').limit(WEBHOOK_LIST_LIMIT).execute();
    return rows.map(fromRow);
  }

  async update(id: string, changes: { url?: string; description?: string; events?: WebhookEvents; enabled?: boolean }, now: number): Promise<StoredWebhookEndpoint | undefined> {
    const row = await this.#db
      .updateTable('webhook_endpoints')
      .set({
        updated_at: now,
        ...(changes.url === undefined ? {} : { url: changes.url }),
        ...(changes.description === undefined ? {} : { description: changes.description }),
        ...(changes.events === undefined ? {} : { events: eventsText(changes.events) }),
        ...(changes.enabled === undefined ? {} : { enabled: changes.enabled ? 1 : 0 }),
      })
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirst();
    return row && fromRow(row);
  }

  async rotateSecret(id: string, secret: string, previousUntil: number, now: number): Promise<StoredWebhookEndpoint | undefined> {
    // `previous_secret = secret` reads the row as the UPDATE writes it: one statement, no lost rotation.
    const row = await this.#db
      .updateTable('webhook_endpoints')
      .set((eb) => ({ previous_secret: eb.ref('secret'), secret, previous_secret_until: previousUntil, updated_at: now }))
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirst();
    return row && fromRow(row);
  }

  async delete(id: string): Promise<boolean> {
    const result = await this.#db.deleteFrom('webhook_endpoints').where('id', '=', id).executeTakeFirst();
    return Number(result.numDeletedRows) === 1;
  }
}

function eventsText(events: WebhookEvents): string {
  return JSON.stringify(events === ALL_EVENTS ? ALL_EVENTS : [...events]);
}

function toRow(e: StoredWebhookEndpoint): WebhookEndpointsTable {
  return {
    id: e.id,
    url: e.url,
    description: e.description,
    events: eventsText(e.events),
    enabled: e.enabled ? 1 : 0,
    secret: e.secret,
    previous_secret: e.previousSecret ?? null,
    previous_secret_until: e.previousSecretUntil ?? null,
    created_at: e.createdAt,
    updated_at: e.updatedAt,
  };
}

function fromRow(r: WebhookEndpointsTable): StoredWebhookEndpoint {
  const events = JSON.parse(r.events) as typeof ALL_EVENTS | string[];
  return {
    id: r.id,
    url: r.url,
    description: r.description,
    events,
    enabled: Number(r.enabled) === 1,
    secret: r.secret,
    previousSecret: r.previous_secret ?? undefined,
    previousSecretUntil: r.previous_secret_until === null ? undefined : Number(r.previous_secret_until),
    createdAt: Number(r.created_at),
    updatedAt: Number(r.updated_at),
  };
}
