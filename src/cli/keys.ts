/** `gatehouse keys …`: the ID token signing keys every instance reads from the store. */
import type { Command } from 'commander';
import type { SigningKey } from '../domain/signing-key.ts';
import { withStore } from './context.ts';
import { isoTime, printFields, printJson, printTable } from './output.ts';

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
  const keys = program.command('keys').description('list and rotate signing keys');

  keys
    .command('list')
    .description('list the active key and the retired keys still published in the JWKS')
    .option('--json', 'print JSON only')
    .action((flags: JsonFlag) =>
      withStore(async ({ store, deps }) => {
        const list = await store.keys.list(deps.clock.now());
        if (flags.json) return printJson(list.map(keyView));
        printTable(
          ['', 'KID', 'ALG', 'CREATED', 'RETIRED', 'PUBLISHED_UNTIL'],
          list.map((k) => [k.retiredAt === undefined ? '*' : ' ', k.kid, k.alg, isoTime(k.createdAt), isoTime(k.retiredAt), isoTime(k.publishUntil)]),
          'No signing keys yet: the server creates the first one when it starts (or run `gatehouse keys rotate`).',
        );
      }),
    );

  keys
    .command('rotate')
    .description('make a new key active; the previous one stays published until what it signed has expired')
    .option('--json', 'print JSON only')
    .action((flags: JsonFlag) =>
      withStore(async ({ config, store, deps }) => {
        const { keyRingFor } = await import('../app.ts');
        const key = await keyRingFor(config, store, deps.clock).rotate();
        if (flags.json) return printJson(keyView(key));
        printFields([
          ['active kid', key.kid],
          ['alg', key.alg],
          ['created_at', isoTime(key.createdAt)],
        ]);
        // Other instances cache keys briefly; they pick the new one up within that time.
      }),
    );
}
