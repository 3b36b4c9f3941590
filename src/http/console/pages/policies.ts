/**
 * Authorization policies (docs/console.md, "Policies"): list and search, view, create and edit the
 * document as JSON (the API's field errors shown under the text area, each with its JSON path),
 * delete after a confirmation.
 */
import { segment } from '../api.ts';
import { CONSOLE_PATH } from '../../../manage/management-clients.ts';
import { fill } from '../i18n.ts';
import { renderDocumentForm, submitDocument, type ConsolePage, type DocumentForm, type PageCall } from '../page.ts';
import { formatTime, listQuery, pager, PAGE_SIZE, type Page } from './shared.ts';

type PolicyView = Record<string, unknown> & { name: string; version?: number; created_at?: string; updated_at?: string };

const SECTION = 'policies';
const policyPath = (name: string) => `/policies/${segment(name)}`;

/** The document as an administrator edits it: the policy without the API's bookkeeping. */
function documentText(policy: PolicyView): string {
  const { version: _version, created_at: _created, updated_at: _updated, clients: _clients, ...document } = policy;
  return JSON.stringify(document, null, 2);
}

const EXAMPLE = JSON.stringify({ name: 'staff-only', access: { groups: ['Staff'] } }, null, 2);

/** The policy editor: one JSON text area, saved with Save. */
function policyForm(call: PageCall, options: Pick<DocumentForm, 'title' | 'action' | 'cancel'>): Omit<DocumentForm, 'text'> {
  return { ...options, submit: call.t.save, label: call.t.policyDocument, hint: call.t.policyDocumentHint, rows: 16 };
}

export const policyPages: ConsolePage[] = [
  {
    method: 'GET',
    path: '/policies',
    section: SECTION,
    async handle(call) {
      const query = listQuery(call);
      const page = await call.api.get<Page<PolicyView>>('/policies', { q: query.q, cursor: query.cursor, limit: PAGE_SIZE });
      return call.render('policies', {
        title: call.t.policiesTitle,
        q: query.q,
        items: page.items.map((p) => ({ ...p, href: `${CONSOLE_PATH}${policyPath(p.name)}`, updated: formatTime(call.locale, p.updated_at) })),
        pager: pager('/policies', query, page.next_cursor),
      });
    },
  },
  {
    method: 'GET',
    path: '/policies/new',
    section: SECTION,
    async handle(call) {
      return renderDocumentForm(call, { ...policyForm(call, { title: call.t.newPolicyTitle, action: `${CONSOLE_PATH}/policies/new`, cancel: `${CONSOLE_PATH}/policies` }), text: EXAMPLE });
    },
  },
  {
    method: 'POST',
    path: '/policies/new',
    section: SECTION,
    async handle(call) {
      const form = policyForm(call, { title: call.t.newPolicyTitle, action: `${CONSOLE_PATH}/policies/new`, cancel: `${CONSOLE_PATH}/policies` });
      const outcome = await submitDocument<PolicyView>(call, form, (document) => call.api.call('POST', '/policies', { body: document }));
      if (!outcome.ok) return outcome.page;
      const policy = outcome.body;
      return call.redirect(policyPath(policy.name), 'created');
    },
  },
  {
    method: 'GET',
    path: '/policies/:name',
    section: SECTION,
    async handle(call) {
      const name = call.params.name ?? '';
      const policy = await call.api.get<PolicyView>(policyPath(name));
      return call.render('policy', {
        title: fill(call.t.policyTitle, { name: policy.name }),
        policy,
        created: formatTime(call.locale, policy.created_at),
        updated: formatTime(call.locale, policy.updated_at),
        document: documentText(policy),
        clients: Array.isArray(policy.clients) ? policy.clients : [],
        path: `${CONSOLE_PATH}${policyPath(policy.name)}`,
      });
    },
  },
  {
    method: 'GET',
    path: '/policies/:name/edit',
    section: SECTION,
    async handle(call) {
      const name = call.params.name ?? '';
      const policy = await call.api.get<PolicyView>(policyPath(name));
      return renderDocumentForm(call, { ...policyForm(call, { title: fill(call.t.editPolicyTitle, { name }), action: `${CONSOLE_PATH}${policyPath(name)}/edit`, cancel: `${CONSOLE_PATH}${policyPath(name)}` }), text: documentText(policy) });
    },
  },
  {
    method: 'POST',
    path: '/policies/:name/edit',
    section: SECTION,
    async handle(call) {
      const name = call.params.name ?? '';
      const form = policyForm(call, { title: fill(call.t.editPolicyTitle, { name }), action: `${CONSOLE_PATH}${policyPath(name)}/edit`, cancel: `${CONSOLE_PATH}${policyPath(name)}` });
      const outcome = await submitDocument(call, form, (document) => call.api.call('PUT', policyPath(name), { body: document }));
      if (!outcome.ok) return outcome.page;
      return call.redirect(policyPath(name), 'saved');
    },
  },
  {
    method: 'GET',
    path: '/policies/:name/delete',
    section: SECTION,
    async handle(call) {
      const name = call.params.name ?? '';
      const policy = await call.api.get<PolicyView>(policyPath(name));
      return call.render('confirm', {
        title: call.t.confirmTitle,
        question: fill(call.t.confirmDeletePolicy, { name: policy.name }),
        action: `${CONSOLE_PATH}${policyPath(name)}/delete`,
        submitLabel: call.t.delete,
        cancel: `${CONSOLE_PATH}${policyPath(name)}`,
      });
    },
  },
  {
    method: 'POST',
    path: '/policies/:name/delete',
    section: SECTION,
    async handle(call) {
      await call.api.send('DELETE', policyPath(call.params.name ?? ''));
      return call.redirect('/policies', 'deleted');
    },
  },
];
