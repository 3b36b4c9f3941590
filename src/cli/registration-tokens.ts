/**
 * `gatehouse registration-token …`: initial access tokens of RFC 7591 dynamic client registration
 * (GATEHOUSE_DYNAMIC_REGISTRATION=initial_access_token; docs/authorization.md, "Dynamic client registration").
 */
import type { Command } from 'commander';
import { systemClock } from '../lib/clock.ts';
import { InitialAccessTokenNotFound } from '../manage/registration-tokens.ts';
import { initialAccessTokenView, parseDuration } from '../oauth/dynamic-registration.ts';
import { UsageError, wholeNumber, withStore } from './context.ts';
import { printFields, printJson, printLine, printTable } from './output.ts';

interface JsonFlag {
  json?: boolean;
}

export function registerRegistrationTokenCommands(program: Command): void {
  const tokens = program.command('registration-token').description('initial access tokens for RFC 7591 dynamic client registration');

  tokens
    .command('create')
    .description('mint an initial access token; prints its value once')
    .requiredOption('--expires-in <duration>', 'how long it is valid: seconds, or a number with s, m, h or d (e.g. 1h, 7d); at most 365d')
    .option('--uses <n>', 'how many clients it may register', '1')
    .option('--description <text>', 'what it is for, shown in the list')
    .option('--json', 'print JSON only')
    .action((flags: JsonFlag & { expiresIn: string; uses: string; description?: string }) =>
      withStore(async ({ admin, acting }) => {
        const expiresIn = parseDuration(flags.expiresIn);
        if (expiresIn === undefined) throw new UsageError(`--expires-in must be seconds or a number with s, m, h or d (such as 1h), not ${JSON.stringify(flags.expiresIn)}`);
        const { token, value } = await admin.registrationTokens.create(acting, { expiresIn, uses: wholeNumber(flags.uses, '--uses'), description: flags.description });
        if (flags.json) return printJson({ ...initialAccessTokenView(token), token: value });
        const view = initialAccessTokenView(token);
        printFields([
          ['id', view.id],
          ['token', `${value}  (shown once: store it now)`],
          ['expires_at', view.expires_at],
          ['uses_left', view.uses_left],
          ['description', view.description],
        ]);
      }),
    );

  tokens
    .command('list')
    .description('list initial access tokens (never their values)')
    .option('--json', 'print JSON only')
    .action((flags: JsonFlag) =>
      withStore(async ({ admin }) => {
        const all = await admin.registrationTokens.list();
        if (flags.json) return printJson(all.map(initialAccessTokenView));
        const now = systemClock.now();
        printTable(
          ['ID', 'USES_LEFT', 'EXPIRES_AT', 'STATE', 'CREATED_BY', 'DESCRIPTION'],
          all.map((t) => [t.id, t.usesLeft, new Date(t.expiresAt).toISOString(), t.expiresAt <= now ? 'expired' : t.usesLeft <= 0 ? 'used up' : 'usable', t.createdBy, t.description]),
          'No initial access tokens.',
        );
      }),
    );

  tokens
    .command('revoke')
    .description('revoke an initial access token: it registers nothing more (clients it registered stay)')
    .argument('<id>')
    .option('--json', 'print JSON only')
    .action((id: string, flags: JsonFlag) =>
      withStore(async ({ admin, acting }) => {
        try {
          await admin.registrationTokens.revoke(acting, id);
        } catch (error) {
          // The CLI's words add where to look for the ids.
          if (error instanceof InitialAccessTokenNotFound) throw new UsageError(`${error.message} (gatehouse registration-token list)`);
          throw error;
        }
        if (flags.json) return printJson({ id, revoked: true });
        printLine(`Revoked initial access token ${id}.`);
      }),
    );
}
