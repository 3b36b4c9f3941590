/**
 * Webhooks (docs/webhooks.md; docs/console.md): the endpoints, a form to register one (its signing
 * secret shown once on the page that follows), and each endpoint's delivery log, filtered by
 * status, where a dead or delivered delivery is redelivered after a confirmation. Rotating a
 * secret, changing and removing an endpoint are the CLI's and the management API's.
 */
import { OUTBOX_STATUSES } from '../../../domain/outbox.ts';
import { CONSOLE_PATH } from '../../../manage/management-clients.ts';
import { segment } from '../api.ts';
import { fill } from '../i18n.ts';
import { field, formErrors, type ConsolePage, type PageCall } from '../page.ts';
import { confirmedChange, formatTime, listQuery, PAGE_SIZE, statusFilterOf, type Page } from './shared.ts';

const SECTION = 'webhooks';
const PATH = '/webhooks';

type EndpointView = { id: string; url: string; description: string; events: string[]; enabled: boolean };
type DeliveryView = { id: string; kind: string; status: 'pending' | 'delivered' | 'dead'; attempts: number; response_status: number | null; last_error: string | null; created_at: string };
type RegisterForm = { url: string; description: string; events: string };

const endpointPath = (id: string) => `${PATH}/${segment(id)}`;
const deliveriesLink = (id: string, status: string | undefined, cursor?: string) => {
  const query = new URLSearchParams({ ...(status === undefined ? {} : { status }), ...(cursor === undefined ? {} : { cursor }) }).toString();
  return `${CONSOLE_PATH}${endpointPath(id)}${query === '' ? '' : `?${query}`}`;
};

function registerForm(call: PageCall, form: RegisterForm, errors: Record<string, string[]> = {}, status = 200) {
  const { t } = call;
  // The API names each event's field `events[i]`: shown on the one events field.
  const eventErrors = Object.entries(errors).filter(([name]) => name.startsWith('events')).flatMap(([, messages]) => messages);
  return call.render(
    'client-form',
    {
      title: t.newWebhookTitle,
      action: `${CONSOLE_PATH}${PATH}/new`,
      submitLabel: t.register,
      cancel: `${CONSOLE_PATH}${PATH}`,
      hasErrors: Object.keys(errors).length > 0,
      generalErrors: errors[''] ?? [],
      fields: [
        { name: 'url', label: t.webhookUrl, type: 'text', value: form.url, required: true, hint: t.webhookUrlHint, errors: errors.url },
        { name: 'description', label: t.description, type: 'text', value: form.description, errors: errors.description },
        { name: 'events', label: t.webhookEvents, type: 'text', value: form.events, required: true, hint: t.webhookEventsHint, errors: eventErrors.length > 0 ? eventErrors : undefined },
      ],
    },
    status,
  );
}

export const webhookPages: ConsolePage[] = [
  {
    method: 'GET',
    path: PATH,
    section: SECTION,
    async handle(call) {
      const { t } = call;
      const list = await call.api.get<{ items: EndpointView[] }>('/webhooks');
      return call.render('webhooks', {
        title: t.webhooksTitle,
        newHref: `${CONSOLE_PATH}${PATH}/new`,
        items: list.items.map((e) => ({ ...e, eventsText: e.events.join(', '), enabledText: e.enabled ? t.yes : t.no, href: `${CONSOLE_PATH}${endpointPath(e.id)}` })),
      });
    },
  },
  {
    method: 'GET',
    path: `${PATH}/new`,
    section: SECTION,
    async handle(call) {
      return registerForm(call, { url: '', description: '', events: '' });
    },
  },
  {
    method: 'POST',
    path: `${PATH}/new`,
    section: SECTION,
    async handle(call) {
      const form = { url: field(call.form, 'url').trim(), description: field(call.form, 'description').trim(), events: field(call.form, 'events').trim() };
      const events = form.events.split(/[\s,]+/).filter((e) => e !== '');
      const answer = await call.api.call('POST', '/webhooks', { body: { url: form.url, description: form.description, events } });
      if (answer.status === 400) return registerForm(call, form, formErrors(answer.body), 400);
      if (answer.status !== 201) throw new Error(`POST /webhooks answered ${answer.status}`);
      const made = answer.body as { endpoint: EndpointView; secret: string };
      // The secret is on this page only: never in a redirect, a cookie or a later page.
      return call.render('webhook-secret', { title: call.t.webhookSecretTitle, secret: made.secret, endpoint: made.endpoint, href: `${CONSOLE_PATH}${endpointPath(made.endpoint.id)}` }, 201);
    },
  },
  {
    method: 'GET',
    path: `${PATH}/:id`,
    section: SECTION,
    async handle(call) {
      const { t } = call;
      const id = call.params.id ?? '';
      const status = statusFilterOf(call, OUTBOX_STATUSES);
      const { cursor } = listQuery(call);
      const endpoint = await call.api.get<EndpointView>(endpointPath(id));
      const page = await call.api.get<Page<DeliveryView>>(`${endpointPath(id)}/deliveries`, { cursor, limit: PAGE_SIZE, status });
      return call.render('webhook', {
        title: endpoint.description === '' ? t.webhookDeliveries : `${t.webhookDeliveries}: ${endpoint.description}`,
        endpoint,
        filters: [undefined, ...OUTBOX_STATUSES].map((s) => ({ label: s === undefined ? t.outboxAll : t[`outbox_${s}`], href: deliveriesLink(id, s), current: s === status })),
        items: page.items.map((m) => ({
          ...m,
          kind: m.kind.replace(/^webhook\./, ''),
          state: m.status === 'pending' && m.attempts > 0 ? t.outboxRetrying : t[`outbox_${m.status}`],
          created: formatTime(call.locale, m.created_at),
          redeliver: m.status === 'pending' ? undefined : `${CONSOLE_PATH}${endpointPath(id)}/deliveries/${segment(m.id)}/redeliver`,
        })),
        pager: { cursor, first: deliveriesLink(id, status), next: typeof page.next_cursor === 'string' && page.next_cursor !== '' ? deliveriesLink(id, status, page.next_cursor) : undefined },
      });
    },
  },
  ...confirmedChange({
    path: `${PATH}/:id/deliveries/:message/redeliver`,
    section: SECTION,
    question: async (call) => fill(call.t.confirmRedeliverWebhook, { id: call.params.message ?? '' }),
    submit: (t) => t.redeliver,
    back: (call) => endpointPath(call.params.id ?? ''),
    async run(call) {
      await call.api.send('POST', `${endpointPath(call.params.id ?? '')}/deliveries/${segment(call.params.message ?? '')}/redeliver`);
      return call.redirect(`${endpointPath(call.params.id ?? '')}?status=pending`, 'redelivered');
    },
  }),
];
