/**
 * The `gatehouse` program: every command group, and how errors become one line on stderr.
 * Exit codes: 0 on success; 2 on any error, printed as one line "gatehouse: …" on stderr.
 */
import { Command, type OutputConfiguration } from 'commander';
import { ConfigError, loadConfig, unknownVariables, unknownVariableWarning, type Env } from '../config.ts';
import type { ClientAuthSetup } from '../oauth/client-auth/method.ts';
import { clientAuthSetup } from '../oauth/client-auth/registry.ts';
import { registerAdminCommands } from './admin.ts';
import { registerCleanupCommands } from './cleanup.ts';
import { registerClientCommands } from './clients.ts';
import { registerConsentCommands } from './consents.ts';
import { registerGroupCommands } from './groups.ts';
import { registerKeyCommands } from './keys.ts';
import { registerMailCommands } from './mail.ts';
import { registerInvitationCommands } from './invitations.ts';
import { registerWebhookCommands } from './webhooks.ts';
import { registerOrganizationCommands } from './orgs.ts';
import { registerPolicyCommands } from './policies.ts';
import { registerRegistrationTokenCommands } from './registration-tokens.ts';
import { registerRegistrationCommands } from './registrations.ts';
import { registerServerCommands } from './server.ts';
import { registerThemeCommands } from './theme.ts';
import { registerUserCommands } from './users.ts';
import { registerFactorCommands } from './user-factors.ts';
import { VERSION } from '../version.ts';

/**
 * `output` redirects what Commander itself prints (help, usage errors); tests capture it. `env` is
 * the environment the configuration is read from (the process's).
 */
export function buildProgram(output: Pick<OutputConfiguration, 'writeOut' | 'writeErr'> = {}, env: Env = process.env): Command {
  const program = new Command('gatehouse')
    .description('gatehouse single sign-on server: manage clients, users, groups, organizations, policies, keys and consents')
    // Settings are inherited by subcommands created after this point.
    .exitOverride()
    .configureOutput({ ...output, outputError: (message, write) => write(`gatehouse: ${oneLine(message.replace(/^error: /, ''))}\n`) })
    .showSuggestionAfterError(true)
    .version(VERSION, '-V, --version', "print gatehouse's version")
    // Before any command runs, a GATEHOUSE_* variable that is no setting is said on stderr, as the
    // server says it in its start log (decisions D7) — except before `serve`, whose log says it.
    .hook('preAction', (_program, command) => {
      if (command.parent === program && command.name() === 'serve') return;
      for (const unknown of unknownVariables(env)) process.stderr.write(`gatehouse: warning: ${unknownVariableWarning(unknown)}\n`);
    });
  registerClientCommands(program, configuredClientAuth(env));
  registerUserCommands(program);
  registerFactorCommands(program);
  registerGroupCommands(program);
  registerOrganizationCommands(program);
  registerPolicyCommands(program);
  registerKeyCommands(program);
  registerServerCommands(program);
  registerCleanupCommands(program);
  registerConsentCommands(program);
  registerThemeCommands(program);
  registerRegistrationTokenCommands(program);
  registerRegistrationCommands(program);
  registerAdminCommands(program);
  registerMailCommands(program);
  registerInvitationCommands(program);
  registerWebhookCommands(program);
  return program;
}

/**
 * What the configuration gives the client-authentication methods (GATEHOUSE_KEY_ENCRYPTION_KEY
 * set or not), for the choices the client commands offer; undefined when the configuration cannot
 * be read, so that `--help` still works and the command itself reports the setting at fault.
 */
function configuredClientAuth(env: Env): ClientAuthSetup | undefined {
  try {
    return clientAuthSetup(loadConfig(env));
  } catch {
    return undefined;
  }
}

/** One line, whatever the error: multi-line driver messages are folded, empty ones explained. */
export function describeError(error: unknown): string {
  if (error instanceof ConfigError) return `invalid configuration: ${error.message}`;
  if (error instanceof AggregateError && error.message === '') return error.errors.map(describeError).join('; ');
  const message = error instanceof Error ? error.message || error.name : String(error);
  return oneLine(message);
}

function oneLine(text: string): string {
  return text.trim().replace(/\s*\n\s*/g, ' ');
}
