/**
 * Audit events (docs/console.md, "Audit events"): newest first, filtered by time (since, until),
 * type (a name or a `family.*`), user and client, paged with the API's cursor. The filters are a
 * GET form: the page changes nothing and its URL can be shared.
 */
import { CONSOLE_PATH } from '../../../manage/management-clients.ts';
import { field, formErrors, type ConsolePage } from '../page.ts';
import { ensureOk } from '../api.ts';
import { formatTime, PAGE_SIZE, type Page } from './shared.ts';

type EventView = {
  id: string;
  time: string;
  event: string;
  user_id?: string;
  username?: string;
  client_id?: string;
  actor?: { via?: string; caller?: string; username?: string; client_id?: string };
  data?: Record<string, unknown>;
};

const FILTERS = ['since', 'until', 'type', 'user', 'client'] as const;

export const auditPages: ConsolePage[] = [
  {
    method: 'GET',
    path: '/audit',
    section: 'audit',
    async handle(call) {
      const filters = Object.fromEntries(FILTERS.map((name) => [name, field(call.query, name).trim().slice(0, 200)])) as Record<(typeof FILTERS)[number], string>;
      const cursor = field(call.query, 'cursor').slice(0, 1024);
      const answer = await call.api.call('GET', '/audit-events', { query: { ...filters, cursor, limit: PAGE_SIZE } });
      const refused = answer.status === 400 ? formErrors(answer.body) : undefined;
      const page = refused ? { items: [], next_cursor: null } : ensureOk<Page<EventView>>(answer);
      const link = (next?: string) => {
        const params = new URLSearchParams(Object.entries(filters).filter(([, v]) => v !== ''));
        if (next !== undefined) params.set('cursor', next);
        return params.size === 0 ? `${CONSOLE_PATH}/audit` : `${CONSOLE_PATH}/audit?${params}`;
      };
      const t = call.t;
      const errors = refused ?? {};
      return call.render(
        'audit',
        {
          title: t.auditTitle,
          hasErrors: refused !== undefined,
          generalErrors: errors[''] ?? [],
          fields: [
            { name: 'since', label: t.since, type: 'text', value: filters.since, hint: t.timeHint, errors: errors.since },
            { name: 'until', label: t.until, type: 'text', value: filters.until, hint: t.timeHint, errors: errors.until },
            { name: 'type', label: t.eventType, type: 'text', value: filters.type, hint: t.eventTypeHint, errors: errors.type },
            { name: 'user', label: t.userFilter, type: 'text', value: filters.user, errors: errors.user },
            { name: 'client', label: t.clientFilter, type: 'text', value: filters.client, errors: errors.client },
          ],
          items: page.items.map((e) => ({
            ...e,
            when: formatTime(call.locale, e.time),
            // People by their username (the API names the page's people in one query), linked to their page by id.
            user: e.user_id === undefined ? undefined : { id: e.user_id, name: e.username ?? e.user_id },
            by: e.actor === undefined ? undefined : { via: e.actor.via, caller: e.actor.caller, name: e.actor.username, client: e.actor.client_id },
            details: e.data === undefined || Object.keys(e.data).length === 0 ? '' : JSON.stringify(e.data),
          })),
          pager: { cursor, first: link(), next: typeof page.next_cursor === 'string' ? link(page.next_cursor) : undefined },
        },
        refused ? 400 : 200,
      );
    },
  },
];
