/**
 * `gatehouse registration-token …`: initial access tokens of RFC 7591 dynamic client registration
 * (GATEHOUSE_DYNAMIC_REGISTRATION=initial_access_token; docs/authorization.md, "Dynamic client registration").
 */
import type { Command } from 'commander';
import { systemClock } from '../lib/clock.ts';
import { cryptoRandom } from '../lib/random.ts';
import { initialAccessTokenView, mintInitialAccessToken, parseDuration } from '../oauth/dynamic-registration.ts';
import { cliActor, UsageError, wholeNumber, withStore } from './context.ts';
import { printFields, printJson, printLine, printTable } from './output.ts';

interface JsonFlag {
  json?: boolean;
}

/** How many rows one read of the list asks for; the command prints them all. */
const PAGE = 200;

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
      withStore(async (env) => {
        const expiresIn = parseDuration(flags.expiresIn);
        if (expiresIn === undefined) throw new UsageError(`--expires-in must be seconds or a number with s, m, h or d (such as 1h), not ${JSON.stringify(flags.expiresIn)}`);
        const actor = cliActor();
        const { token, value } = await mintInitialAccessToken(
          { registrations: env.store.registrations, clock: systemClock, random: cryptoRandom },
          { expiresIn, uses: wholeNumber(flags.uses, '--uses'), description: flags.description, createdBy: actor.caller === undefined ? 'cli' : `cli:${actor.caller}` },
        );
        env.audit.emit({ event: 'initial_access_token.created', id: token.id, expiresAt: token.expiresAt, uses: token.usesLeft, actor });
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
      withStore(async (env) => {
        const all = [];
        for (let after: string | undefined; ; ) {
          const page = await env.store.registrations.listInitialAccessTokens({ after, limit: PAGE });
          all.push(...page);
          if (page.length < PAGE) break;
          after = page[page.length - 1]!.id;
        }
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
      withStore(async (env) => {
        if (!(await env.store.registrations.deleteInitialAccessToken(id))) throw new UsageError(`no initial access token has the id ${JSON.stringify(id)} (gatehouse registration-token list)`);
        env.audit.emit({ event: 'initial_access_token.revoked', id, actor: cliActor() });
        if (flags.json) return printJson({ id, revoked: true });
        printLine(`Revoked initial access token ${id}.`);
      }),
    );
}
