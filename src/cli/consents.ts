/** `gatehouse consent …`: a user's consents to third-party clients (issue 13, item 4). */
import type { Command } from 'commander';
import type { Consent } from '../domain/consent.ts';
import { withStore } from './context.ts';
import { isoTime, printJson, printLine, printTable } from './output.ts';

interface JsonFlag {
  json?: boolean;
}

function consentView(consent: Consent, clientName: string | undefined): Record<string, unknown> {
  return {
    client_id: consent.clientId,
    client_name: clientName,
    scope: consent.scope.join(' '),
    granted_at: isoTime(consent.grantedAt),
    updated_at: isoTime(consent.updatedAt),
  };
}

export function registerConsentCommands(program: Command): void {
  const consent = program.command('consent').description("list and withdraw users' consents to third-party clients (consent_required)");

  consent
    .command('list')
    .description("list a user's consents: each client and the scope values the user allowed it")
    .requiredOption('--user <username-or-id>', 'the user, by username or id')
    .option('--json', 'print JSON only')
    .action((flags: JsonFlag & { user: string }) =>
      withStore(async ({ admin }) => {
        const user = await admin.users.get(flags.user);
        const views = (await admin.consents.list(user.id)).map((c) => consentView(c.consent, c.clientName));
        if (flags.json) return printJson(views);
        printTable(['CLIENT_ID', 'NAME', 'SCOPE', 'GRANTED', 'UPDATED'], views.map((v) => [v.client_id, v.client_name, v.scope, v.granted_at, v.updated_at]), 'No consents.');
      }),
    );

  consent
    .command('withdraw')
    .description("withdraw a user's consent to a client, revoking in the same transaction every token the client holds for the user; the consent page shows again at its next request")
    .requiredOption('--user <username-or-id>', 'the user, by username or id')
    .requiredOption('--client <client_id>', 'the client')
    .option('--json', 'print JSON only')
    .action((flags: JsonFlag & { user: string; client: string }) =>
      withStore(async ({ admin, acting }) => {
        const user = await admin.users.get(flags.user);
        const { withdrawn, revoked } = await admin.consents.withdraw(acting, user.id, flags.client);
        if (flags.json) return printJson({ user_id: user.id, client_id: flags.client, withdrawn, tokens_revoked: revoked });
        printLine(
          withdrawn
            ? `Withdrew ${user.username}'s consent to ${flags.client}; ${revoked} token${revoked === 1 ? '' : 's'} revoked.`
            : `${user.username} had no consent to ${flags.client}; ${revoked} token${revoked === 1 ? '' : 's'} revoked.`,
        );
      }),
    );
}
