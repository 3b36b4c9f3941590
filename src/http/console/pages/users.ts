/**
 * Users (docs/console.md, "Users"): list and search, create, view (groups, second factors, SSO
 * sessions, consents), edit, set the password, enable and disable, delete, add to and remove from
 * groups, remove a second factor or all of them, end a session, withdraw a consent. Every change is a call of the management API; destructive ones go
 * through a confirmation page first.
 */
import type { FastifyReply } from 'fastify';
import { ApiError, ensureOk, segment } from '../api.ts';
import { CONSOLE_PATH } from '../../../manage/management-clients.ts';
import { fill } from '../i18n.ts';
import { field, formErrors, type ConsolePage, type PageCall } from '../page.ts';
import { confirmedChange, formatTime, listQuery, pager, PAGE_SIZE, type Page } from './shared.ts';

type UserView = Record<string, unknown> & { id: string; username: string; status?: string; groups?: string[] };

const SECTION = 'users';
const userPath = (id: string) => `/users/${segment(id)}`;
const nameOf = (user: UserView) => user.username;
const text = (value: unknown) => (typeof value === 'string' ? value : '');

interface UserForm {
  username: string;
  email: string;
  given_name: string;
  family_name: string;
  password?: string;
  /** The "mark as verified" box: always shown unticked; ticked sends `email_verified: true`, unticked sends nothing (AM56). */
  email_verified?: boolean;
}

function renderForm(call: PageCall, options: { title: string; action: string; form: UserForm; withPassword: boolean; errors?: Record<string, string[]>; status?: number; cancel: string }): FastifyReply {
  const { t } = call;
  const errors = options.errors ?? {};
  const fields = [
    { name: 'username', label: t.username, type: 'text', value: options.form.username, required: true, errors: errors.username },
    { name: 'email', label: t.email, type: 'text', value: options.form.email, errors: errors.email },
    { name: 'given_name', label: t.givenName, type: 'text', value: options.form.given_name, errors: errors.given_name },
    { name: 'family_name', label: t.familyName, type: 'text', value: options.form.family_name, errors: errors.family_name },
    { name: 'email_verified', label: t.markEmailVerified, type: 'checkbox', value: options.form.email_verified === true, hint: t.markEmailVerifiedHint, errors: errors.email_verified },
    ...(options.withPassword ? [{ name: 'password', label: t.password, type: 'password', value: '', hint: t.passwordHint.replace('{min}', String(call.deps.config.passwordMinLength)), errors: errors.password }] : []),
  ];
  return call.render('client-form', { title: options.title, action: options.action, submitLabel: t.save, cancel: options.cancel, hasErrors: Object.keys(errors).length > 0, generalErrors: errors[''] ?? [], fields }, options.status ?? 200);
}

function postedForm(form: Record<string, unknown>): UserForm {
  return { username: field(form, 'username').trim(), email: field(form, 'email').trim(), given_name: field(form, 'given_name').trim(), family_name: field(form, 'family_name').trim(), password: field(form, 'password'), email_verified: field(form, 'email_verified') === 'true' };
}

/** A user confirmation page's question, naming the user. */
const aboutUser = (question: (t: PageCall['t']) => string) => async (call: PageCall) => fill(question(call.t), { name: nameOf(await call.api.get<UserView>(userPath(call.params.id ?? ''))) });

export const userPages: ConsolePage[] = [
  {
    method: 'GET',
    path: '/users',
    section: SECTION,
    async handle(call) {
      const query = listQuery(call);
      const page = await call.api.get<Page<UserView>>('/users', { q: query.q, cursor: query.cursor, limit: PAGE_SIZE });
      return call.render('users', {
        title: call.t.usersTitle,
        q: query.q,
        items: page.items.map((u) => ({ ...u, href: `${CONSOLE_PATH}${userPath(u.id)}` })),
        pager: pager('/users', query, page.next_cursor),
      });
    },
  },
  {
    method: 'GET',
    path: '/users/new',
    section: SECTION,
    async handle(call) {
      return renderForm(call, { title: call.t.newUserTitle, action: `${CONSOLE_PATH}/users/new`, form: { username: '', email: '', given_name: '', family_name: '' }, withPassword: true, cancel: `${CONSOLE_PATH}/users` });
    },
  },
  {
    method: 'POST',
    path: '/users/new',
    section: SECTION,
    async handle(call) {
      const form = postedForm(call.form);
      const body = Object.fromEntries(Object.entries(form).filter(([, v]) => v !== undefined && v !== '' && v !== false));
      const answer = await call.api.call('POST', '/users', { body });
      if (answer.status === 400 || answer.status === 409) return renderForm(call, { title: call.t.newUserTitle, action: `${CONSOLE_PATH}/users/new`, form, withPassword: true, errors: formErrors(answer.body), status: answer.status, cancel: `${CONSOLE_PATH}/users` });
      const user = ensureOk<UserView>(answer);
      return call.redirect(userPath(user.id), 'created');
    },
  },
  {
    method: 'GET',
    path: '/users/:id',
    section: SECTION,
    async handle(call) {
      const id = call.params.id ?? '';
      const user = await call.api.get<UserView>(userPath(id));
      // "Add to group" searches the groups (`?group_q=`) rather than listing a first page of them.
      const groupQuery = field(call.query, 'group_q').trim().slice(0, 200);
      const [factors, sessions, consents, groups] = await Promise.all([
        call.api.call('GET', `${userPath(id)}/factors`),
        call.api.call('GET', `${userPath(id)}/sessions`, { query: { limit: 200 } }),
        call.api.call('GET', `${userPath(id)}/consents`, { query: { limit: 200 } }),
        call.canWrite && groupQuery !== '' ? call.api.call('GET', '/groups', { query: { q: groupQuery, limit: 20 } }) : Promise.resolve(undefined),
      ]);
      const items = (answer: { status: number; body: unknown } | undefined) => (answer?.status === 200 ? (((answer.body as Page<Record<string, unknown>>).items ?? []) as Record<string, unknown>[]) : []);
      const path = `${CONSOLE_PATH}${userPath(id)}`;
      return call.render('user', {
        title: fill(call.t.userTitle, { name: nameOf(user) }),
        user,
        path,
        created: formatTime(call.locale, user.created_at),
        updated: formatTime(call.locale, user.updated_at),
        groups: (user.groups ?? []).map((name) => ({ name, href: `${CONSOLE_PATH}/groups/${segment(name)}` })),
        groupQuery,
        // "Send a reset link" (docs/password-reset.md): only while mail is on, for an enabled user with an address.
        mailOn: call.deps.config.smtpUrl !== undefined,
        groupsSearched: groups !== undefined,
        groupsMore: groups?.status === 200 && typeof (groups.body as Page<unknown>).next_cursor === 'string',
        otherGroups: items(groups)
          .map((g) => text(g.name))
          .filter((name) => name !== '' && !(user.groups ?? []).includes(name)),
        factors: items(factors).map((f) => ({
          name: text(f.name),
          kind: f.kind === 'totp' ? call.t.factorKind_totp : f.kind === 'recovery_codes' ? call.t.factorKind_recovery_codes : f.kind === 'passkey' ? call.t.factorKind_passkey : f.kind === 'email_otp' ? call.t.factorKind_email_otp.replace('{address}', () => text(f.email)) : text(f.kind),
          created: formatTime(call.locale, f.created_at),
          lastUsed: typeof f.last_used_at === 'string' ? formatTime(call.locale, f.last_used_at) : call.t.never,
          codesLeft: typeof f.codes_left === 'number' ? String(f.codes_left) : '',
          href: `${path}/factors/${segment(text(f.id))}/remove`,
          renameHref: `${path}/factors/${segment(text(f.id))}/rename`,
        })),
        sessions: items(sessions).map((s) => ({ id: text(s.id), started: formatTime(call.locale, s.created_at), expires: formatTime(call.locale, s.expires_at), clients: Array.isArray(s.clients) ? s.clients.join(', ') : '', href: `${path}/sessions/${segment(text(s.id))}/end` })),
        consents: items(consents).map((c) => ({ client: text(c.client_id), scope: Array.isArray(c.scope) ? c.scope.join(' ') : text(c.scope), granted: formatTime(call.locale, c.granted_at), href: `${path}/consents/${segment(text(c.client_id))}/withdraw` })),
      });
    },
  },
  {
    method: 'GET',
    path: '/users/:id/edit',
    section: SECTION,
    async handle(call) {
      const id = call.params.id ?? '';
      const user = await call.api.get<UserView>(userPath(id));
      const form = { username: user.username, email: text(user.email), given_name: text(user.given_name), family_name: text(user.family_name) };
      return renderForm(call, { title: fill(call.t.editUserTitle, { name: nameOf(user) }), action: `${CONSOLE_PATH}${userPath(id)}/edit`, form, withPassword: false, cancel: `${CONSOLE_PATH}${userPath(id)}` });
    },
  },
  {
    method: 'POST',
    path: '/users/:id/edit',
    section: SECTION,
    async handle(call) {
      const id = call.params.id ?? '';
      const form = postedForm(call.form);
      // An emptied optional field removes the value (null in the patch).
      const body = { username: form.username, email: form.email || null, given_name: form.given_name || null, family_name: form.family_name || null, ...(form.email_verified === true ? { email_verified: true } : {}) };
      const answer = await call.api.call('PATCH', userPath(id), { body });
      if (answer.status === 400 || answer.status === 409) return renderForm(call, { title: fill(call.t.editUserTitle, { name: form.username || id }), action: `${CONSOLE_PATH}${userPath(id)}/edit`, form, withPassword: false, errors: formErrors(answer.body), status: answer.status, cancel: `${CONSOLE_PATH}${userPath(id)}` });
      ensureOk(answer);
      return call.redirect(userPath(id), 'saved');
    },
  },
  {
    method: 'GET',
    path: '/users/:id/password',
    section: SECTION,
    async handle(call) {
      const id = call.params.id ?? '';
      const user = await call.api.get<UserView>(userPath(id));
      return passwordForm(call, id, nameOf(user));
    },
  },
  {
    method: 'POST',
    path: '/users/:id/password',
    section: SECTION,
    async handle(call) {
      const id = call.params.id ?? '';
      const answer = await call.api.call('PUT', `${userPath(id)}/password`, { body: { password: field(call.form, 'password') } });
      if (answer.status === 400) return passwordForm(call, id, id, formErrors(answer.body), 400);
      ensureOk(answer);
      return call.redirect(userPath(id), 'passwordSet');
    },
  },
  {
    method: 'POST',
    path: '/users/:id/enable',
    section: SECTION,
    async handle(call) {
      const id = call.params.id ?? '';
      await call.api.send('POST', `${userPath(id)}/enable`);
      return call.redirect(userPath(id), 'enabled');
    },
  },
  ...confirmedChange({
    path: '/users/:id/disable',
    section: SECTION,
    question: aboutUser((t) => t.confirmDisableUser),
    submit: (t) => t.disable,
    back: (call) => userPath(call.params.id ?? ''),
    async run(call) {
      await call.api.send('POST', `${userPath(call.params.id ?? '')}/disable`);
      return call.redirect(userPath(call.params.id ?? ''), 'disabled');
    },
  }),
  ...confirmedChange({
    path: '/users/:id/password-reset',
    section: SECTION,
    question: aboutUser((t) => t.confirmSendResetLink),
    submit: (t) => t.sendResetLink,
    back: (call) => userPath(call.params.id ?? ''),
    async run(call) {
      await call.api.send('POST', `${userPath(call.params.id ?? '')}/password-reset`, { locale: call.locale });
      return call.redirect(userPath(call.params.id ?? ''), 'resetSent');
    },
  }),
  ...confirmedChange({
    path: '/users/:id/email-verification',
    section: SECTION,
    question: aboutUser((t) => t.confirmSendVerificationLink),
    submit: (t) => t.sendVerificationLink,
    back: (call) => userPath(call.params.id ?? ''),
    async run(call) {
      await call.api.send('POST', `${userPath(call.params.id ?? '')}/email-verification`, { locale: call.locale });
      return call.redirect(userPath(call.params.id ?? ''), 'verificationSent');
    },
  }),
  ...confirmedChange({
    path: '/users/:id/delete',
    section: SECTION,
    question: aboutUser((t) => t.confirmDeleteUser),
    submit: (t) => t.delete,
    back: (call) => userPath(call.params.id ?? ''),
    async run(call) {
      await call.api.send('DELETE', userPath(call.params.id ?? ''));
      return call.redirect('/users', 'deleted');
    },
  }),
  {
    method: 'POST',
    path: '/users/:id/groups/add',
    section: SECTION,
    async handle(call) {
      const id = call.params.id ?? '';
      await call.api.send('PUT', `/groups/${segment(field(call.form, 'group'))}/members/${segment(id)}`);
      return call.redirect(userPath(id), 'added');
    },
  },
  {
    method: 'POST',
    path: '/users/:id/groups/remove',
    section: SECTION,
    async handle(call) {
      const id = call.params.id ?? '';
      await call.api.send('DELETE', `/groups/${segment(field(call.form, 'group'))}/members/${segment(id)}`);
      return call.redirect(userPath(id), 'removed');
    },
  },
  ...confirmedChange({
    path: '/users/:id/factors/:factor_id/remove',
    section: SECTION,
    async question(call) {
      const id = call.params.id ?? '';
      const [user, factors] = await Promise.all([call.api.get<UserView>(userPath(id)), call.api.get<{ items: { id: string; name: string }[] }>(`${userPath(id)}/factors`)]);
      const factorId = call.params.factor_id ?? '';
      return fill(call.t.confirmRemoveFactor, { name: nameOf(user), factor: factors.items.find((f) => f.id === factorId)?.name ?? factorId });
    },
    submit: (t) => t.removeFactor,
    back: (call) => userPath(call.params.id ?? ''),
    async run(call) {
      const id = call.params.id ?? '';
      await call.api.send('DELETE', `${userPath(id)}/factors/${segment(call.params.factor_id ?? '')}`);
      return call.redirect(userPath(id), 'removed');
    },
  }),
  {
    method: 'GET',
    path: '/users/:id/factors/:factor_id/rename',
    section: SECTION,
    async handle(call) {
      const id = call.params.id ?? '';
      const factor = await factorOf(call, id, call.params.factor_id ?? '');
      return renameFactorForm(call, id, factor.id, fill(call.t.renameFactorTitle, { name: factor.userName, factor: factor.name }), factor.name);
    },
  },
  {
    method: 'POST',
    path: '/users/:id/factors/:factor_id/rename',
    section: SECTION,
    async handle(call) {
      const id = call.params.id ?? '';
      const factorId = call.params.factor_id ?? '';
      const name = field(call.form, 'name');
      // The rule for names is the use case's (src/oauth/factors/changes.ts), through the API: a refusal names the field.
      const answer = await call.api.call('PATCH', `${userPath(id)}/factors/${segment(factorId)}`, { body: { name } });
      if (answer.status === 400) {
        const factor = await factorOf(call, id, factorId);
        return renameFactorForm(call, id, factor.id, fill(call.t.renameFactorTitle, { name: factor.userName, factor: factor.name }), name, formErrors(answer.body), 400);
      }
      ensureOk(answer);
      return call.redirect(userPath(id), 'renamed');
    },
  },
  ...confirmedChange({
    path: '/users/:id/factors/reset',
    section: SECTION,
    question: aboutUser((t) => t.confirmResetFactors),
    submit: (t) => t.resetFactors,
    back: (call) => userPath(call.params.id ?? ''),
    async run(call) {
      const id = call.params.id ?? '';
      await call.api.send('POST', `${userPath(id)}/factors/reset`);
      return call.redirect(userPath(id), 'reset');
    },
  }),
  ...confirmedChange({
    path: '/users/:id/sessions/:sid/end',
    section: SECTION,
    question: aboutUser((t) => t.confirmEndSession),
    submit: (t) => t.endSession,
    back: (call) => userPath(call.params.id ?? ''),
    async run(call) {
      const id = call.params.id ?? '';
      await call.api.send('DELETE', `${userPath(id)}/sessions/${segment(call.params.sid ?? '')}`);
      return call.redirect(userPath(id), 'ended');
    },
  }),
  ...confirmedChange({
    path: '/users/:id/consents/:client_id/withdraw',
    section: SECTION,
    question: async (call) => fill(call.t.confirmWithdrawConsent, { name: nameOf(await call.api.get<UserView>(userPath(call.params.id ?? ''))), client: call.params.client_id ?? '' }),
    submit: (t) => t.withdrawConsent,
    back: (call) => userPath(call.params.id ?? ''),
    async run(call) {
      const id = call.params.id ?? '';
      await call.api.send('DELETE', `${userPath(id)}/consents/${segment(call.params.client_id ?? '')}`);
      return call.redirect(userPath(id), 'withdrawn');
    },
  }),
];

/** The user's factor of that id, with the user's name for the page's title; the API's 404 (ApiError) when either is gone. */
async function factorOf(call: PageCall, id: string, factorId: string): Promise<{ id: string; name: string; userName: string }> {
  const [user, factors] = await Promise.all([call.api.get<UserView>(userPath(id)), call.api.get<{ items: { id: string; name: string }[] }>(`${userPath(id)}/factors`)]);
  const factor = factors.items.find((f) => f.id === factorId);
  if (factor === undefined) throw new ApiError({ status: 404, body: { title: 'Not Found', detail: 'the user has no such second factor' }, headers: {} });
  return { id: factor.id, name: factor.name, userName: nameOf(user) };
}

function renameFactorForm(call: PageCall, id: string, factorId: string, title: string, name: string, errors: Record<string, string[]> = {}, status = 200): FastifyReply {
  return call.render(
    'client-form',
    {
      title,
      action: `${CONSOLE_PATH}${userPath(id)}/factors/${segment(factorId)}/rename`,
      submitLabel: call.t.renameFactor,
      cancel: `${CONSOLE_PATH}${userPath(id)}`,
      hasErrors: Object.keys(errors).length > 0,
      generalErrors: errors[''] ?? [],
      fields: [{ name: 'name', label: call.t.factorName, type: 'text', value: name, required: true, errors: errors.name }],
    },
    status,
  );
}

function passwordForm(call: PageCall, id: string, name: string, errors: Record<string, string[]> = {}, status = 200): FastifyReply {
  return call.render(
    'client-form',
    {
      title: fill(call.t.setPasswordTitle, { name }),
      action: `${CONSOLE_PATH}${userPath(id)}/password`,
      submitLabel: call.t.setPassword,
      cancel: `${CONSOLE_PATH}${userPath(id)}`,
      hasErrors: Object.keys(errors).length > 0,
      generalErrors: errors[''] ?? [],
      fields: [{ name: 'password', label: call.t.password, type: 'password', value: '', required: true, errors: errors.password }],
    },
    status,
  );
}
