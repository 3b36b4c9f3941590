/**
 * `GET /audit-events`: the audit events kept in the store (GATEHOUSE_AUDIT_STORE), newest first,
 * filtered by time, event name, user and client, paged with a keyset cursor on (time, id)
 * descending (docs/management-api.md, "Audit events"). Readers may list them: events carry
 * fingerprints, never a secret (src/observability/audit.ts).
 */
import type { AuditKey, AuditRecord, StoredActor } from '../../../manage/audit-events.ts';
import { AUDIT_EVENT_NAMES, AUDIT_EVENTS, isAuditEventName } from '../../../observability/audit-catalog.ts';
import { invalidField } from '../errors.ts';
import { decodeCursor, pageQueryProperties, pageSchema, toPage } from '../pagination.ts';
import type { JsonSchema, ManageRoute } from '../route.ts';

/** Most `type` values one request may give (after splitting on commas). */
const MAX_TYPES = 64;
/** Longest user or client id accepted as a filter; longer ones match nothing we store anyway. */
const MAX_ID_LENGTH = 255;
/** An RFC 3339 §5.6 date-time: seconds required, fraction optional, `Z` or an offset required. */
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$/;

const dateTimeSchema = (what: string): JsonSchema => ({ type: 'string', maxLength: 40, description: `${what} (RFC 3339 date-time, e.g. \`2026-11-24T07:00:00Z\`).` });

const querystring: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    since: dateTimeSchema('Events at or after this instant'),
    until: dateTimeSchema('Events before this instant'),
    type: {
      type: 'array',
      maxItems: MAX_TYPES,
      items: { type: 'string', minLength: 1, maxLength: 2000 },
      description: `Event names: repeat the parameter or separate them with commas; \`prefix.*\` takes every event of that family (\`client.*\`). Any of them matches. Names: ${AUDIT_EVENT_NAMES.map((n) => `\`${n}\``).join(', ')}.`,
    },
    user: { type: 'string', minLength: 1, maxLength: MAX_ID_LENGTH, description: "A user id: events about that user (`user_id`) or made by that administrator (`actor.caller`, which for the CLI is the operating-system account's name)." },
    client: { type: 'string', minLength: 1, maxLength: MAX_ID_LENGTH, description: 'A client_id: events about that client (`client_id`).' },
    ...pageQueryProperties,
  },
};

const actorSchema: JsonSchema = {
  type: 'object',
  required: ['via'],
  properties: {
    via: { enum: ['cli', 'identity-api', 'manage-api', 'dcr'] },
    caller: { type: 'string', description: "The administrator's user id, or the CLI's operating-system account." },
    username: { type: 'string', description: "The current username of the user `caller` names, while that user exists (not for the CLI's account)." },
    client_id: { type: 'string', description: 'The client of the token the change was made with.' },
    method: { type: 'string' },
  },
};

const itemSchema: JsonSchema = {
  type: 'object',
  required: ['id', 'time', 'event', 'data'],
  properties: {
    id: { type: 'string', description: 'Unique and time-ordered (UUIDv7).' },
    time: { type: 'string', description: 'When it happened (ISO 8601, UTC).' },
    event: { type: 'string', description: 'The event name (docs/management-api.md, "Audit events").' },
    user_id: { type: 'string', description: 'The user the event is about.' },
    username: { type: 'string', description: 'The current username of `user_id`, while that user exists.' },
    client_id: { type: 'string', description: 'The client the event is about.' },
    actor: { ...actorSchema, description: 'Who made an administrative change.' },
    data: { type: 'object', description: "The event's other fields, snake_case; tokens, codes and sessions by fingerprint only." },
  },
};

/** Milliseconds of an RFC 3339 date-time, or a 400 naming `field`. */
function instant(raw: unknown, field: string): number | undefined {
  if (raw === undefined) return undefined;
  const text = String(raw);
  const parts = DATE_TIME.exec(text);
  const ms = parts ? Date.parse(text.toUpperCase()) : NaN;
  // Date.parse rolls 2026-02-30 over into March: the day must exist in its month.
  const [year, month, day] = parts ? [Number(parts[1]), Number(parts[2]), Number(parts[3])] : [0, 0, 0];
  const dayExists = month >= 1 && month <= 12 && day >= 1 && day <= new Date(Date.UTC(year, month, 0)).getUTCDate();
  if (!Number.isFinite(ms) || !dayExists || Number(parts![4]) > 23 || Number(parts![5]) > 59 || Number(parts![6]) > 59) {
    throw invalidField(field, 'must be an RFC 3339 date-time such as 2026-11-24T07:00:00Z');
  }
  return ms;
}

/**
 * The exact names `type` stands for: each value split on commas, each part an event name or
 * `prefix.*`. Unknown names are a 400 naming `type`, so a typo is not read as "no such events".
 */
function eventNames(raw: unknown): string[] | undefined {
  if (raw === undefined) return undefined;
  const parts = (raw as string[]).flatMap((value) => value.split(',')).map((part) => part.trim());
  if (parts.length > MAX_TYPES) throw invalidField('type', `at most ${MAX_TYPES} event names`);
  const names = new Set<string>();
  for (const part of parts) {
    if (part.endsWith('.*')) {
      const prefix = part.slice(0, -1);
      const family = AUDIT_EVENT_NAMES.filter((name) => name.startsWith(prefix));
      if (family.length === 0) throw invalidField('type', `no event name starts with ${JSON.stringify(prefix)}`);
      family.forEach((name) => names.add(name));
    } else if (isAuditEventName(part)) names.add(part);
    else throw invalidField('type', `${JSON.stringify(part.slice(0, 100))} is not an event name (names: docs/management-api.md, or \`prefix.*\`)`);
  }
  return [...names];
}

function isAuditKey(key: unknown): key is AuditKey {
  if (typeof key !== 'object' || key === null) return false;
  const { at, id } = key as Record<string, unknown>;
  return Number.isSafeInteger(at) && typeof id === 'string' && id.length > 0 && id.length <= 64 && Object.keys(key).length === 2;
}

const snake = (name: string) => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/**
 * The wire form (docs/management-api.md, "Audit events"): snake_case, the actor out of the data,
 * the people by id and, while they exist, by their current username (`usernames`, read for the
 * whole page at once).
 */
export function auditEventView(record: AuditRecord, usernames: ReadonlyMap<string, string> = new Map()): Record<string, unknown> {
  const { actor, ...rest } = record.data as { actor?: StoredActor } & Record<string, unknown>;
  const username = record.userId === undefined ? undefined : usernames.get(record.userId);
  const callerName = actor?.caller === undefined || actor.via === 'cli' ? undefined : usernames.get(actor.caller);
  return {
    id: record.id,
    time: new Date(record.at).toISOString(),
    event: record.event,
    ...(record.userId === undefined ? {} : { user_id: record.userId }),
    ...(username === undefined ? {} : { username }),
    ...(record.clientId === undefined ? {} : { client_id: record.clientId }),
    ...(actor === undefined
      ? {}
      : {
          actor: {
            via: actor.via,
            ...(actor.caller === undefined ? {} : { caller: actor.caller }),
            ...(callerName === undefined ? {} : { username: callerName }),
            ...(actor.clientId === undefined ? {} : { client_id: actor.clientId }),
            ...(actor.method === undefined ? {} : { method: actor.method }),
          },
        }),
    data: Object.fromEntries(Object.entries(rest).map(([key, value]) => [snake(key), value])),
  };
}

export const auditRoutes: ManageRoute[] = [
  {
    method: 'GET',
    path: '/audit-events',
    operationId: 'listAuditEvents',
    summary: 'Audit events, newest first',
    description: `The audit events kept in the store (GATEHOUSE_AUDIT_STORE; kept GATEHOUSE_AUDIT_RETENTION days), newest first by time, then id. Every filter given must match. Events reach the store in batches written every 100 ms: an event is listed about 100 ms after it happens, a few hundred under load (300 ms was measured). ${Object.keys(AUDIT_EVENTS).length} event names.`,
    tag: 'Audit',
    access: 'read',
    querystring,
    responses: { 200: { description: 'A page of events.', schema: pageSchema(itemSchema) } },
    async handle({ deps, query }) {
      const since = instant(query.since, 'since');
      const until = instant(query.until, 'until');
      if (since !== undefined && until !== undefined && until <= since) throw invalidField('until', 'must be later than since');
      const types = eventNames(query.type);
      const limit = query.limit as number;
      const before = decodeCursor(query.cursor, isAuditKey);
      const { events: rows, usernames } = await deps.admin.auditEvents.page({ since, until, types, userId: query.user as string | undefined, clientId: query.client as string | undefined, before, limit });
      return { body: toPage(rows, limit, (row) => ({ at: row.at, id: row.id }), (row) => auditEventView(row, usernames)) };
    },
  },
];
