/**
 * What every command needs: the configuration the server reads (the same environment
 * variables), and the store, opened for the command and always closed after it.
 */
import { readFile } from 'node:fs/promises';
import { userInfo } from 'node:os';
import { loadConfig, storeDescription, type Config } from '../config.ts';
import { StoreMissingError } from '../domain/errors.ts';
import { administratorGroups, type Authority } from '../identity/administrators.ts';
import { systemClock } from '../lib/clock.ts';
import { cryptoRandom } from '../lib/random.ts';
import { noAudit, type Actor } from '../observability/audit.ts';
import { storeAuditSink, teeAuditSink } from '../observability/audit-store-sink.ts';
import type { OAuthDeps } from '../oauth/deps.ts';
import type { Acting, Administration } from '../manage/administration.ts';

/** The store as the CLI opens it through the composition root (openStore of src/app.ts); only withStore holds it. */
type Store = OAuthDeps['store'];

/**
 * What a command is given: the settings, the application layer's use cases
 * (src/manage/administration.ts) over the command's store and audit sink, and who acts. A command
 * calls the use cases and never the store (docs/architecture.md, "Layers").
 */
export interface CliEnv {
  config: Config;
  admin: Administration;
  /**
   * The operator, the OS account that ran the command (cliActor), acting as an administrator
   * with shell access to the store: the administrator groups are in reach, and only the rule that
   * keeps an enabled administrator applies (src/identity/administrators.ts).
   */
  acting: Acting;
}

/** The actor of the CLI's audit events: the operating-system account that ran the command. */
export function cliActor(): Actor {
  try {
    return { via: 'cli', caller: userInfo().username };
  } catch {
    return { via: 'cli' };
  }
}

/** A mistake in how the command was called; printed as one line like every other error. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/**
 * The configuration, after saying on stderr which store it names: stdout is the command's result,
 * and the store is the one thing a command could otherwise get silently wrong (docs/cli.md).
 */
export function configNamingStore(): Config {
  const config = loadConfig();
  process.stderr.write(`store: ${storeDescription(config)}\n`);
  return config;
}

/**
 * Loads the configuration, opens (and migrates) the existing store, runs `work`, and closes the
 * store whatever happens. A store that does not exist yet is refused, never created: a mistyped
 * path or a different current directory would otherwise give a new, empty store that hides the
 * real one. The composition root is imported only here, lazily, so `--help` stays quick.
 */
export async function withStore<T>(work: (env: CliEnv) => Promise<T>): Promise<T> {
  const config = configNamingStore();
  const { openStore, keyRingFor, outboxFor } = await import('../app.ts');
  let store: Store;
  try {
    store = await openStore(config, { create: false });
  } catch (error) {
    if (error instanceof StoreMissingError) throw new UsageError(missingStore(config));
    throw error;
  }
  // Synchronous: each event is on disk before the command prints its result and exits.
  const auditFile = config.auditLog === undefined ? undefined : (await import('../observability/audit-file.ts')).openAuditFile(config.auditLog, { sync: true });
  // The store's copy is batched like the server's and flushed before the store closes, so a
  // command's changes are listed by the management API too (a failed insert is said on stderr).
  const auditStore = config.auditStore ? storeAuditSink(store.audit, systemClock, { error: (_fields, message) => process.stderr.write(`warning: ${message}\n`) }) : undefined;
  const fileSink = auditFile?.sink ?? noAudit;
  let outbox: { close(): void } | undefined;
  try {
    const { administration } = await import('../manage/administration.ts');
    const audit = auditStore ? teeAuditSink(fileSink, auditStore) : fileSink;
    const authority: Authority = { groups: administratorGroups(config), administrator: true };
    // Mail, when configured: `gatehouse mail test` sends its own message through the outbox.
    let mail;
    if (config.smtpUrl !== undefined) {
      const { configuredTheme } = await import('../http/interaction/theme.ts');
      const built = outboxFor(config, store, { clock: systemClock, random: cryptoRandom, audit, theme: configuredTheme(config) });
      outbox = built;
      mail = built.mail;
    }
    const admin = administration({ store, clock: systemClock, random: cryptoRandom, audit, keyRing: keyRingFor(config, store), settings: config, mail });
    return await work({ config, admin, acting: { actor: cliActor(), authority } });
  } finally {
    outbox?.close();
    await auditStore?.flush();
    await store.close();
    await auditFile?.close();
  }
}

function missingStore(config: Config): string {
  const create = 'create it with `gatehouse migrate` (or by starting the server)';
  if (config.sqlitePath !== undefined) return `no store at ${config.sqlitePath}: ${create}, or set GATEHOUSE_HOME or GATEHOUSE_DATABASE_URL to the store you meant`;
  return `${storeDescription(config)} holds no gatehouse store: ${create}, or set GATEHOUSE_DATABASE_URL to the store you meant`;
}

/** All of stdin; for secrets that must not appear in argv or shell history. One trailing newline is dropped. */
export async function readStdinSecret(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '');
}

/** The password of `--password P` or `--password-stdin`: exactly one of them. */
export async function passwordFrom(options: { password?: string; passwordStdin?: boolean }): Promise<string> {
  if (options.password !== undefined && options.passwordStdin) throw new UsageError('use either --password or --password-stdin, not both');
  if (options.passwordStdin) return readStdinSecret();
  if (options.password !== undefined) return options.password;
  throw new UsageError('a password is required: --password P or --password-stdin');
}

export async function readJsonFile(path: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new UsageError(`cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new UsageError(`${path} is not valid JSON: ${(error as Error).message}`);
  }
}

/** Repeatable options accumulate; no default, so help shows none. */
export const collect = (value: string, previous: string[] | undefined): string[] => [...(previous ?? []), value];

/**
 * Custom attribute changes from `--attribute NAME=VALUE` (repeatable; the values given for a name
 * replace its stored ones) and `--remove-attribute NAME` (repeatable): the update rule of the
 * identity use cases (src/identity/attributes.ts).
 */
export function attributeChanges(set: string[] | undefined, remove: string[] | undefined): Record<string, string[] | null> | undefined {
  if (set === undefined && remove === undefined) return undefined;
  // A Map, so that no name (`__proto__`) is special; the use case checks the names.
  const changes = new Map<string, string[] | null>();
  for (const pair of set ?? []) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new UsageError(`--attribute takes NAME=VALUE, not ${JSON.stringify(pair)}`);
    const name = pair.slice(0, eq);
    changes.set(name, [...(changes.get(name) ?? []), pair.slice(eq + 1)]);
  }
  for (const name of remove ?? []) {
    if (changes.has(name)) throw new UsageError(`attribute ${JSON.stringify(name)} is both set (--attribute) and removed (--remove-attribute)`);
    changes.set(name, null);
  }
  return Object.fromEntries(changes);
}

/** A whole number from a command-line string, or a UsageError naming the option. */
export function wholeNumber(raw: string, option: string): number {
  if (!/^\d+$/.test(raw.trim())) throw new UsageError(`${option} must be a whole number, not ${JSON.stringify(raw)}`);
  return Number(raw.trim());
}
