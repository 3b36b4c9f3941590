/** Helpers the list pages share: `?q=` and `?cursor=` in, search box and pager data out. */
import { CONSOLE_PATH } from '../../../manage/management-clients.ts';
import type { FastifyReply } from 'fastify';
import { field, type ConsolePage, type PageCall } from '../page.ts';

export const PAGE_SIZE = 50;

export interface ListQuery {
  q: string;
  cursor: string;
}

export function listQuery(call: PageCall): ListQuery {
  return { q: field(call.query, 'q').slice(0, 200), cursor: field(call.query, 'cursor').slice(0, 1024) };
}

/** The pager's links: the first page (when not on it) and the next (when the API gave a cursor). */
export function pager(path: string, query: ListQuery, nextCursor: unknown): { cursor: string; first: string; next: string | undefined } {
  const link = (cursor?: string) => {
    const params = new URLSearchParams();
    if (query.q !== '') params.set('q', query.q);
    if (cursor !== undefined) params.set('cursor', cursor);
    return params.size === 0 ? `${CONSOLE_PATH}${path}` : `${CONSOLE_PATH}${path}?${params}`;
  };
  return { cursor: query.cursor, first: link(), next: typeof nextCursor === 'string' && nextCursor !== '' ? link(nextCursor) : undefined };
}

export interface Page<T> {
  items: T[];
  next_cursor: string | null;
}

/** An ISO time as the page's language writes it, in UTC (the server's clock; no client script). */
export function formatTime(locale: string, iso: unknown): string {
  if (typeof iso !== 'string') return '';
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  return new Intl.DateTimeFormat(locale, { dateStyle: 'medium', timeStyle: 'short', timeZone: 'UTC' }).format(date) + ' UTC';
}

/**
 * A confirmation page (GET) and the change it confirms (POST) at the same path: the GET changes
 * nothing and shows `question` with a button that posts back; Cancel returns to `back`.
 */
export function confirmedChange(options: {
  path: string;
  section: string;
  question(call: PageCall): Promise<string>;
  submit(t: PageCall['t']): string;
  back(call: PageCall): string;
  run(call: PageCall): Promise<FastifyReply>;
}): ConsolePage[] {
  const action = (call: PageCall) => `${CONSOLE_PATH}${options.path.replace(/:([a-z_]+)/g, (_, name: string) => encodeURIComponent(call.params[name] ?? ''))}`;
  return [
    {
      method: 'GET',
      path: options.path,
      section: options.section,
      async handle(call) {
        return call.render('confirm', { title: call.t.confirmTitle, question: await options.question(call), action: action(call), submitLabel: options.submit(call.t), cancel: `${CONSOLE_PATH}${options.back(call)}` });
      },
    },
    { method: 'POST', path: options.path, section: options.section, handle: options.run },
  ];
}

/** The status filter of a list's query, when it is one of `statuses` (the outbox, invitations). */
export function statusFilterOf(call: PageCall, statuses: readonly string[]): string | undefined {
  const status = field(call.query, 'status');
  return statuses.includes(status) ? status : undefined;
}

/**
 * What a list filtered by status shows around its rows (the outbox, invitations, pending
 * registrations): a filter link for all and one per status, and the pager of the current filter.
 */
export function statusList<S extends string>(path: string, statuses: readonly S[], current: { status: string | undefined; cursor: string; nextCursor: unknown }, label: (status: S | undefined) => string) {
  const { status, cursor, nextCursor } = current;
  return {
    filters: [undefined, ...statuses].map((s) => ({ label: label(s), href: statusListLink(path, s), current: s === status })),
    pager: statusPager(path, status, cursor, nextCursor),
  };
}

/** The pager of the list at `path` with this status (none: all): its first page and the next, when the API gave a cursor. */
export function statusPager(path: string, status: string | undefined, cursor: string, nextCursor: unknown): { cursor: string; first: string; next: string | undefined } {
  return { cursor, first: statusListLink(path, status), next: typeof nextCursor === 'string' && nextCursor !== '' ? statusListLink(path, status, nextCursor) : undefined };
}

/** A link to the list at `path` with this status (none: all) and cursor. */
export function statusListLink(path: string, status: string | undefined, cursor?: string): string {
  const params = new URLSearchParams();
  if (status !== undefined) params.set('status', status);
  if (cursor !== undefined) params.set('cursor', cursor);
  return params.size === 0 ? `${CONSOLE_PATH}${path}` : `${CONSOLE_PATH}${path}?${params}`;
}
