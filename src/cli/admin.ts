/** `gatehouse admin …`: setting up the management API and the web console (docs/management-api.md). */
import type { Command } from 'commander';
import { resourceUrisOf } from '../domain/client.ts';
import { readStdinSecret, withStore } from './context.ts';
import { printJson, printLine } from './output.ts';

interface BootstrapFlags {
  username?: string;
  passwordStdin?: boolean;
  email?: string;
  json?: boolean;
}

export function registerAdminCommands(program: Command): void {
  const admin = program.command('admin').description('set up the management API and the web console');

  admin
    .command('bootstrap')
    .description(
      "create what the management API and web console need, where missing: the clients gatehouse-manage-api and gatehouse-console, the groups GATEHOUSE_ADMIN_GROUP and GATEHOUSE_ADMIN_READONLY_GROUP, and with --username the first administrator; running it again changes nothing. Only the store's settings matter: the server puts its own issuer's URIs into the two clients",
    )
    .option('--username <username>', 'create this administrator (in GATEHOUSE_ADMIN_GROUP) unless a user of that name exists')
    .option('--password-stdin', "read the administrator's password from stdin (otherwise one is generated and printed once)")
    .option('--email <email>', "the administrator's email address")
    .option('--json', 'print JSON only')
    .action((flags: BootstrapFlags) =>
      withStore(async (env) => {
        const password = flags.passwordStdin ? await readStdinSecret() : undefined;
        const result = await env.admin.bootstrap(env.acting, { username: flags.username, password, email: flags.email });
        // Where the console and the API are, as the store has them: a server that ran puts its own
        // issuer's URIs there (docs/decisions.md CO14), whatever issuer this command was given.
        const { console: consoleClient, api: apiClient } = await env.admin.clients.managementClients();
        const consoleUrl = consoleClient?.postLogoutRedirectUris[0];
        const apiUrl = apiClient === undefined ? undefined : resourceUrisOf(apiClient)[0];
        if (flags.json) {
          return printJson({
            changed: result.changed,
            created: { clients: result.clients, groups: result.groups, ...(result.user?.created ? { user: { id: result.user.id, username: result.user.username } } : {}) },
            ...(result.user && !result.user.created ? { existing_user: { id: result.user.id, username: result.user.username } } : {}),
            ...(result.generatedPassword === undefined ? {} : { password: result.generatedPassword }),
            ...(apiUrl === undefined ? {} : { api: apiUrl }),
            ...(consoleUrl === undefined ? {} : { console: consoleUrl }),
          });
        }
        if (!result.changed) printLine('Nothing to do: the management API is set up already.');
        for (const clientId of result.clients) printLine(`Created client ${clientId}.`);
        for (const group of result.groups) printLine(`Created group ${group}.`);
        if (result.user?.created) printLine(`Created administrator ${result.user.username} (${result.user.id}) in ${env.config.manageAdminGroup}.`);
        else if (result.user) printLine(`User ${result.user.username} exists already: left unchanged (add them with \`gatehouse group add-member\` if they should administer).`);
        if (result.generatedPassword !== undefined) printLine(`Password: ${result.generatedPassword}  (shown once: store it now)`);
        if (consoleUrl !== undefined) printLine(`Web console: ${consoleUrl}`);
        if (apiUrl !== undefined) printLine(`Management API: ${apiUrl}`);
        // Made just now from this command's GATEHOUSE_ISSUER, which need not be the server's.
        if (result.clients.length > 0) printLine('(A server with another GATEHOUSE_ISSUER puts its own address into these registrations when it starts, or when its console is opened.)');
      }),
    );
}
