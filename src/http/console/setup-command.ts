/**
 * The `gatehouse admin bootstrap` command the console shows before it is set up (docs/console.md,
 * "Getting in"), with this server's own settings in front of it as environment variables, so that
 * pasted verbatim it works on this server's store: the store, the administrator groups the server
 * checks, and the issuer (which names the console's address in what the command prints; the
 * server puts its own issuer into the registrations anyway, docs/decisions.md CO14). Only settings
 * that differ from their defaults are shown: on a server started with none, the bare command.
 * `GATEHOUSE_PORT` never is: the issuer already carries the port, and only the server listens.
 */
import { loadConfig, type Config } from '../../config.ts';

/** The command without any setting: what a server with the default settings shows. */
export const BOOTSTRAP_COMMAND = 'npx gatehouse admin bootstrap --username <name> --password-stdin';

/** The database password's stand-in: the page is shown to anyone, so no secret is ever on it. */
export const PASSWORD_PLACEHOLDER = '<password>';

type Shown = Pick<Config, 'issuer' | 'databaseUrl' | 'sqlitePath' | 'manageAdminGroup' | 'manageReadonlyGroup'>;

let defaults: Shown | undefined;

/**
 * The command for this server; `passwordHidden` when the database URL held a password (or a
 * password parameter), replaced by PASSWORD_PLACEHOLDER, which the page then asks to fill in.
 */
export function bootstrapCommandFor(config: Shown): { command: string; passwordHidden: boolean } {
  // The defaults as a server started with no settings at all would have them.
  defaults ??= loadConfig({});
  const store = storeSetting(config);
  const settings: [string, string | undefined][] = [
    ['GATEHOUSE_ISSUER', config.issuer === defaults.issuer ? undefined : config.issuer],
    ['GATEHOUSE_DATABASE_URL', sameStore(config, defaults) ? undefined : store.url],
    ['GATEHOUSE_ADMIN_GROUP', config.manageAdminGroup === defaults.manageAdminGroup ? undefined : config.manageAdminGroup],
    ['GATEHOUSE_ADMIN_READONLY_GROUP', config.manageReadonlyGroup === defaults.manageReadonlyGroup ? undefined : config.manageReadonlyGroup],
  ];
  const env = settings.filter((entry): entry is [string, string] => entry[1] !== undefined).map(([name, value]) => `${name}=${shellQuoted(value)} `);
  return { command: `${env.join('')}${BOOTSTRAP_COMMAND}`, passwordHidden: store.passwordHidden && !sameStore(config, defaults) };
}

function sameStore(a: Shown, b: Shown): boolean {
  return a.sqlitePath !== undefined ? a.sqlitePath === b.sqlitePath : a.databaseUrl === b.databaseUrl;
}

/**
 * The store as a GATEHOUSE_DATABASE_URL that works from any folder: SQLite by its absolute path;
 * PostgreSQL without its password (the user part and any `*pass*` query parameter).
 */
function storeSetting(config: Shown): { url: string; passwordHidden: boolean } {
  if (config.sqlitePath !== undefined) return { url: config.sqlitePath === ':memory:' ? config.databaseUrl : `sqlite:${config.sqlitePath}`, passwordHidden: false };
  const url = new URL(config.databaseUrl);
  let passwordHidden = false;
  for (const name of [...url.searchParams.keys()]) {
    if (!/pass/i.test(name)) continue;
    url.searchParams.delete(name);
    passwordHidden = true;
  }
  if (url.password !== '') {
    url.password = 'PASSWORD';
    passwordHidden = true;
  }
  // The URL class would percent-encode "<" and ">" in the userinfo; the placeholder is put in after.
  return { url: url.toString().replace(':PASSWORD@', `:${PASSWORD_PLACEHOLDER}@`), passwordHidden };
}

/** A POSIX shell word: as it is when it holds only safe characters, else in single quotes. */
function shellQuoted(value: string): string {
  return /^[A-Za-z0-9_./:@%+=,-]+$/.test(value) ? value : `'${value.replaceAll("'", `'\\''`)}'`;
}
