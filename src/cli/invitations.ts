/**
 * `gatehouse invitation …` (docs/invitations.md, docs/cli.md): invite someone by e-mail address,
 * list the invitations, resend one (a new link; the old one dies), revoke one. The mail is queued
 * with the invitation and a running server sends it; exit 2 when mail is off (GATEHOUSE_SMTP_URL
 * unset), for an address that has an account or a pending invitation, or an invitation that is
 * not pending.
 */
import type { Command } from 'commander';
import { INVITATION_STATUSES } from '../domain/invitation.ts';
import type { InvitationView } from '../manage/invitations.ts';
import { UsageError, withStore, wholeNumber } from './context.ts';
import { isoTime, printFields, printJson, printTable } from './output.ts';

function fields(i: InvitationView, messageId?: string): [string, unknown][] {
  return [
    ['id', i.id],
    ['email', i.email],
    ['given name', i.givenName],
    ['family name', i.familyName],
    ['organization', i.organizationId],
    ['status', i.status],
    ['locale', i.locale],
    ['invited by', i.invitedBy],
    ['created', isoTime(i.createdAt)],
    ['expires', isoTime(i.expiresAt)],
    ['ended', isoTime(i.endedAt)],
    ['user', i.userId],
    ['mail', messageId],
  ];
}

export function registerInvitationCommands(program: Command): void {
  const invitation = program.command('invitation').description('invitations by e-mail: the invitee follows the link, chooses a password and has an account (needs mail: GATEHOUSE_SMTP_URL)');
  invitation
    .command('create')
    .description('invite EMAIL: queue a mail with a link to choose a password; the account gets EMAIL as username and e-mail address')
    .argument('<email>', 'the address to invite')
    .option('--given-name <name>', "the account's given name")
    .option('--family-name <name>', "the account's family name")
    .option('--organization <id>', 'the organization the account is made in')
    .option('--locale <locale>', 'the language of the mail and its page: en, fi or sv', 'en')
    .option('--json', 'print JSON only')
    .action((email: string, flags: { givenName?: string; familyName?: string; organization?: string; locale: string; json?: boolean }) =>
      withStore(async ({ admin, acting }) => {
        const sent = await admin.invitations.invite(acting, { email, givenName: flags.givenName, familyName: flags.familyName, organizationId: flags.organization, locale: flags.locale });
        if (flags.json) return printJson({ ...sent.invitation, messageId: sent.messageId });
        printFields(fields(sent.invitation, sent.messageId));
      }),
    );
  invitation
    .command('list')
    .description('list the invitations, newest first')
    .option('--status <status>', `only invitations in this status: ${INVITATION_STATUSES.join(', ')}`)
    .option('--limit <n>', 'at most this many (default 50)')
    .option('--json', 'print JSON only')
    .action((flags: { status?: string; limit?: string; json?: boolean }) =>
      withStore(async ({ admin }) => {
        if (flags.status !== undefined && !(INVITATION_STATUSES as readonly string[]).includes(flags.status)) throw new UsageError(`--status must be one of ${INVITATION_STATUSES.join(', ')}`);
        const limit = flags.limit === undefined ? 50 : wholeNumber(flags.limit, '--limit');
        const rows = (await admin.invitations.page({ status: flags.status, limit })).slice(0, limit);
        if (flags.json) return printJson(rows);
        printTable(
          ['id', 'email', 'status', 'created', 'expires', 'invited by'],
          rows.map((i) => [i.id, i.email, i.status, isoTime(i.createdAt), isoTime(i.expiresAt), i.invitedBy]),
          'no invitations',
        );
      }),
    );
  invitation
    .command('resend')
    .description('send a pending invitation again with a new link and lifetime; the old link stops working')
    .argument('<id>', 'the invitation id')
    .option('--json', 'print JSON only')
    .action((id: string, flags: { json?: boolean }) =>
      withStore(async ({ admin, acting }) => {
        const sent = await admin.invitations.resend(acting, id);
        if (flags.json) return printJson({ ...sent.invitation, messageId: sent.messageId });
        printFields(fields(sent.invitation, sent.messageId));
      }),
    );
  invitation
    .command('revoke')
    .description('revoke a pending invitation: its link stops working')
    .argument('<id>', 'the invitation id')
    .option('--json', 'print JSON only')
    .action((id: string, flags: { json?: boolean }) =>
      withStore(async ({ admin, acting }) => {
        const revoked = await admin.invitations.revoke(acting, id);
        if (flags.json) return printJson(revoked);
        printFields(fields(revoked));
      }),
    );
}
