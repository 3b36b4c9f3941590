/**
 * `gatehouse user factors|rename-factor|remove-factor|reset-factors|import-totp` and `gatehouse factors
 * seal`: users' second factors
 * (docs/second-factors.md). A TOTP secret is read from stdin only: never in argv (the process
 * list, shell history), never printed back.
 */
import type { Command } from 'commander';
import { factorRecord } from '../manage/user-factors.ts';
import { readStdinSecret, UsageError, withStore } from './context.ts';
import { printJson, printLine, printTable } from './output.ts';

interface JsonFlag {
  json?: boolean;
}

interface ImportFlags extends JsonFlag {
  secretStdin?: boolean;
  name?: string;
  digits?: string;
  period?: string;
  algorithm?: string;
}

/** A whole number given as an option, or undefined; anything else is left to the use case to refuse by name. */
function wholeNumber(value: string | undefined): number | undefined {
  return value === undefined ? undefined : /^[0-9]{1,4}$/.test(value) ? Number(value) : Number.NaN;
}

export function registerUserFactorCommands(user: Command): void {
  user
    .command('factors')
    .description("list a user's second factors (never their secrets)")
    .argument('<user>', 'id or username')
    .option('--json', 'print JSON only')
    .action((key: string, flags: JsonFlag) =>
      withStore(async ({ admin }) => {
        const factors = (await admin.users.factors(key)).map(factorRecord);
        if (flags.json) return printJson(factors);
        printTable(
          ['NAME', 'KIND', 'ID', 'CREATED', 'LAST USED', 'CODES LEFT'],
          factors.map((f) => [String(f.name), String(f.kind), String(f.id), String(f.created_at), String(f.last_used_at ?? '-'), f.codes_left === undefined ? '' : String(f.codes_left)]),
          'No second factors.',
        );
      }),
    );

  user
    .command('remove-factor')
    .description('remove one second factor of a user')
    .argument('<user>', 'id or username')
    .argument('<factor-id>', 'the id `user factors` lists')
    .option('--json', 'print JSON only')
    .action((key: string, factorId: string, flags: JsonFlag) =>
      withStore(async ({ admin, acting }) => {
        const removed = await admin.users.removeFactor(acting, key, factorId);
        if (flags.json) return printJson({ id: removed.id, kind: removed.kind, removed: true });
        printLine(`Removed ${removed.kind} factor ${JSON.stringify(removed.name)}.`);
      }),
    );

  user
    .command('rename-factor')
    .description('rename one second factor of a user (1 to 64 characters, no control characters)')
    .argument('<user>', 'id or username')
    .argument('<factor-id>', 'the id `user factors` lists')
    .argument('<name>', 'the new name')
    .option('--json', 'print JSON only')
    .action((key: string, factorId: string, name: string, flags: JsonFlag) =>
      withStore(async ({ admin, acting }) => {
        const renamed = await admin.users.renameFactor(acting, key, factorId, name);
        if (flags.json) return printJson(factorRecord(renamed));
        printLine(`Renamed ${renamed.kind} factor ${renamed.id} to ${JSON.stringify(renamed.name)}.`);
      }),
    );

  user
    .command('reset-factors')
    .description('remove every second factor of a user (lost authenticator and recovery codes): the password alone signs in until they enrol again')
    .argument('<user>', 'id or username')
    .option('--json', 'print JSON only')
    .action((key: string, flags: JsonFlag) =>
      withStore(async ({ admin, acting }) => {
        const removed = await admin.users.resetFactors(acting, key);
        if (flags.json) return printJson({ removed });
        printLine(`Removed ${removed} second factor${removed === 1 ? '' : 's'}.`);
      }),
    );

  user
    .command('import-totp')
    .description('store a TOTP factor whose base32 secret comes from another server, read from stdin')
    .argument('<user>', 'id or username')
    .option('--secret-stdin', 'read the base32 secret from stdin (required: a secret never goes in the command line)')
    .option('--name <name>', 'what the factor is called (default: Authenticator app)')
    .option('--digits <n>', 'code length: 6 (default), 7 or 8')
    .option('--period <seconds>', 'time step: 30 (default), 10 to 120')
    .option('--algorithm <alg>', 'SHA1 (default), SHA256 or SHA512')
    .option('--json', 'print JSON only')
    .action((key: string, flags: ImportFlags) =>
      withStore(async ({ admin, acting }) => {
        if (!flags.secretStdin) throw new UsageError('the secret is read from stdin: give --secret-stdin and pipe it in');
        const secret = await readStdinSecret();
        const factor = await admin.users.importTotp(acting, key, { secret, name: flags.name, digits: wholeNumber(flags.digits), period: wholeNumber(flags.period), algorithm: flags.algorithm });
        if (flags.json) return printJson(factorRecord(factor));
        printLine(`Imported TOTP factor ${JSON.stringify(factor.name)} (${factor.id}).`);
      }),
    );
}

/**
 * `gatehouse factors seal`: seals the TOTP secrets stored in the clear (enrolled or imported before
 * GATEHOUSE_KEY_ENCRYPTION_KEY was set) under that key, in one transaction (decisions SA100).
 * Run again, it seals nothing: safe in a deployment script.
 */
export function registerFactorCommands(program: Command): void {
  const factors = program.command('factors').description("every user's second factors at once");
  factors
    .command('seal')
    .description('seal the TOTP secrets stored in the clear under GATEHOUSE_KEY_ENCRYPTION_KEY (idempotent)')
    .option('--json', 'print JSON only')
    .action((flags: JsonFlag) =>
      withStore(async ({ admin, acting }) => {
        const sealed = await admin.users.sealTotpSecrets(acting);
        if (flags.json) return printJson({ sealed });
        printLine(sealed === 0 ? 'No TOTP secret was stored in the clear.' : `Sealed ${sealed} TOTP secret${sealed === 1 ? '' : 's'}.`);
      }),
    );
}
