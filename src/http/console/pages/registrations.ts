/**
 * Pending registrations (docs/registration.md, "Approval"; docs/console.md): the self-registered
 * accounts awaiting an administrator (users of status pending), oldest name first as the API
 * lists users; an administrator approves (the user is mailed that the account is ready) or
 * rejects (the account is deleted and the user mailed) each after a confirmation, through the
 * management API (POST /users/{id}/approve|reject). Under the Users section, linked from its list.
 */
import { segment } from '../api.ts';
import { fill } from '../i18n.ts';
import type { ConsolePage, PageCall } from '../page.ts';
import { confirmedChange, formatTime, listQuery, PAGE_SIZE, statusPager, type Page } from './shared.ts';

const SECTION = 'users';
const PATH = '/registrations';

type PendingView = { id: string; username: string; email: string | null; given_name: string | null; family_name: string | null; created_at: string };

/** The pending user the confirmation names: its username, or the id when it is gone. */
async function nameOf(call: PageCall): Promise<string> {
  const user = await call.api.get<PendingView>(`/users/${segment(call.params.id ?? '')}`).catch(() => undefined);
  return user?.username ?? call.params.id ?? '';
}

export const registrationPages: ConsolePage[] = [
  {
    method: 'GET',
    path: PATH,
    section: SECTION,
    async handle(call) {
      const { t } = call;
      const { cursor } = listQuery(call);
      const page = await call.api.get<Page<PendingView>>('/users', { cursor, limit: PAGE_SIZE, status: 'pending' });
      return call.render('registrations', {
        title: t.registrationsTitle,
        approvalOn: call.deps.config.registrationApproval,
        items: page.items.map((u) => ({
          ...u,
          name: [u.given_name, u.family_name].filter(Boolean).join(' '),
          created: formatTime(call.locale, u.created_at),
          approve: `/manage${PATH}/${segment(u.id)}/approve`,
          reject: `/manage${PATH}/${segment(u.id)}/reject`,
        })),
        pager: statusPager(PATH, undefined, cursor, page.next_cursor),
      });
    },
  },
  ...(['approve', 'reject'] as const).flatMap((verb) =>
    confirmedChange({
      path: `${PATH}/:id/${verb}`,
      section: SECTION,
      question: async (call) => fill(verb === 'approve' ? call.t.confirmApproveRegistration : call.t.confirmRejectRegistration, { name: await nameOf(call) }),
      submit: (t) => (verb === 'approve' ? t.approveRegistration : t.rejectRegistration),
      back: () => PATH,
      async run(call) {
        // No locale: the mail goes out in the language the user registered in, not the console's (AM105).
        await call.api.send('POST', `/users/${segment(call.params.id ?? '')}/${verb}`, {});
        return call.redirect(PATH, verb === 'approve' ? 'approved' : 'rejected');
      },
    }),
  ),
];
