/**
 * The `gatehouse` program: every command group, and how errors become one line on stderr.
 * Exit codes: 0 on success; 2 on any error, printed as one line "gatehouse: …" on stderr.
 */
import { Command, type OutputConfiguration } from 'commander';
import { ConfigError } from '../config.ts';
import { registerAdminCommands } from './admin.ts';
import { registerCleanupCommands } from './cleanup.ts';
import { registerClientCommands } from './clients.ts';
import { registerConsentCommands } from './consents.ts';
import { registerGroupCommands } from './groups.ts';
import { registerKeyCommands } from './keys.ts';
import { registerOrganizationCommands } from './orgs.ts';
import { registerPolicyCommands } from './policies.ts';
import { registerServerCommands } from './server.ts';
import { registerUserCommands } from './users.ts';
import { VERSION } from '../version.ts';

/** `output` redirects what Commander itself prints (help, usage errors); tests capture it. */
export function buildProgram(output: Pick<OutputConfiguration, 'writeOut' | 'writeErr'> = {}): Command {
  const program = new Command('gatehouse')
    .description('gatehouse single sign-on server: manage clients, users, groups, organizations, policies, keys and consents')
    // Settings are inherited by subcommands created after this point.
    .exitOverride()
    .configureOutput({ ...output, outputError: (message, write) => write(`gatehouse: ${oneLine(message.replace(/^error: /, ''))}\n`) })
    .showSuggestionAfterError(true)
    .version(VERSION, '-V, --version', "print gatehouse's version");
  registerClientCommands(program);
  registerUserCommands(program);
  registerGroupCommands(program);
  registerOrganizationCommands(program);
  registerPolicyCommands(program);
  registerKeyCommands(program);
  registerServerCommands(program);
  registerCleanupCommands(program);
  registerConsentCommands(program);
  registerAdminCommands(program);
  return program;
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
