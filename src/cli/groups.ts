/** `gatehouse group …`: named groups and their members. */
import type { Command } from 'commander';
import type { Group } from '../domain/group.ts';
import type { Membership } from '../manage/groups.ts';
import { withStore } from './context.ts';
import { isoTime, printFields, printJson, printLine, printTable } from './output.ts';

interface JsonFlag {
  json?: boolean;
}

function groupView(group: Group, members?: number): Record<string, unknown> {
  return { id: group.id, name: group.name, description: group.description, administrator: group.administrator, members, created_at: isoTime(group.createdAt) };
}

function membershipView(m: Membership): Record<string, unknown> {
  return { group: m.group.name, user_id: m.user.id, username: m.user.username, changed: m.changed };
}

export function registerGroupCommands(program: Command): void {
  const group = program.command('group').description('manage groups and their members');

  group
    .command('create')
    .description('create a group (names compare case-insensitively)')
    .argument('<name>')
    .option('--description <text>', 'what the group is for')
    .option('--json', 'print JSON only')
    .action((name: string, flags: JsonFlag & { description?: string }) =>
      withStore(async ({ admin, acting }) => {
        const created = await admin.groups.create(acting, { name, description: flags.description });
        if (flags.json) return printJson(groupView(created));
        printFields(Object.entries(groupView(created)).filter(([key]) => key !== 'members'));
      }),
    );

  group
    .command('list')
    .description('list groups with their member counts and whether each is marked as an administrator group')
    .option('--json', 'print JSON only')
    .action((flags: JsonFlag) =>
      withStore(async ({ admin }) => {
        const groups = await admin.groups.list();
        const counts = await Promise.all(groups.map(async (g) => (await admin.groups.memberIds(g.name)).length));
        if (flags.json) return printJson(groups.map((g, i) => groupView(g, counts[i])));
        printTable(['NAME', 'MEMBERS', 'ADMINISTRATOR', 'DESCRIPTION'], groups.map((g, i) => [g.name, counts[i], g.administrator ? 'yes' : 'no', g.description]), 'No groups.');
      }),
    );

  group
    .command('members')
    .description("list a group's members")
    .argument('<group>', 'group name')
    .option('--json', 'print JSON only')
    .action((name: string, flags: JsonFlag) =>
      withStore(async ({ admin }) => {
        const profiles = await admin.groups.members(name);
        if (flags.json) return printJson(profiles.map((u) => ({ id: u.id, username: u.username, status: u.status, email: u.email })));
        printTable(['USERNAME', 'ID', 'STATUS', 'EMAIL'], profiles.map((u) => [u.username, u.id, u.status, u.email]), 'No members.');
      }),
    );

  group
    .command('delete')
    .description('delete a group and its memberships (the users stay)')
    .argument('<group>', 'group name')
    .option('--json', 'print JSON only')
    .action((name: string, flags: JsonFlag) =>
      withStore(async ({ admin, acting }) => {
        const { group: deleted, members } = await admin.groups.delete(acting, name);
        if (flags.json) return printJson({ id: deleted.id, name: deleted.name, deleted: true, members_removed: members.length });
        printLine(`Deleted group ${deleted.name} (${members.length} member${members.length === 1 ? '' : 's'} removed from it).`);
      }),
    );

  group
    .command('unmark-administrator')
    .description('clear the mark of a group that was an administrator group, so the identity API may change it and its members again (refused while GATEHOUSE_ADMIN_GROUP or GATEHOUSE_ADMIN_READONLY_GROUP names it)')
    .argument('<group>', 'group name')
    .option('--json', 'print JSON only')
    .action((name: string, flags: JsonFlag) =>
      withStore(async ({ admin, acting }) => {
        const { group: unmarked, changed } = await admin.groups.unmarkAdministrator(acting, name);
        if (flags.json) return printJson({ id: unmarked.id, name: unmarked.name, administrator: false, changed });
        printLine(changed ? `Unmarked ${unmarked.name}: it is an ordinary group now.` : `${unmarked.name} was not marked as an administrator group.`);
      }),
    );

  for (const [name, change, description] of [
    ['add-member', 'addMember', 'add a user (id or username) to a group'],
    ['remove-member', 'removeMember', 'remove a user (id or username) from a group'],
  ] as const) {
    group
      .command(name)
      .description(description)
      .argument('<group>', 'group name')
      .argument('<user>', 'user id or username')
      .option('--json', 'print JSON only')
      .action((groupName: string, user: string, flags: JsonFlag) =>
        withStore(async ({ admin, acting }) => {
          const membership = await admin.groups[change](acting, groupName, user);
          if (flags.json) return printJson(membershipView(membership));
          const { group: g, user: u, changed } = membership;
          const added = name === 'add-member';
          printLine(
            changed
              ? `${added ? 'Added' : 'Removed'} ${u.username} ${added ? 'to' : 'from'} ${g.name}.`
              : `${u.username} ${added ? 'already is' : 'is not'} a member of ${g.name}.`,
          );
        }),
      );
  }
}
