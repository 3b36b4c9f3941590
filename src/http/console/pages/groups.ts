/**
 * Groups (docs/console.md, "Groups"): list and search, create, view with its members (paged), add
 * a member by username, remove one, delete the group after a confirmation.
 */
import { ensureOk, segment } from '../api.ts';
import { CONSOLE_PATH } from '../../../manage/management-clients.ts';
import { fill } from '../i18n.ts';
import { field, formErrors, type ConsolePage, type PageCall } from '../page.ts';
import { confirmedChange, formatTime, listQuery, pager, PAGE_SIZE, type Page } from './shared.ts';

type GroupView = Record<string, unknown> & { name: string; description?: string };

const SECTION = 'groups';
const groupPath = (name: string) => `/groups/${segment(name)}`;

export const groupPages: ConsolePage[] = [
  {
    method: 'GET',
    path: '/groups',
    section: SECTION,
    async handle(call) {
      const query = listQuery(call);
      const page = await call.api.get<Page<GroupView>>('/groups', { q: query.q, cursor: query.cursor, limit: PAGE_SIZE });
      return call.render('groups', {
        title: call.t.groupsTitle,
        q: query.q,
        items: page.items.map((g) => ({ ...g, href: `${CONSOLE_PATH}${groupPath(g.name)}`, created: formatTime(call.locale, g.created_at) })),
        pager: pager('/groups', query, page.next_cursor),
      });
    },
  },
  {
    method: 'GET',
    path: '/groups/new',
    section: SECTION,
    async handle(call) {
      return groupForm(call, { name: '', description: '' });
    },
  },
  {
    method: 'POST',
    path: '/groups/new',
    section: SECTION,
    async handle(call) {
      const form = { name: field(call.form, 'name').trim(), description: field(call.form, 'description').trim() };
      const answer = await call.api.call('POST', '/groups', { body: form.description === '' ? { name: form.name } : form });
      if (answer.status === 400 || answer.status === 409) return groupForm(call, form, formErrors(answer.body), answer.status);
      const group = ensureOk<GroupView>(answer);
      return call.redirect(groupPath(group.name), 'created');
    },
  },
  {
    method: 'GET',
    path: '/groups/:name',
    section: SECTION,
    async handle(call) {
      const name = call.params.name ?? '';
      const query = listQuery(call);
      const [group, members] = await Promise.all([
        call.api.get<GroupView>(groupPath(name)),
        call.api.get<Page<{ id: string; username: string }>>(`${groupPath(name)}/members`, { cursor: query.cursor, limit: PAGE_SIZE }),
      ]);
      const path = `${CONSOLE_PATH}${groupPath(group.name)}`;
      return call.render('group', {
        title: fill(call.t.groupTitle, { name: group.name }),
        group,
        path,
        created: formatTime(call.locale, group.created_at),
        members: members.items.map((m) => ({ ...m, href: `${CONSOLE_PATH}/users/${segment(m.id)}` })),
        pager: pager(groupPath(group.name), { q: '', cursor: query.cursor }, members.next_cursor),
        memberError: typeof call.query.missing === 'string' ? fill(call.t.noSuchUser, { username: call.query.missing.slice(0, 200) }) : undefined,
      });
    },
  },
  {
    method: 'POST',
    path: '/groups/:name/members/add',
    section: SECTION,
    async handle(call) {
      const name = call.params.name ?? '';
      const username = field(call.form, 'username').trim();
      const user = username === '' ? undefined : await userByUsername(call, username);
      if (user === undefined) return call.redirect(`${groupPath(name)}?missing=${encodeURIComponent(username)}`);
      await call.api.send('PUT', `${groupPath(name)}/members/${segment(user.id)}`);
      return call.redirect(groupPath(name), 'added');
    },
  },
  {
    method: 'POST',
    path: '/groups/:name/members/:user_id/remove',
    section: SECTION,
    async handle(call) {
      const name = call.params.name ?? '';
      await call.api.send('DELETE', `${groupPath(name)}/members/${segment(call.params.user_id ?? '')}`);
      return call.redirect(groupPath(name), 'removed');
    },
  },
  ...confirmedChange({
    path: '/groups/:name/delete',
    section: SECTION,
    question: async (call) => fill(call.t.confirmDeleteGroup, { name: (await call.api.get<GroupView>(groupPath(call.params.name ?? ''))).name }),
    submit: (t) => t.delete,
    back: (call) => groupPath(call.params.name ?? ''),
    async run(call) {
      await call.api.send('DELETE', groupPath(call.params.name ?? ''));
      return call.redirect('/groups', 'deleted');
    },
  }),
];

/**
 * The user whose username is exactly `username` (the API adds members by user id). `GET /users?q=`
 * is a substring search, so the exact one may sit on a later page: the pages are walked until it
 * is found or they end (bounded, so a hostile name cannot make the console page forever).
 */
async function userByUsername(call: PageCall, username: string): Promise<{ id: string; username: string } | undefined> {
  let cursor: string | undefined;
  for (let pages = 0; pages < 20; pages++) {
    const found = await call.api.get<Page<{ id: string; username: string }>>('/users', { q: username, limit: 200, cursor });
    const user = found.items.find((u) => u.username === username);
    if (user !== undefined) return user;
    if (typeof found.next_cursor !== 'string' || found.next_cursor === '') return undefined;
    cursor = found.next_cursor;
  }
  return undefined;
}

function groupForm(call: Parameters<ConsolePage['handle']>[0], form: { name: string; description: string }, errors: Record<string, string[]> = {}, status = 200) {
  return call.render(
    'client-form',
    {
      title: call.t.newGroupTitle,
      action: `${CONSOLE_PATH}/groups/new`,
      submitLabel: call.t.save,
      cancel: `${CONSOLE_PATH}/groups`,
      hasErrors: Object.keys(errors).length > 0,
      generalErrors: errors[''] ?? [],
      fields: [
        { name: 'name', label: call.t.groupName, type: 'text', value: form.name, required: true, errors: errors.name },
        { name: 'description', label: call.t.description, type: 'text', value: form.description, errors: errors.description },
      ],
    },
    status,
  );
}
