/**
 * `gatehouse registrations …`: pending self-registrations (GATEHOUSE_REGISTRATION_APPROVAL;
 * docs/registration.md, "Approval"): list them, approve (the user may sign in and is mailed that
 * the account is ready) or reject (the account is deleted, and the user mailed unless --no-mail).
 * The use cases are the management API's and the console's (src/manage/registrations.ts).
 */
import type { Command } from 'commander';
import { withStore } from './context.ts';
import { printFields, printJson, printTable } from './output.ts';

interface Flags {
  json?: boolean;
  locale?: string;
  mail?: boolean;
}

export function registerRegistrationCommands(program: Command): void {
  const registrations = program.command('registrations').description('pending self-registrations: list, approve, reject (docs/registration.md)');

  registrations
    .command('list')
    .description('list the accounts awaiting approval (users of status pending)')
    .option('--json', 'print JSON only')
    .action((flags: Flags) =>
      withStore(async ({ admin }) => {
        const pending = await admin.users.list({ filters: { status: 'pending' }, exactMatch: true });
        if (flags.json) return printJson(pending.map((u) => ({ id: u.id, username: u.username, email: u.email ?? null, given_name: u.givenName ?? null, family_name: u.familyName ?? null, created_at: new Date(u.createdAt).toISOString() })));
        printTable(
          ['USERNAME', 'ID', 'NAME', 'CREATED_AT'],
          pending.map((u) => [u.username, u.id, [u.givenName, u.familyName].filter(Boolean).join(' '), new Date(u.createdAt).toISOString()]),
          'No pending registrations.',
        );
      }),
    );

  for (const verb of ['approve', 'reject'] as const) {
    const command = registrations
      .command(verb)
      .description(verb === 'approve' ? 'approve a pending registration: the user may sign in, and is mailed that the account is ready' : 'reject a pending registration: the account is deleted, and the user mailed')
      .argument('<user>', 'id or username (the e-mail address)')
      .option('--locale <locale>', "the mail's language: en, fi or sv (default: the one the user registered in)");
    if (verb === 'reject') command.option('--no-mail', 'delete without mailing the user');
    command.option('--json', 'print JSON only').action((key: string, flags: Flags) =>
      withStore(async ({ admin, acting }) => {
        const done = verb === 'approve' ? await admin.registrations.approve(acting, key, { locale: flags.locale }) : await admin.registrations.reject(acting, key, { locale: flags.locale, notify: flags.mail !== false });
        const result = { id: done.user.id, username: done.user.username, status: verb === 'approve' ? 'enabled' : 'deleted', message_id: done.messageId ?? null };
        if (flags.json) return printJson(result);
        printFields(Object.entries(result).map(([name, value]) => [name, value ?? '(no mail)']));
      }),
    );
  }
}
