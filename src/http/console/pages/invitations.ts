/**
 * Invitations (docs/invitations.md; docs/console.md): the list newest first, filtered by status;
 * a form to invite an address; resend (a new link, the old one dead) and revoke after a
 * confirmation. When mail is off the page says so and the API refuses to invite.
 */
import { INVITATION_STATUSES } from '../../../domain/invitation.ts';
import { CONSOLE_PATH } from '../../../manage/management-clients.ts';
import { MAIL_LOCALES } from '../../../oauth/outbox/mail.ts';
import { segment } from '../api.ts';
import { fill } from '../i18n.ts';
import { field, formErrors, type ConsolePage, type PageCall } from '../page.ts';
import { confirmedChange, formatTime, listQuery, PAGE_SIZE, statusFilterOf, statusList, type Page } from './shared.ts';

const SECTION = 'invitations';
const PATH = '/invitations';

type InvitationView = { id: string; email: string; status: (typeof INVITATION_STATUSES)[number]; invited_by: string; created_at: string; expires_at: string };
type InviteForm = { email: string; given_name: string; family_name: string; locale: string };

const statusOf = (call: PageCall) => statusFilterOf(call, INVITATION_STATUSES);

function inviteForm(call: PageCall, form: InviteForm, errors: Record<string, string[]> = {}, status = 200) {
  const { t } = call;
  return call.render(
    'client-form',
    {
      title: t.newInvitationTitle,
      action: `${CONSOLE_PATH}${PATH}/new`,
      submitLabel: t.invite,
      cancel: `${CONSOLE_PATH}${PATH}`,
      hasErrors: Object.keys(errors).length > 0,
      generalErrors: errors[''] ?? [],
      fields: [
        { name: 'email', label: t.email, type: 'text', value: form.email, required: true, hint: t.invitationEmailHint, errors: errors.email },
        { name: 'given_name', label: t.givenName, type: 'text', value: form.given_name, errors: errors.given_name },
        { name: 'family_name', label: t.familyName, type: 'text', value: form.family_name, errors: errors.family_name },
        { name: 'locale', label: t.invitationLocale, type: 'select', value: form.locale, options: MAIL_LOCALES.map((l) => [l, t[`invitationLocale_${l}`]]), errors: errors.locale },
      ],
    },
    status,
  );
}

export const invitationPages: ConsolePage[] = [
  {
    method: 'GET',
    path: PATH,
    section: SECTION,
    async handle(call) {
      const { t } = call;
      const status = statusOf(call);
      const { cursor } = listQuery(call);
      const page = await call.api.get<Page<InvitationView>>('/invitations', { cursor, limit: PAGE_SIZE, status });
      return call.render('invitations', {
        title: t.invitationsTitle,
        mailOn: call.deps.config.smtpUrl !== undefined,
        newHref: `${CONSOLE_PATH}${PATH}/new`,
        ...statusList(PATH, INVITATION_STATUSES, { status, cursor, nextCursor: page.next_cursor }, (s) => (s === undefined ? t.outboxAll : t[`invitation_${s}`])),
        items: page.items.map((i) => ({
          ...i,
          state: t[`invitation_${i.status}`],
          created: formatTime(call.locale, i.created_at),
          expires: formatTime(call.locale, i.expires_at),
          resend: i.status === 'pending' || i.status === 'expired' ? `${CONSOLE_PATH}${PATH}/${segment(i.id)}/resend` : undefined,
          revoke: i.status === 'pending' ? `${CONSOLE_PATH}${PATH}/${segment(i.id)}/revoke` : undefined,
        })),
      });
    },
  },
  {
    method: 'GET',
    path: `${PATH}/new`,
    section: SECTION,
    async handle(call) {
      return inviteForm(call, { email: '', given_name: '', family_name: '', locale: call.locale });
    },
  },
  {
    method: 'POST',
    path: `${PATH}/new`,
    section: SECTION,
    async handle(call) {
      const form = { email: field(call.form, 'email').trim(), given_name: field(call.form, 'given_name').trim(), family_name: field(call.form, 'family_name').trim(), locale: field(call.form, 'locale') };
      const body = Object.fromEntries(Object.entries(form).filter(([, value]) => value !== ''));
      const answer = await call.api.call('POST', '/invitations', { body });
      if (answer.status === 400 || answer.status === 409) return inviteForm(call, form, formErrors(answer.body), answer.status);
      if (answer.status !== 201) throw new Error(`POST /invitations answered ${answer.status}`);
      return call.redirect(`${PATH}?status=pending`, 'invited');
    },
  },
  ...confirmedChange({
    path: `${PATH}/:id/resend`,
    section: SECTION,
    question: async (call) => fill(call.t.confirmResendInvitation, { email: (await call.api.get<InvitationView>(`/invitations/${segment(call.params.id ?? '')}`)).email }),
    submit: (t) => t.resend,
    back: () => PATH,
    async run(call) {
      await call.api.send('POST', `/invitations/${segment(call.params.id ?? '')}/resend`);
      return call.redirect(`${PATH}?status=pending`, 'resent');
    },
  }),
  ...confirmedChange({
    path: `${PATH}/:id/revoke`,
    section: SECTION,
    question: async (call) => fill(call.t.confirmRevokeInvitation, { email: (await call.api.get<InvitationView>(`/invitations/${segment(call.params.id ?? '')}`)).email }),
    submit: (t) => t.revoke,
    back: () => PATH,
    async run(call) {
      await call.api.send('DELETE', `/invitations/${segment(call.params.id ?? '')}`);
      return call.redirect(`${PATH}?status=revoked`, 'revoked');
    },
  }),
];
