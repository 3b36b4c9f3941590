/**
 * The outbox (docs/mail.md, "The outbox"; docs/console.md): mail waiting, retrying, delivered and
 * dead, newest first, filtered by status; an administrator redelivers a dead message after a
 * confirmation. Only the envelope is shown, as the API gives it: never what a message says. When
 * mail is off (GATEHOUSE_SMTP_URL unset) the page says so.
 */
import { OUTBOX_STATUSES } from '../../../domain/outbox.ts';
import { CONSOLE_PATH } from '../../../manage/management-clients.ts';
import { segment } from '../api.ts';
import { fill } from '../i18n.ts';
import type { ConsolePage, PageCall } from '../page.ts';
import { confirmedChange, formatTime, listQuery, PAGE_SIZE, statusFilterOf, statusList, type Page } from './shared.ts';

const SECTION = 'outbox';
const PATH = '/outbox';

type MessageView = { id: string; kind: string; destination: string; status: 'pending' | 'delivered' | 'dead'; attempts: number; next_attempt_at: string; last_error: string | null; created_at: string; delivered_at: string | null };

const statusOf = (call: PageCall) => statusFilterOf(call, OUTBOX_STATUSES);

export const outboxPages: ConsolePage[] = [
  {
    method: 'GET',
    path: PATH,
    section: SECTION,
    async handle(call) {
      const { t } = call;
      const status = statusOf(call);
      const { cursor } = listQuery(call);
      const page = await call.api.get<Page<MessageView>>('/outbox', { cursor, limit: PAGE_SIZE, status });
      const stateLabel = (m: MessageView) => (m.status === 'pending' && m.attempts > 0 ? t.outboxRetrying : t[`outbox_${m.status}`]);
      return call.render('outbox', {
        title: t.outboxTitle,
        mailOn: call.deps.config.smtpUrl !== undefined,
        ...statusList(PATH, OUTBOX_STATUSES, { status, cursor, nextCursor: page.next_cursor }, (s) => (s === undefined ? t.outboxAll : t[`outbox_${s}`])),
        items: page.items.map((m) => ({
          ...m,
          state: stateLabel(m),
          created: formatTime(call.locale, m.created_at),
          when: m.status === 'delivered' ? formatTime(call.locale, m.delivered_at) : m.status === 'pending' ? formatTime(call.locale, m.next_attempt_at) : '',
          redeliver: m.status === 'dead' ? `${CONSOLE_PATH}${PATH}/${segment(m.id)}/redeliver` : undefined,
        })),
      });
    },
  },
  ...confirmedChange({
    path: `${PATH}/:id/redeliver`,
    section: SECTION,
    question: async (call) => fill(call.t.confirmRedeliver, { id: call.params.id ?? '' }),
    submit: (t) => t.redeliver,
    back: () => `${PATH}?status=dead`,
    async run(call) {
      await call.api.send('POST', `/outbox/${segment(call.params.id ?? '')}/redeliver`);
      return call.redirect(`${PATH}?status=pending`, 'redelivered');
    },
  }),
];
