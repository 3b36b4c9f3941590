/**
 * Organizations (docs/console.md, "Organizations"): list and search, create, view, edit (friendly
 * name, technical name, parent, type), delete after a confirmation.
 */
import type { FastifyReply } from 'fastify';
import { ensureOk, segment } from '../api.ts';
import { CONSOLE_PATH } from '../../../manage/management-clients.ts';
import { fill } from '../i18n.ts';
import { field, formErrors, type ConsolePage, type PageCall } from '../page.ts';
import { confirmedChange, formatTime, listQuery, pager, PAGE_SIZE, type Page } from './shared.ts';

type OrganizationView = Record<string, unknown> & { id: string; name: string; technical_name: string; parent_id: string | null; type?: string | null };

const SECTION = 'organizations';
const orgPath = (id: string) => `/organizations/${segment(id)}`;
const text = (value: unknown) => (typeof value === 'string' ? value : '');

interface OrganizationForm {
  name: string;
  technical_name: string;
  parent_id: string;
  type: string;
}

function renderForm(call: PageCall, options: { title: string; action: string; form: OrganizationForm; errors?: Record<string, string[]>; status?: number; cancel: string }): FastifyReply {
  const { t } = call;
  const errors = options.errors ?? {};
  return call.render(
    'client-form',
    {
      title: options.title,
      action: options.action,
      submitLabel: t.save,
      cancel: options.cancel,
      hasErrors: Object.keys(errors).length > 0,
      generalErrors: errors[''] ?? [],
      fields: [
        { name: 'name', label: t.orgName, type: 'text', value: options.form.name, errors: errors.name },
        { name: 'technical_name', label: t.technicalName, type: 'text', value: options.form.technical_name, errors: errors.technical_name },
        { name: 'parent_id', label: t.parentId, type: 'text', value: options.form.parent_id, hint: t.parentIdHint, errors: errors.parent_id },
        { name: 'type', label: t.orgType, type: 'text', value: options.form.type, errors: errors.type },
      ],
    },
    options.status ?? 200,
  );
}

function postedForm(form: Record<string, unknown>): OrganizationForm {
  return { name: field(form, 'name').trim(), technical_name: field(form, 'technical_name').trim(), parent_id: field(form, 'parent_id').trim(), type: field(form, 'type').trim() };
}

export const organizationPages: ConsolePage[] = [
  {
    method: 'GET',
    path: '/organizations',
    section: SECTION,
    async handle(call) {
      const query = listQuery(call);
      const page = await call.api.get<Page<OrganizationView>>('/organizations', { q: query.q, cursor: query.cursor, limit: PAGE_SIZE });
      return call.render('organizations', {
        title: call.t.organizationsTitle,
        q: query.q,
        items: page.items.map((o) => ({ ...o, href: `${CONSOLE_PATH}${orgPath(o.id)}` })),
        pager: pager('/organizations', query, page.next_cursor),
      });
    },
  },
  {
    method: 'GET',
    path: '/organizations/new',
    section: SECTION,
    async handle(call) {
      return renderForm(call, { title: call.t.newOrganization, action: `${CONSOLE_PATH}/organizations/new`, form: { name: '', technical_name: '', parent_id: '', type: '' }, cancel: `${CONSOLE_PATH}/organizations` });
    },
  },
  {
    method: 'POST',
    path: '/organizations/new',
    section: SECTION,
    async handle(call) {
      const form = postedForm(call.form);
      const body = Object.fromEntries(Object.entries(form).filter(([, v]) => v !== ''));
      const answer = await call.api.call('POST', '/organizations', { body });
      if (answer.status === 400 || answer.status === 409) return renderForm(call, { title: call.t.newOrganization, action: `${CONSOLE_PATH}/organizations/new`, form, errors: formErrors(answer.body), status: answer.status, cancel: `${CONSOLE_PATH}/organizations` });
      const created = ensureOk<OrganizationView>(answer);
      return call.redirect(orgPath(created.id), 'created');
    },
  },
  {
    method: 'GET',
    path: '/organizations/:id',
    section: SECTION,
    async handle(call) {
      const org = await call.api.get<OrganizationView>(orgPath(call.params.id ?? ''));
      return call.render('organization', {
        title: fill(call.t.organizationTitle, { name: org.name }),
        org,
        path: `${CONSOLE_PATH}${orgPath(org.id)}`,
        parentHref: org.parent_id ? `${CONSOLE_PATH}${orgPath(org.parent_id)}` : undefined,
        created: formatTime(call.locale, org.created_at),
        updated: formatTime(call.locale, org.updated_at),
      });
    },
  },
  {
    method: 'GET',
    path: '/organizations/:id/edit',
    section: SECTION,
    async handle(call) {
      const id = call.params.id ?? '';
      const org = await call.api.get<OrganizationView>(orgPath(id));
      const form = { name: org.name, technical_name: org.technical_name, parent_id: text(org.parent_id), type: text(org.type) };
      return renderForm(call, { title: fill(call.t.editOrganizationTitle, { name: org.name }), action: `${CONSOLE_PATH}${orgPath(id)}/edit`, form, cancel: `${CONSOLE_PATH}${orgPath(id)}` });
    },
  },
  {
    method: 'POST',
    path: '/organizations/:id/edit',
    section: SECTION,
    async handle(call) {
      const id = call.params.id ?? '';
      const form = postedForm(call.form);
      // Emptied: the friendly name falls back to the technical name, the parent to the root, the type to none.
      const body = { name: form.name || null, technical_name: form.technical_name, parent_id: form.parent_id || null, type: form.type || null };
      const answer = await call.api.call('PATCH', orgPath(id), { body });
      if (answer.status === 400 || answer.status === 409) return renderForm(call, { title: fill(call.t.editOrganizationTitle, { name: form.name || id }), action: `${CONSOLE_PATH}${orgPath(id)}/edit`, form, errors: formErrors(answer.body), status: answer.status, cancel: `${CONSOLE_PATH}${orgPath(id)}` });
      ensureOk(answer);
      return call.redirect(orgPath(id), 'saved');
    },
  },
  ...confirmedChange({
    path: '/organizations/:id/delete',
    section: SECTION,
    question: async (call) => fill(call.t.confirmDeleteOrganization, { name: (await call.api.get<OrganizationView>(orgPath(call.params.id ?? ''))).name }),
    submit: (t) => t.delete,
    back: (call) => orgPath(call.params.id ?? ''),
    async run(call) {
      await call.api.send('DELETE', orgPath(call.params.id ?? ''));
      return call.redirect('/organizations', 'deleted');
    },
  }),
];
