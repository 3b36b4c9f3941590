/** `gatehouse keys …`: the ID token signing keys every instance reads from the store. */
import { Option, type Command } from 'commander';
import { DEFAULT_SIGNING_ALG, SIGNING_ALGS, type SigningAlg } from '../protocol/constants.ts';
import type { SigningKey } from '../domain/signing-key.ts';
import { UsageError, withStore } from './context.ts';
import { isoTime, printFields, printJson, printLine, printTable } from './output.ts';

interface JsonFlag {
  json?: boolean;
}

/** Public facts about a key only: never the private JWK, encrypted or not. */
function keyView(k: SigningKey): Record<string, unknown> {
  return {
    kid: k.kid,
    alg: k.alg,
    active: k.retiredAt === undefined,
    encrypted: k.encrypted,
    created_at: isoTime(k.createdAt),
    retired_at: isoTime(k.retiredAt),
    published_until: isoTime(k.publishUntil),
  };
}

export function registerKeyCommands(program: Command): void {
  const keys = program.command('keys').description('list, rotate and seal signing keys');

  keys
    .command('list')
    .description("list each algorithm's active key and the retired keys still published in the JWKS")
    .option('--json', 'print JSON only')
    .action((flags: JsonFlag) =>
      withStore(async ({ admin }) => {
        const list = (await admin.keys.list()).map(({ key }) => key);
        if (flags.json) return printJson(list.map(keyView));
        printTable(
          ['', 'KID', 'ALG', 'CREATED', 'RETIRED', 'PUBLISHED_UNTIL'],
          list.map((k) => [k.retiredAt === undefined ? '*' : ' ', k.kid, k.alg, isoTime(k.createdAt), isoTime(k.retiredAt), isoTime(k.publishUntil)]),
          'No signing keys yet: the server creates the first key of each algorithm when it starts (or run `gatehouse keys rotate --alg <alg>`).',
        );
      }),
    );

  keys
    .command('rotate')
    .description(
      "publish a new key of one algorithm, which signs once every instance and cached JWKS can know it; that algorithm's previous key signs until then and stays published until what it signed has expired; other algorithms' keys are untouched",
    )
    .addOption(new Option('--alg <alg>', 'the algorithm whose key to rotate').choices(SIGNING_ALGS).default(DEFAULT_SIGNING_ALG))
    .option('--json', 'print JSON only')
    .action((flags: JsonFlag & { alg: SigningAlg }) =>
      withStore(async ({ admin, acting }) => {
        const rotated = await admin.keys.rotate(acting, flags.alg);
        const { key } = rotated;
        const signsFrom = isoTime(rotated.signsFrom);
        if (flags.json) return printJson({ ...keyView(key), signs_from: signsFrom });
        printFields([
          ['new kid', key.kid],
          ['alg', key.alg],
          ['created_at', isoTime(key.createdAt)],
          // Published at once; it signs after two key-cache periods (GATEHOUSE_KEY_CACHE_TTL).
          ['signs_from', signsFrom],
        ]);
      }),
    );

  keys
    .command('seal')
    .description('encrypt every private key still stored in the clear with GATEHOUSE_KEY_ENCRYPTION_KEY (the server also does this when it starts)')
    .option('--json', 'print JSON only')
    .action((flags: JsonFlag) =>
      withStore(async ({ config, admin }) => {
        if (config.keyEncryptionKey === undefined) throw new UsageError('set GATEHOUSE_KEY_ENCRYPTION_KEY to the key-encryption key to seal the signing keys with');
        // A wrong key-encryption key is refused (KeyEncryptionError, one line) and nothing is sealed.
        const sealed = await admin.keys.seal();
        if (flags.json) return printJson({ sealed });
        printLine(sealed === 0 ? 'Every private key was sealed already.' : `Sealed ${sealed} private key${sealed === 1 ? '' : 's'}.`);
      }),
    );
}
