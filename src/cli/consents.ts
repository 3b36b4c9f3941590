/** `gatehouse consent …`: a user's consents to third-party clients (issue 13, item 4). */
import type { Command } from 'commander';
import type { Consent } from '../domain/consent.ts';
import { getUser } from '../identity/users.ts';
import { withdrawConsent } from '../oauth/consents.ts';
import { cliActor, UsageError, withStore } from './context.ts';
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
      withStore(async ({ store }) => {
        const user = await getUser(store, flags.user);
        const consents = await store.consents.listForUser(user.id);
        const clients = await Promise.all(consents.map((c) => store.clients.get(c.clientId)));
        const views = consents.map((c, i) => consentView(c, clients[i]?.name));
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
      withStore(async ({ store, deps, audit }) => {
        const user = await getUser(store, flags.user);
        if (!(await store.clients.get(flags.client))) throw new UsageError(`no client has the client_id ${JSON.stringify(flags.client)}`);
        const { withdrawn, revoked } = await withdrawConsent(store, user.id, flags.client, deps.clock.now());
        if (withdrawn || revoked > 0) audit.emit({ event: 'consent.withdrawn', userId: user.id, clientId: flags.client, revoked, actor: cliActor() });
        if (flags.json) return printJson({ user_id: user.id, client_id: flags.client, withdrawn, tokens_revoked: revoked });
        printLine(
          withdrawn
            ? `Withdrew ${user.username}'s consent to ${flags.client}; ${revoked} token${revoked === 1 ? '' : 's'} revoked.`
            : `${user.username} had no consent to ${flags.client}; ${revoked} token${revoked === 1 ? '' : 's'} revoked.`,
        );
      }),
    );
}
