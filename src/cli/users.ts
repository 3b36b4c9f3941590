/** `gatehouse user …`: create and manage end-users. */
import type { Command } from 'commander';
import type { Group } from '../domain/group.ts';
import type { User, UserProfile } from '../domain/user.ts';
import type { UserChanges } from '../manage/users.ts';
import { attributeChanges, collect, passwordFrom, UsageError, withStore } from './context.ts';
import { isoTime, printFields, printJson, printLine, printTable } from './output.ts';
import { registerUserFactorCommands } from './user-factors.ts';

interface JsonFlag {
  json?: boolean;
}

interface PasswordFlags {
  password?: string;
  passwordStdin?: boolean;
}

interface CreateFlags extends PasswordFlags, JsonFlag {
  username: string;
  email?: string;
  emailVerified?: boolean;
  givenName?: string;
  familyName?: string;
  organization?: string;
  group?: string[];
}

interface UpdateFlags extends JsonFlag {
  username?: string;
  email?: string;
  emailVerified?: boolean;
  givenName?: string;
  familyName?: string;
  organization?: string;
  attribute?: string[];
  removeAttribute?: string[];
}

/**
 * A user on the wire: snake_case, with the names of its groups; never a password hash. A listed
 * user is a profile without custom attributes (listings never load them); `user show` has them.
 */
function userView(user: User | UserProfile, groups: Group[]): Record<string, unknown> {
  return {
    id: user.id,
    username: user.username,
    status: user.status,
    email: user.email,
    email_verified: user.emailVerified,
    given_name: user.givenName,
    family_name: user.familyName,
    organization_id: user.organizationId,
    groups: groups.map((g) => g.name),
    ...('attributes' in user ? { attributes: user.attributes } : {}),
    created_at: isoTime(user.createdAt),
    updated_at: isoTime(user.updatedAt),
  };
}

function show(view: Record<string, unknown>, json: boolean | undefined): void {
  if (json) return printJson(view);
  printFields(Object.entries(view).filter(([key, value]) => key !== 'attributes' || Object.keys(value as object).length > 0));
}

function withPasswordOptions(command: Command): Command {
  return command
    .option('--password <password>', 'the password (visible in the process list and shell history: prefer --password-stdin)')
    .option('--password-stdin', 'read the password from stdin (one trailing newline is dropped)');
}

export function registerUserCommands(program: Command): void {
  const user = program.command('user').description('create and manage users');

  withPasswordOptions(user.command('create').description('create a user (enabled) with a password'))
    .requiredOption('--username <username>', 'unique, compared case-insensitively')
    .option('--email <email>', 'email address')
    .option('--email-verified', 'you vouch for the address: the email_verified claim says true (docs/email-verification.md); without it the user verifies it by a link')
    .option('--given-name <name>', 'given (first) name')
    .option('--family-name <name>', 'family name (surname)')
    .option('--organization <id>', 'id of the organization the user belongs to')
    .option('--group <name>', 'add to this existing group (repeatable)', collect)
    .option('--json', 'print JSON only')
    .action((flags: CreateFlags) =>
      withStore(async ({ admin, acting }) => {
        const password = await passwordFrom(flags);
        const created = await admin.users.create(acting, {
          username: flags.username,
          password,
          email: flags.email,
          emailVerified: flags.emailVerified,
          givenName: flags.givenName,
          familyName: flags.familyName,
          organizationId: flags.organization,
          groups: flags.group,
        });
        show(userView(created, await admin.users.groupsOf(created.id)), flags.json);
      }),
    );

  user
    .command('list')
    .description('list users (without their custom attributes: see `user show`)')
    .option('--organization <id>', 'only the users of this organization')
    .option('--json', 'print JSON only')
    .action((flags: JsonFlag & { organization?: string }) =>
      withStore(async ({ admin }) => {
        const users = await admin.users.list(flags.organization === undefined ? {} : { organizationIds: [flags.organization] });
        if (flags.json) return printJson(await Promise.all(users.map(async (u) => userView(u, await admin.users.groupsOf(u.id)))));
        printTable(
          ['USERNAME', 'ID', 'STATUS', 'EMAIL', 'NAME'],
          users.map((u) => [u.username, u.id, u.status, u.email, [u.givenName, u.familyName].filter(Boolean).join(' ')]),
          'No users.',
        );
      }),
    );

  user
    .command('show')
    .description('show a user')
    .argument('<user>', 'id or username')
    .option('--json', 'print JSON only')
    .action((key: string, flags: JsonFlag) =>
      withStore(async ({ admin }) => {
        const found = await admin.users.get(key);
        show(userView(found, await admin.users.groupsOf(found.id)), flags.json);
      }),
    );

  user
    .command('update')
    .description("change a user's username, email, names, organization or custom attributes; the rest stay")
    .argument('<user>', 'id or username')
    .option('--username <username>', 'a new username (unique, compared case-insensitively)')
    .option('--email <email>', "email address ('' removes it); a changed address is unverified unless --email-verified comes with it")
    .option('--email-verified', 'you vouch for the address (as it is after this change): the email_verified claim says true (docs/email-verification.md)')
    .option('--no-email-verified', 'the address is not verified')
    .option('--given-name <name>', "given (first) name ('' removes it)")
    .option('--family-name <name>', "family name ('' removes it)")
    .option('--organization <id>', "id of the organization the user belongs to ('' removes the user from it)")
    .option('--attribute <name=value>', 'set a custom attribute; repeat the name for several values, which replace the stored ones', collect)
    .option('--remove-attribute <name>', 'remove a custom attribute (repeatable)', collect)
    .option('--json', 'print JSON only')
    .action((key: string, flags: UpdateFlags) =>
      withStore(async ({ admin, acting }) => {
        const changes: UserChanges = {
          username: flags.username,
          email: flags.email,
          emailVerified: flags.emailVerified,
          givenName: flags.givenName,
          familyName: flags.familyName,
          organizationId: flags.organization,
          attributes: attributeChanges(flags.attribute, flags.removeAttribute),
        };
        const fields = Object.entries(changes).filter(([, value]) => value !== undefined).map(([field]) => field);
        if (fields.length === 0) throw new UsageError('nothing to change: give --username, --email, --email-verified, --no-email-verified, --given-name, --family-name, --organization, --attribute or --remove-attribute');
        const changed = await admin.users.update(acting, key, changes);
        show(userView(changed, await admin.users.groupsOf(changed.id)), flags.json);
      }),
    );

  withPasswordOptions(user.command('set-password').description("replace a user's password").argument('<user>', 'id or username'))
    .option('--json', 'print JSON only')
    .action((key: string, flags: PasswordFlags & JsonFlag) =>
      withStore(async ({ admin, acting }) => {
        const changed = await admin.users.setPassword(acting, key, await passwordFrom(flags));
        if (flags.json) return printJson({ id: changed.id, username: changed.username, password_changed: true });
        printLine(`Password of ${changed.username} changed.`);
      }),
    );

  user
    .command('send-reset')
    .description("send the user a password reset link by mail instead of setting a password (docs/password-reset.md); exit 2 when mail is off")
    .argument('<user>', 'id or username')
    .option('--locale <locale>', 'the language of the mail: en, fi or sv', 'en')
    .option('--json', 'print JSON only')
    .action((key: string, flags: { locale: string } & JsonFlag) =>
      withStore(async ({ admin, acting }) => {
        const sent = await admin.users.sendPasswordReset(acting, key, { locale: flags.locale });
        if (flags.json) return printJson({ id: sent.user.id, username: sent.user.username, to: sent.user.email, message_id: sent.messageId });
        printLine(`Reset link for ${sent.user.username} queued to ${sent.user.email ?? ''} (outbox message ${sent.messageId}); a running server sends it.`);
      }),
    );

  user
    .command('send-verification')
    .description('send the user an e-mail verification link (docs/email-verification.md); exit 2 when mail is off')
    .argument('<user>', 'id or username')
    .option('--locale <locale>', 'the language of the mail: en, fi or sv', 'en')
    .option('--json', 'print JSON only')
    .action((key: string, flags: { locale: string } & JsonFlag) =>
      withStore(async ({ admin, acting }) => {
        const sent = await admin.users.sendEmailVerification(acting, key, { locale: flags.locale });
        if (flags.json) return printJson({ id: sent.user.id, username: sent.user.username, to: sent.user.email, message_id: sent.messageId });
        printLine(`Verification link for ${sent.user.username} queued to ${sent.user.email ?? ''} (outbox message ${sent.messageId}); a running server sends it.`);
      }),
    );

  for (const [name, status, description] of [
    ['enable', 'enabled', 'let the user log in again'],
    ['disable', 'disabled', 'refuse logins, end the user’s sessions and revoke their tokens'],
  ] as const) {
    user
      .command(name)
      .description(description)
      .argument('<user>', 'id or username')
      .option('--json', 'print JSON only')
      .action((key: string, flags: JsonFlag) =>
        withStore(async ({ admin, acting }) => {
          const changed = await admin.users.setStatus(acting, key, status);
          if (flags.json) return printJson(userView(changed, await admin.users.groupsOf(changed.id)));
          printLine(`User ${changed.username} is ${status}.`);
        }),
      );
  }

  user
    .command('delete')
    .description('delete a user for good, ending their sessions and revoking their tokens')
    .argument('<user>', 'id or username')
    .option('--json', 'print JSON only')
    .action((key: string, flags: JsonFlag) =>
      withStore(async ({ admin, acting }) => {
        const deleted = await admin.users.delete(acting, key);
        if (flags.json) return printJson({ id: deleted.id, username: deleted.username, deleted: true });
        printLine(`Deleted user ${deleted.username}.`);
      }),
    );

  registerUserFactorCommands(user);
}
