/**
 * Every setting of gatehouse, in one table: its environment variable, type, default and doc.
 * `docs/configuration.md` is generated from this table (`npm run docs:config`); a test fails
 * when the file is stale.
 */

import { isIP } from 'node:net';
import { availableParallelism } from 'node:os';
import { join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CONFIG_FILE_VARIABLE, readConfigFile, similarSetting } from './config-file.ts';
import { configuredLevels, parseAcrLevels, type AcrLevel } from './protocol/acr-levels.ts';
import { ACCESS_TOKEN_FORMATS } from './protocol/constants.ts';
import { VERSION } from './version.ts';

/**
 * The installation folder of gatehouse whose files are in `packageFolder`: the folder itself (a
 * checkout), or, for the package installed with npm (README, "Install as a package"), the folder
 * it was installed into, before the first `node_modules` of the path: npm replaces the package's
 * own folder on every install of another version, so no data may live there.
 */
export function installationFolder(packageFolder: string): string {
  const segments = packageFolder.split(sep);
  const modules = segments.indexOf('node_modules');
  return modules <= 0 ? packageFolder : segments.slice(0, modules).join(sep) || sep;
}

/**
 * The default GATEHOUSE_HOME: `data` in the installation folder (where package.json is), so the
 * default store is the same file whatever the current directory of the server or the CLI.
 */
export const DEFAULT_HOME = join(installationFolder(fileURLToPath(new URL('..', import.meta.url))), 'data');

export class ConfigError extends Error {
  readonly variable: string;
  constructor(variable: string, message: string) {
    super(`${variable}: ${message}`);
    this.name = 'ConfigError';
    this.variable = variable;
  }
}

type Parser<T> = (raw: string) => T;

interface Setting<T> {
  env: string;
  type: string;
  /** The raw default, or undefined when the setting is optional or derived. */
  default: string | undefined;
  /** What the docs show as the default when it is derived from other settings. */
  shownDefault?: string;
  doc: string;
  /** Secrets are never logged or echoed back. */
  secret?: boolean;
  parse: Parser<T>;
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
const LOG_TIMES = ['epoch', 'iso'] as const;
/** GATEHOUSE_DYNAMIC_REGISTRATION (RFC 7591): off, or open to holders of an initial access token. */
export const DYNAMIC_REGISTRATION_MODES = ['off', 'initial_access_token'] as const;
export type DynamicRegistrationMode = (typeof DYNAMIC_REGISTRATION_MODES)[number];
export type LogTime = (typeof LOG_TIMES)[number];

function nonEmpty(raw: string): string {
  if (raw.trim() === '') throw new Error('must not be empty');
  return raw;
}

function integer(min: number, max: number): Parser<number> {
  return (raw) => {
    if (!/^\d+$/.test(raw.trim())) throw new Error(`must be a whole number from ${min} to ${max}`);
    const value = Number(raw.trim());
    if (value < min || value > max) throw new Error(`must be a whole number from ${min} to ${max}`);
    return value;
  };
}

function oneOf<const T extends readonly string[]>(values: T): Parser<T[number]> {
  return (raw) => {
    const value = raw.trim().toLowerCase();
    if (!values.includes(value)) throw new Error(`must be one of ${values.join(', ')}`);
    return value as T[number];
  };
}

function list(raw: string): string[] {
  return raw
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '');
}

function boolean(raw: string): boolean {
  const value = raw.trim().toLowerCase();
  if (['1', 'true', 'yes', 'on'].includes(value)) return true;
  if (['0', 'false', 'no', 'off'].includes(value)) return false;
  throw new Error('must be true or false');
}

/** GATEHOUSE_REGISTRATION (docs/registration.md): who may create their own account. */
export const REGISTRATION_MODES = ['off', 'open', 'domain', 'invitation'] as const;
export type RegistrationMode = (typeof REGISTRATION_MODES)[number];
/** The profile fields the registration form offers, which GATEHOUSE_REGISTRATION_FIELDS may require. */
export const REGISTRATION_FIELDS = ['given_name', 'family_name'] as const;
export type RegistrationField = (typeof REGISTRATION_FIELDS)[number];

/** E-mail domains, lower-cased: labels of letters, digits and hyphens (RFC 1035 §2.3.1, as RFC 5321 §4.1.2 takes them). */
function domainList(raw: string): string[] {
  return list(raw).map((domain) => {
    const lower = domain.toLowerCase();
    if (!/^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)+$/.test(lower)) throw new Error(`${JSON.stringify(domain)} is not a domain name such as example.com`);
    return lower;
  });
}

function registrationFieldList(raw: string): RegistrationField[] {
  const fields = list(raw);
  for (const field of fields) if (!(REGISTRATION_FIELDS as readonly string[]).includes(field)) throw new Error(`${JSON.stringify(field)} is not one of ${REGISTRATION_FIELDS.join(', ')}`);
  return [...new Set(fields)] as RegistrationField[];
}

/** An issuer is an absolute http(s) URL with no query, fragment or trailing slash (OIDC Discovery §3). */
function issuerUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new Error('must be an absolute URL such as https://sso.example.com/uas');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new Error('must use https (or http for local use)');
  if (url.search || url.hash || raw.includes('?') || raw.includes('#')) throw new Error('must not have a query or fragment');
  if (raw.endsWith('/')) throw new Error('must not end with a slash');
  if (url.username || url.password) throw new Error('must not contain credentials');
  // Every route, the login page's form and stylesheet, and discovery live under the issuer's path
  // (OIDC Discovery §4: the metadata is at issuer + /.well-known/...). A path the router would
  // read otherwise than it is written is refused: percent-encoding, dot-segments (RFC 3986
  // §5.2.4 would remove them), `:` or `*` (route parameters), empty segments.
  const path = raw.slice(raw.indexOf('//') + 2).replace(/^[^/]*/, '');
  for (const segment of path.split('/').slice(1)) {
    if (!/^[A-Za-z0-9._~-]+$/.test(segment) || segment === '.' || segment === '..') {
      throw new Error(`its path "${path}" cannot be served: each segment must be letters, digits, ".", "_", "~" or "-" (not "." or "..") with no empty segment`);
    }
  }
  // A backslash or space in the authority would make the URL parser see another path than this.
  if ((url.pathname === '/' ? '' : url.pathname) !== path) throw new Error(`its path "${path}" is read as "${url.pathname}" by URL parsers: write it in that form`);
  return raw;
}

/** The path gatehouse serves the issuer's endpoints under: `/uas` by default, `` for a bare host. */
export function issuerPath(issuer: string): string {
  const path = new URL(issuer).pathname;
  return path === '/' ? '' : path;
}

/** Trusted proxies: IP addresses and CIDR ranges only, so a typo cannot trust the wrong peer. */
function proxyList(raw: string): string[] {
  const entries = list(raw);
  for (const entry of entries) {
    const [address = '', bits, ...rest] = entry.split('/');
    const version = address.includes('%') ? 0 : isIP(address);
    const maxBits = version === 4 ? 32 : 128;
    if (version === 0 || rest.length > 0 || (bits !== undefined && (!/^\d{1,3}$/.test(bits) || Number(bits) > maxBits))) {
      throw new Error(`"${entry}" is not an IP address or a CIDR range (such as 10.0.0.7, 10.0.0.0/8 or fd00::/8)`);
    }
  }
  return entries;
}

function databaseUrl(raw: string): string {
  if (raw.startsWith('sqlite:')) {
    if (raw.length === 'sqlite:'.length) throw new Error('sqlite: needs a file path, e.g. sqlite:/var/lib/gatehouse/gatehouse.db');
    return raw;
  }
  if (/^postgres(ql)?:\/\//.test(raw)) {
    try {
      new URL(raw);
    } catch {
      throw new Error('is not a valid postgres:// URL');
    }
    return raw;
  }
  throw new Error('must start with sqlite: or postgres://');
}

/**
 * GATEHOUSE_SMTP_URL: `smtp://[user:password@]host[:port]` (STARTTLS, port 587 by default) or
 * `smtps://…` (implicit TLS, RFC 8314 §3.3, port 465). Never echoed: it may hold a password.
 */
function smtpUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new Error('is not a URL: use smtp://user:password@host:587 or smtps://user:password@host:465');
  }
  if (url.protocol !== 'smtp:' && url.protocol !== 'smtps:') throw new Error('must start with smtp:// (STARTTLS) or smtps:// (implicit TLS)');
  if (url.hostname === '') throw new Error('must name a host');
  if ((url.pathname !== '' && url.pathname !== '/') || url.search || url.hash) throw new Error('must have no path, query or fragment: the TLS choice is GATEHOUSE_SMTP_STARTTLS');
  return raw;
}

/** GATEHOUSE_MAIL_FROM: `address@domain` or `Display Name <address@domain>` (RFC 5322 §3.4), one line. */
function mailFrom(raw: string): string {
  const value = raw.trim();
  if (/[\r\n]/.test(value)) throw new Error('must be one line');
  const address = /<([^<>]+)>$/.exec(value)?.[1] ?? value;
  if (!/^[^\s@<>"]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}$|^[^\s@<>"]+@localhost$/.test(address)) throw new Error('must be an address such as sso@example.com or "Example SSO <sso@example.com>"');
  return value;
}

function prefix(raw: string): string {
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(raw)) throw new Error('must be one path segment of letters, digits, ".", "_" or "-"');
  return raw;
}

function encryptionKey(raw: string): string {
  if (raw.length < 32) throw new Error('must be at least 32 characters of random text (e.g. `openssl rand -base64 32`)');
  return raw;
}

const setting = <T>(s: Setting<T>): Setting<T> => s;

const DAY = 86_400;

export const settings = {
  host: setting({ env: 'GATEHOUSE_HOST', type: 'string', default: '127.0.0.1', doc: 'Address the HTTP server listens on.', parse: nonEmpty }),
  port: setting({ env: 'GATEHOUSE_PORT', type: 'integer', default: '8080', doc: 'TCP port the HTTP server listens on (0 picks a free port).', parse: integer(0, 65535) }),
  issuer: setting({
    env: 'GATEHOUSE_ISSUER',
    type: 'URL',
    default: undefined,
    shownDefault: 'http://HOST:PORT/uas',
    doc: 'Issuer identifier: the public base URL clients use, no trailing slash (set it to the https URL). Its path (default `/uas`) is where gatehouse serves discovery, the OAuth endpoints, the login page and its stylesheet; the identity API, the health checks and the management API and console (`/manage/`) stay at the root. A path that would clash with them or that cannot be routed as written stops start-up.',
    parse: issuerUrl,
  }),
  allowInsecureHttp: setting({
    env: 'GATEHOUSE_ALLOW_INSECURE_HTTP',
    type: 'boolean',
    default: 'false',
    doc: 'Development only. The server refuses to start with an `http` issuer on a host other than this machine (`localhost`, `127.0.0.0/8`, `[::1]`), where passwords, codes and tokens would cross a network in the clear, and with GATEHOUSE_HOST on every interface (`0.0.0.0`, `::`) while GATEHOUSE_ISSUER is unset, so that other machines reach a server whose issuer only this one can use. `true` lets it start anyway (docs/decisions.md, D6).',
    parse: boolean,
  }),
  home: setting({
    env: 'GATEHOUSE_HOME',
    type: 'path',
    default: undefined,
    shownDefault: '`data` in the installation folder (beside package.json: the checkout, or the folder the package was installed into)',
    doc: 'Folder of the default store, the SQLite file `gatehouse.db`, when GATEHOUSE_DATABASE_URL is unset. The default does not depend on the current directory, so `npm start` and every `gatehouse` command find the same store wherever they run; set it (e.g. `/var/lib/gatehouse`) when the installation folder is not the place for data. A relative path counts from the current directory.',
    parse: nonEmpty,
  }),
  databaseUrl: setting({
    env: 'GATEHOUSE_DATABASE_URL',
    type: 'URL',
    default: undefined,
    shownDefault: '`sqlite:$GATEHOUSE_HOME/gatehouse.db`',
    doc: 'Store: `sqlite:PATH` (embedded; a relative PATH counts from the current directory) or `postgres://user:pass@host:5432/db`. The server and `gatehouse migrate` create a missing store; other `gatehouse` commands refuse one (docs/cli.md).',
    secret: true,
    parse: databaseUrl,
  }),
  databasePoolSize: setting({ env: 'GATEHOUSE_DATABASE_POOL_SIZE', type: 'integer', default: '10', doc: 'Connections per process to PostgreSQL.', parse: integer(1, 1000) }),
  databaseNamedStatements: setting({
    env: 'GATEHOUSE_DATABASE_NAMED_STATEMENTS',
    type: 'boolean',
    default: 'true',
    doc: 'PostgreSQL: run the hot queries as named prepared statements, parsed and planned once per connection. Set false behind a connection pooler in transaction mode that cannot track them (PgBouncer before 1.21, or without `max_prepared_statements`).',
    parse: boolean,
  }),
  databaseTimeout: setting({
    env: 'GATEHOUSE_DATABASE_TIMEOUT',
    type: 'seconds',
    default: '5',
    doc: 'PostgreSQL: the longest a request waits for a free connection, for a new connection to open, or for the answer to one query; then it fails with 503 `temporarily_unavailable` and the connection is dropped. Keeps requests from hanging while the database is unreachable. Migrations are not limited.',
    parse: integer(1, 300),
  }),
  headersTimeout: setting({
    env: 'GATEHOUSE_HEADERS_TIMEOUT',
    type: 'seconds',
    default: '60',
    doc: 'Longest a client may take to send a request line and its headers, counted from the first byte (a slow drip of header lines included); then it is answered 408 and the connection is closed. At most GATEHOUSE_REQUEST_TIMEOUT.',
    parse: integer(1, 3600),
  }),
  bodyTimeout: setting({
    env: 'GATEHOUSE_BODY_TIMEOUT',
    type: 'seconds',
    default: '60',
    doc: 'Longest silence while a request body is arriving: the request is then answered 408 and the connection closed. The same silence closes, without an answer, a connection whose client stops reading an answer or falls silent in the middle of its headers. It does not limit the time gatehouse takes to work out an answer (GATEHOUSE_DATABASE_TIMEOUT does), nor idle keep-alive connections (72 s).',
    parse: integer(1, 3600),
  }),
  requestTimeout: setting({
    env: 'GATEHOUSE_REQUEST_TIMEOUT',
    type: 'seconds',
    default: '300',
    doc: 'Longest a client may take to send a whole request, headers and body, however steadily the bytes arrive; then it is answered 408 and the connection is closed.',
    parse: integer(1, 3600),
  }),
  shutdownTimeout: setting({
    env: 'GATEHOUSE_SHUTDOWN_TIMEOUT',
    type: 'seconds',
    default: '10',
    doc: 'On SIGTERM or SIGINT, how long requests in flight may take to finish (the drain); connections still open then are closed, and the process exits. Give the orchestrator a grace period a few seconds longer.',
    parse: integer(0, 3600),
  }),
  codeTtl: setting({ env: 'GATEHOUSE_CODE_TTL', type: 'seconds', default: '60', doc: 'Lifetime of an authorization code.', parse: integer(1, 600) }),
  deviceCodeTtl: setting({
    env: 'GATEHOUSE_DEVICE_CODE_TTL',
    type: 'seconds',
    default: '600',
    doc: 'Lifetime of a device authorization (RFC 8628 `expires_in`): how long the user has to enter the user code and confirm, and the device to poll. docs/security.md explains how it bounds user-code guessing.',
    parse: integer(60, 3600),
  }),
  deviceCodeInterval: setting({
    env: 'GATEHOUSE_DEVICE_CODE_INTERVAL',
    type: 'seconds',
    default: '5',
    doc: 'The least time a device waits between polls of the token endpoint (RFC 8628 `interval`); a faster poll is answered `slow_down` and adds 5 seconds to that device\'s interval.',
    parse: integer(1, 60),
  }),
  deviceAuthorizationsPerAddress: setting({
    env: 'GATEHOUSE_DEVICE_AUTHORIZATIONS_PER_ADDRESS',
    type: 'integer',
    default: '30',
    doc: 'Most device authorizations (RFC 8628 §3.1) one client address (IPv6: per /64) may start per GATEHOUSE_DEVICE_AUTHORIZATIONS_WINDOW; further requests are answered 429 `slow_down` with Retry-After. Each one stores a row until cleanup, so this bounds what one address can make the store keep. Behind a proxy, set GATEHOUSE_TRUSTED_PROXIES. 0: no limit.',
    parse: integer(0, 1_000_000),
  }),
  deviceAuthorizationsWindow: setting({
    env: 'GATEHOUSE_DEVICE_AUTHORIZATIONS_WINDOW',
    type: 'seconds',
    default: '60',
    doc: 'The fixed window of the limit above.',
    parse: integer(1, DAY),
  }),
  deviceUserCodeAttemptsPerAddress: setting({
    env: 'GATEHOUSE_DEVICE_USER_CODE_ATTEMPTS_PER_ADDRESS',
    type: 'integer',
    default: '20',
    doc: 'Most user codes one client address (IPv6: per /64) may submit on the device page per GATEHOUSE_DEVICE_USER_CODE_ATTEMPTS_WINDOW, right or wrong; further ones get a "too many attempts" page until the window ends (RFC 8628 §5.1).',
    parse: integer(1, 1_000_000),
  }),
  deviceUserCodeAttemptsGlobal: setting({
    env: 'GATEHOUSE_DEVICE_USER_CODE_ATTEMPTS_GLOBAL',
    type: 'integer',
    default: '2000',
    doc: 'Most user codes all addresses together may submit per window: bounds a guesser with many addresses (docs/security.md, "Device flow user codes", has the arithmetic).',
    parse: integer(1, 100_000_000),
  }),
  deviceUserCodeAttemptsWindow: setting({
    env: 'GATEHOUSE_DEVICE_USER_CODE_ATTEMPTS_WINDOW',
    type: 'seconds',
    default: '900',
    doc: 'The fixed window of the two user-code limits above.',
    parse: integer(1, DAY),
  }),
  accountReauthWindow: setting({
    env: 'GATEHOUSE_ACCOUNT_REAUTH_WINDOW',
    type: 'seconds',
    default: '300',
    doc: 'How recent the sign-in of a browser session must be for its user to change their second factors on the account security page (`<issuer>/account/security`), or their password without typing the current one on the account page (`<issuer>/account/password`, docs/account.md), or their e-mail address (`<issuer>/account/profile`); an older one is asked for the password (and the second factor) again first (docs/second-factors.md, "Self-service").',
    parse: integer(10, DAY),
  }),
  passwordResetLifetime: setting({
    env: 'GATEHOUSE_PASSWORD_RESET_LIFETIME',
    type: 'seconds',
    default: '1800',
    doc: 'How long a password reset link stays usable (docs/password-reset.md); it is also spent by its use and dies when the password changes any other way.',
    parse: integer(60, DAY),
  }),
  passwordResetsPerAccount: setting({
    env: 'GATEHOUSE_PASSWORD_RESETS_PER_ACCOUNT',
    type: 'integer',
    default: '3',
    doc: 'Most reset links one account is sent per hour when someone asks on the "Forgot your password?" page; further asks get the same answer and send nothing (docs/password-reset.md). Administrators\' sends are not counted. 0: no limit.',
    parse: integer(0, 1000),
  }),
  passwordResetsPerAddress: setting({
    env: 'GATEHOUSE_PASSWORD_RESETS_PER_ADDRESS',
    type: 'integer',
    default: '20',
    doc: 'Most asks for a reset link one client address (IPv6: per /64) may make per hour; further ones are answered 429 with Retry-After, whether or not the account exists. Behind a proxy, set GATEHOUSE_TRUSTED_PROXIES. 0: no limit.',
    parse: integer(0, 1_000_000),
  }),
  emailCodeLifetime: setting({
    env: 'GATEHOUSE_EMAIL_CODE_LIFETIME',
    type: 'seconds',
    default: '600',
    doc: 'How long a one-time code sent by e-mail (a sign-in\'s second factor, an e-mail factor\'s enrolment) stays usable; it is also spent by its use (docs/second-factors.md, "E-mail codes").',
    parse: integer(60, 3600),
  }),
  emailCodesPerHour: setting({
    env: 'GATEHOUSE_EMAIL_CODES_PER_HOUR',
    type: 'integer',
    default: '5',
    doc: 'Most one-time codes sent by e-mail per hour to one user, and to one e-mail address, whatever asks (sign-in, enrolment); a further ask is refused with how long to wait and sends nothing, so a page cannot be used to flood a mailbox (docs/second-factors.md, "E-mail codes"). At least 1.',
    parse: integer(1, 100),
  }),
  passwordMinLength: setting({
    env: 'GATEHOUSE_PASSWORD_MIN_LENGTH',
    type: 'integer',
    default: '8',
    doc: 'The fewest characters (Unicode code points, after NFKC) a new password may have, whichever front end sets it (docs/security.md, "Password policy"). NIST SP 800-63B-4 §3.1.1.2 asks for at least 8 where a password is one factor of several and 15 where it is the only one: set 15 unless your policies require a second factor. Existing passwords keep working at login; the rule applies when a password is next chosen. At most 64.',
    parse: integer(8, 64),
  }),
  invitationLifetime: setting({
    env: 'GATEHOUSE_INVITATION_LIFETIME',
    type: 'seconds',
    default: '604800',
    doc: 'How long an invitation link stays usable (docs/invitations.md); a resend makes a new link with a new lifetime and kills the old one.',
    parse: integer(300, 90 * DAY),
  }),
  emailVerificationLifetime: setting({
    env: 'GATEHOUSE_EMAIL_VERIFICATION_LIFETIME',
    type: 'seconds',
    default: '3600',
    doc: 'How long an e-mail verification link stays usable (docs/email-verification.md); it is also spent by its use and dies when the address changes any other way.',
    parse: integer(60, 7 * DAY),
  }),
  emailVerificationsPerAccount: setting({
    env: 'GATEHOUSE_EMAIL_VERIFICATIONS_PER_ACCOUNT',
    type: 'integer',
    default: '5',
    doc: 'Most verification links one account may ask to be sent per hour on its profile page; further asks are refused with a message and send nothing (docs/email-verification.md). Administrators\' sends are not counted. 0: no limit.',
    parse: integer(0, 1000),
  }),
  emailVerificationsPerRecipient: setting({
    env: 'GATEHOUSE_EMAIL_VERIFICATIONS_PER_RECIPIENT',
    type: 'integer',
    default: '5',
    doc: 'Most verification links one e-mail address may be sent per hour, from all accounts together (so nobody can flood someone else\'s mailbox by asking to change to it); further asks are refused and send nothing. Administrators\' sends are not counted. 0: no limit.',
    parse: integer(0, 1000),
  }),
  passkeySignInsPerAddress: setting({
    env: 'GATEHOUSE_PASSKEY_SIGN_INS_PER_ADDRESS',
    type: 'integer',
    default: '600',
    doc: 'Most username-less passkey sign-ins one client address (IPv6: per /64) may start per minute (each login page view with passkey autofill starts one); further ones are answered 429 with Retry-After and the password form stays. Each stores a challenge for 5 minutes, so this bounds what one address can make the store keep; an office behind one address shares it. Behind a proxy, set GATEHOUSE_TRUSTED_PROXIES. 0: no limit.',
    parse: integer(0, 1_000_000),
  }),
  registration: setting({
    env: 'GATEHOUSE_REGISTRATION',
    type: 'off | open | domain | invitation',
    default: 'off',
    doc: 'Self-registration (docs/registration.md). `off`: nobody creates their own account. `open`: anyone with an e-mail address may, through "Create an account" on the login page and a link mailed to the address. `domain`: the same, for addresses of GATEHOUSE_REGISTRATION_DOMAINS only. `invitation`: no self-registration form; accounts come from invitations only. Anything but `off` needs mail (GATEHOUSE_SMTP_URL), or start-up stops.',
    parse: oneOf(REGISTRATION_MODES),
  }),
  registrationDomains: setting({
    env: 'GATEHOUSE_REGISTRATION_DOMAINS',
    type: 'list',
    default: '',
    doc: 'With GATEHOUSE_REGISTRATION=domain (which requires it): the e-mail domains whose addresses may register, comma-separated (`example.com,example.org`), compared case-insensitively and exactly (a subdomain is another domain).',
    parse: domainList,
  }),
  registrationApproval: setting({
    env: 'GATEHOUSE_REGISTRATION_APPROVAL',
    type: 'boolean',
    default: 'off',
    doc: 'on: an account created by self-registration is `pending` — it cannot sign in anywhere — until an administrator approves it (console "Registrations", `gatehouse registrations approve`, or the management API); the user is then mailed that the account is ready. A rejected registration is deleted.',
    parse: boolean,
  }),
  registrationFields: setting({
    env: 'GATEHOUSE_REGISTRATION_FIELDS',
    type: 'list',
    default: '',
    doc: 'Which of `given_name`, `family_name` the registration form requires, comma-separated (the form always offers both). The username of a registered account is its e-mail address. Empty: neither is required.',
    parse: registrationFieldList,
  }),
  registrationOrganization: setting({
    env: 'GATEHOUSE_REGISTRATION_ORGANIZATION',
    type: 'string',
    default: '',
    doc: 'The organization a self-registered user joins, by id or technical name; checked at start-up (it must exist and not be virtual). Empty: none.',
    parse: (raw) => raw.trim(),
  }),
  registrationLifetime: setting({
    env: 'GATEHOUSE_REGISTRATION_LIFETIME',
    type: 'seconds',
    default: '3600',
    doc: 'How long the link mailed to finish a registration stays usable; it is also spent by its use.',
    parse: integer(60, DAY),
  }),
  registrationsPerAddress: setting({
    env: 'GATEHOUSE_REGISTRATIONS_PER_ADDRESS',
    type: 'integer',
    default: '20',
    doc: 'Most registration asks one client address (IPv6: per /64) may make per hour; further ones are answered 429 with Retry-After, whatever address they name. Behind a proxy, set GATEHOUSE_TRUSTED_PROXIES. 0: no limit.',
    parse: integer(0, 1_000_000),
  }),
  registrationsPerEmail: setting({
    env: 'GATEHOUSE_REGISTRATIONS_PER_EMAIL',
    type: 'integer',
    default: '3',
    doc: 'Most registration mails one e-mail address is sent per hour; further asks get the same answer and send nothing. 0: no limit.',
    parse: integer(0, 1000),
  }),
  accessTokenTtl: setting({ env: 'GATEHOUSE_ACCESS_TOKEN_TTL', type: 'seconds', default: '3600', doc: 'Default lifetime of an access token (a client may set a shorter one).', parse: integer(0, 365 * DAY) }),
  accessTokenFormat: setting({
    env: 'GATEHOUSE_ACCESS_TOKEN_FORMAT',
    type: ACCESS_TOKEN_FORMATS.join(' | '),
    default: 'opaque',
    doc: 'Form of an access token whose audiences registered no `access_token_format`, and of one with no audience: `opaque` (introspected, RFC 7662) or `jwt` (RFC 9068, validated locally by resource servers; docs/decisions.md, "JWT access tokens").',
    parse: oneOf(ACCESS_TOKEN_FORMATS),
  }),
  jwtAccessTokenTtl: setting({
    env: 'GATEHOUSE_JWT_ACCESS_TOKEN_TTL',
    type: 'seconds',
    default: '300',
    doc: 'Longest lifetime of a JWT access token (the client\'s `access_token_ttl` and GATEHOUSE_ACCESS_TOKEN_TTL can only shorten it). Short, because a resource server that validates it locally never learns of its revocation: it is good there until it expires.',
    parse: integer(1, 365 * DAY),
  }),
  idTokenTtl: setting({ env: 'GATEHOUSE_ID_TOKEN_TTL', type: 'seconds', default: '3600', doc: 'Lifetime of an ID token.', parse: integer(60, 365 * DAY) }),
  refreshTokenTtl: setting({
    env: 'GATEHOUSE_REFRESH_TOKEN_TTL',
    type: 'seconds',
    default: String(30 * DAY),
    doc: 'Lifetime of a refresh token from its issue; 0 means it never expires and only revocation ends it.',
    parse: integer(0, 10 * 365 * DAY),
  }),
  sessionIdleTtl: setting({ env: 'GATEHOUSE_SESSION_TTL', type: 'seconds', default: '3600', doc: 'SSO session inactivity timeout; each use of the session extends it.', parse: integer(60, 365 * DAY) }),
  sessionMaxTtl: setting({ env: 'GATEHOUSE_SESSION_MAX_TTL', type: 'seconds', default: String(DAY), doc: 'Longest an SSO session lives, however active.', parse: integer(60, 365 * DAY) }),
  apiUsername: setting({ env: 'GATEHOUSE_API_USERNAME', type: 'string', default: undefined, doc: "Username of the identity API's single account (HTTP Basic and URL parameters). Unset: those methods refuse everything.", parse: nonEmpty }),
  apiPassword: setting({ env: 'GATEHOUSE_API_PASSWORD', type: 'string', default: undefined, doc: "Password of the identity API's single account.", secret: true, parse: nonEmpty }),
  apiGroup: setting({ env: 'GATEHOUSE_API_GROUP', type: 'string', default: 'Identity API Users', doc: "Group of the identity API's default authorization policy `identity-api` (`{\"access\":{\"groups\":[this group]}}`), created at startup when GATEHOUSE_API_CLIENT_ID is set and no policy of that name exists: its members may call the API with a bearer token. Used only when the policy is first created: changing it later does not change an existing policy (`gatehouse policy update identity-api --file F.json` does; docs/identity-api.md).", parse: nonEmpty }),
  apiClientId: setting({
    env: 'GATEHOUSE_API_CLIENT_ID',
    type: 'string',
    default: undefined,
    doc: "client_id of the registered client that stands for the identity API as a resource: a bearer token is accepted only when its scope holds this value (Ubisecure: `scope=openid <CustomerID API client_id>`) and it was issued to an active client whose `aud` metadata lists this value; a user's token also needs the user to pass this client's authorization policy (by default `identity-api`, created and attached at startup; docs/identity-api.md). Unset: the bearer method refuses every token.",
    parse: nonEmpty,
  }),
  apiAuthBearer: setting({ env: 'GATEHOUSE_API_AUTH_BEARER', type: 'boolean', default: 'true', doc: 'Accept OAuth 2.0 bearer tokens (RFC 6750) at the identity API.', parse: boolean }),
  apiAuthBasic: setting({ env: 'GATEHOUSE_API_AUTH_BASIC', type: 'boolean', default: 'true', doc: "Accept HTTP Basic authentication (RFC 7617) with the API account at the identity API.", parse: boolean }),
  apiAuthUrlParams: setting({
    env: 'GATEHOUSE_API_AUTH_URL_PARAMS',
    type: 'boolean',
    default: 'true',
    doc: "Accept the API account as `username` and `password` query parameters (never form fields) at the identity API. They are redacted from logs, but proxies may log them: prefer Basic.",
    parse: boolean,
  }),
  apiMaxResults: setting({
    env: 'GATEHOUSE_API_MAX_RESULTS',
    type: 'integer',
    default: '10000',
    doc: 'Most entries one identity API listing returns; a larger `maxResults`, or a listing that would exceed it, is refused with "Size limit exceeded".',
    parse: integer(1, 1_000_000),
  }),
  identityRestPrefix: setting({ env: 'GATEHOUSE_IDENTITY_REST_PREFIX', type: 'path segment', default: 'customerid-rest', doc: 'First path segment of the identity REST API (`/{prefix}/services/2.0/...`).', parse: prefix }),
  legacyRestPrefix: setting({ env: 'GATEHOUSE_LEGACY_REST_PREFIX', type: 'path segment', default: 'eidm2', doc: 'First path segment of the legacy identity API (`/{prefix}/services/...`).', parse: prefix }),
  dynamicRegistration: setting({
    env: 'GATEHOUSE_DYNAMIC_REGISTRATION',
    type: DYNAMIC_REGISTRATION_MODES.join(' | '),
    default: 'off',
    doc: 'RFC 7591/7592 dynamic client registration at `<issuer>/oauth2/register`. `off`: the endpoint answers 404 and discovery names no `registration_endpoint`. `initial_access_token`: discovery publishes it, and each registration must carry `Authorization: Bearer <initial access token>` minted by an administrator (`gatehouse registration-token create`, or the management API), each with an expiry and a use count; the registration access token it answers manages that one client (docs/authorization.md, "Dynamic client registration").',
    parse: oneOf(DYNAMIC_REGISTRATION_MODES),
  }),
  manageAdminGroup: setting({
    env: 'GATEHOUSE_ADMIN_GROUP',
    type: 'string',
    default: 'Administrators',
    doc: "Group whose enabled members are administrators of the management API (`/manage/api/v1`) and the web console: they may read and change everything. Membership is read at every request. `gatehouse admin bootstrap` creates the group (docs/management-api.md). The server marks the configured group (and the read-only one) as an administrator group when it starts; after a change of the setting the old group keeps the mark, so the identity API stays out of it and its members until an operator runs `gatehouse group unmark-administrator` or deletes it ([identity-api.md](identity-api.md#administrators-are-out-of-reach)).",
    parse: nonEmpty,
  }),
  manageReadonlyGroup: setting({
    env: 'GATEHOUSE_ADMIN_READONLY_GROUP',
    type: 'string',
    default: 'Administrators (read-only)',
    doc: 'Group whose enabled members may read everything the management API shows but change nothing (every write is 403). A member of both groups is an administrator. Marked as an administrator group like `GATEHOUSE_ADMIN_GROUP`, and kept marked after a change.',
    parse: nonEmpty,
  }),
  keyCacheTtl: setting({
    env: 'GATEHOUSE_KEY_CACHE_TTL',
    type: 'seconds',
    default: '30',
    doc: 'How long a process trusts the signing keys it read from the store: a key rotated by another instance or by `gatehouse keys rotate` is used and published by every instance within this time. 0 reads them at every use.',
    parse: integer(0, 3600),
  }),
  cleanupInterval: setting({
    env: 'GATEHOUSE_CLEANUP_INTERVAL',
    type: 'seconds',
    default: '300',
    doc: 'How often each server instance deletes expired codes, tokens and sessions, in batches of 1000 rows (rules: docs/operations.md); in cluster mode one worker does it. The first run comes at a random point of the first interval, so instances spread out. 0 disables it (run `gatehouse cleanup` from a scheduler instead).',
    parse: integer(0, 7 * DAY),
  }),
  silentAuthorizationsPerSession: setting({
    env: 'GATEHOUSE_SILENT_AUTHORIZATIONS_PER_SESSION',
    type: 'integer',
    default: '60',
    doc: 'Most authorization codes one SSO session gets without the login form (single sign-on, prompt=none) per GATEHOUSE_SILENT_AUTHORIZATIONS_WINDOW; further requests are answered `temporarily_unavailable` at the redirect_uri until the window ends. Bounds the code rows one signed-in browser can create (docs/decisions.md, "Rate limit of silent authorizations"). 0: no limit.',
    parse: integer(0, 1_000_000),
  }),
  silentAuthorizationsPerAddress: setting({
    env: 'GATEHOUSE_SILENT_AUTHORIZATIONS_PER_ADDRESS',
    type: 'integer',
    default: '3000',
    doc: 'Most authorization codes issued without the login form to one client address (IPv6: per /64), whatever the session, per GATEHOUSE_SILENT_AUTHORIZATIONS_WINDOW. Behind a proxy, set GATEHOUSE_TRUSTED_PROXIES, or every user shares the proxy\'s budget; raise it when many users share one address (a large NAT). 0: no limit.',
    parse: integer(0, 1_000_000),
  }),
  silentAuthorizationsWindow: setting({
    env: 'GATEHOUSE_SILENT_AUTHORIZATIONS_WINDOW',
    type: 'seconds',
    default: '60',
    doc: 'The fixed window of the two limits above: it starts at the first silent authorization and its count is forgotten when it ends.',
    parse: integer(1, DAY),
  }),
  keyEncryptionKey: setting({
    env: 'GATEHOUSE_KEY_ENCRYPTION_KEY',
    type: 'string',
    default: undefined,
    doc: 'When set, private signing keys are encrypted at rest (AES-256-GCM) with a key derived from this value; keys stored in the clear before are sealed at start. Start-up stops when the stored keys were sealed with another value. At least 32 characters. Also seals the secrets of `client_secret_jwt` clients: without it that method (and HS256) is not offered in discovery and cannot be registered. And the TOTP secrets of second factors as they are enrolled or imported; those stored before are sealed by `gatehouse factors seal` (docs/second-factors.md).',
    secret: true,
    parse: encryptionKey,
  }),
  trustedProxies: setting({
    env: 'GATEHOUSE_TRUSTED_PROXIES',
    type: 'list',
    default: '',
    doc: 'Comma-separated IP addresses or CIDR ranges of reverse proxies whose X-Forwarded-For is trusted; any other entry stops start-up. Empty: none is.',
    parse: proxyList,
  }),
  throttle: setting({
    env: 'GATEHOUSE_THROTTLE',
    type: 'boolean',
    default: 'true',
    doc: 'Throttle failed logins and client authentications (progressive delay, then a temporary lockout; counters in the store, shared by every instance). Policy: docs/decisions.md, "Hardening".',
    parse: boolean,
  }),
  throttleUserFailures: setting({
    env: 'GATEHOUSE_THROTTLE_USER_FAILURES',
    type: 'integer',
    default: '5',
    doc: 'Failed logins per username (login page, identity API account) before each further attempt must wait 2^(n - this) seconds. A correct password from an address that has not failed on the username is never refused: not while the username waits, nor while other attempts on it are still being verified (it waits for those to end).',
    parse: integer(1, 1000),
  }),
  throttleIpFailures: setting({
    env: 'GATEHOUSE_THROTTLE_IP_FAILURES',
    type: 'integer',
    default: '50',
    doc: 'Failures per client address (IPv6: per /64) before the address must wait 2^(n - this) seconds; logins, client authentication and the identity API count separately. A registered client is told to wait for the address only from its second failure there, so one failing client does not hold the others. Raise it when many users share one address and no trusted proxy tells them apart.',
    parse: integer(1, 1_000_000),
  }),
  throttleClientFailures: setting({
    env: 'GATEHOUSE_THROTTLE_CLIENT_FAILURES',
    type: 'integer',
    default: '10',
    doc: 'Failed client authentications per registered client_id (token, introspection, revocation) before wrong secrets are answered 429 `slow_down` for 2^(n - this) seconds. A correct secret is never refused.',
    parse: integer(1, 1_000_000),
  }),
  throttleMaxDelay: setting({ env: 'GATEHOUSE_THROTTLE_MAX_DELAY', type: 'seconds', default: '900', doc: 'Longest wait the throttle imposes (the temporary lockout).', parse: integer(1, DAY) }),
  throttleWindow: setting({
    env: 'GATEHOUSE_THROTTLE_WINDOW',
    type: 'seconds',
    default: '3600',
    doc: 'A failure counter is forgotten this long after its last failure. At least GATEHOUSE_THROTTLE_MAX_DELAY.',
    parse: integer(1, 30 * DAY),
  }),
  auditLog: setting({
    env: 'GATEHOUSE_AUDIT_LOG',
    type: 'path',
    default: undefined,
    doc: 'File that audit events (JSON lines with `"audit":true`) are appended to, by the server and by CLI commands (user and client changes), whatever GATEHOUSE_LOG_LEVEL says. Unset: the server writes them into its log on stdout (at info, unless the level is silent) and CLI commands write none.',
    parse: nonEmpty,
  }),
  auditStore: setting({
    env: 'GATEHOUSE_AUDIT_STORE',
    type: 'boolean',
    default: 'on',
    doc: 'Also keep audit events in the store (table `audit_events`), where the management API lists them (`GET /manage/api/v1/audit-events`). The server writes them in batches every 100 ms, besides the file or log copy above, so an event reaches the table about 100 ms after it happens, and a few hundred under load (300 ms was measured: the batch’s insert waits its turn at the database); a crash loses at most the last batch from the store (docs/operations.md, "Audit events in the store"). `off`: only the file or log.',
    parse: boolean,
  }),
  auditRetention: setting({
    env: 'GATEHOUSE_AUDIT_RETENTION',
    type: 'days',
    default: '90',
    doc: 'How long the store keeps an audit event: the cleanup job deletes older ones in batches of 1000 (GATEHOUSE_CLEANUP_INTERVAL, or `gatehouse cleanup`). 0 keeps them for ever. The audit file is not touched.',
    parse: integer(0, 36_500),
  }),
  workers: setting({
    env: 'GATEHOUSE_WORKERS',
    type: 'integer',
    default: undefined,
    shownDefault: 'the number of CPU cores',
    doc: 'Worker processes (node:cluster) serving HTTP on the one port and sharing the store; a worker that dies is restarted. 1: no cluster, the server runs in the main process.',
    parse: integer(1, 1024),
  }),
  metricsPort: setting({
    env: 'GATEHOUSE_METRICS_PORT',
    type: 'integer',
    default: undefined,
    doc: 'TCP port of a separate listener that serves Prometheus metrics at `GET /metrics` (docs/operations.md, "Metrics"); in cluster mode the primary serves it, summing the workers. Unset: no metrics are collected or served. The main port never serves them.',
    parse: integer(0, 65535),
  }),
  metricsHost: setting({
    env: 'GATEHOUSE_METRICS_HOST',
    type: 'string',
    default: '127.0.0.1',
    doc: 'Address the metrics listener binds to. Set it to an address the scraper reaches (e.g. `0.0.0.0` in a container), with GATEHOUSE_METRICS_TOKEN or a network policy.',
    parse: nonEmpty,
  }),
  metricsToken: setting({
    env: 'GATEHOUSE_METRICS_TOKEN',
    type: 'string',
    default: undefined,
    doc: 'When set, a scrape of the metrics listener must send `Authorization: Bearer <token>` (Prometheus `authorization: {credentials: …}`); others get 401. At least 32 characters.',
    secret: true,
    parse: encryptionKey,
  }),
  logLevel: setting({ env: 'GATEHOUSE_LOG_LEVEL', type: LOG_LEVELS.join(' | '), default: 'info', doc: 'Least severe log level written. At `info`: audit events, warnings and errors; `debug` adds one line per request (method, URL with every parameter value redacted but those of an allowlist, status, time; docs/decisions.md X4).', parse: oneOf(LOG_LEVELS) }),
  logTime: setting({
    env: 'GATEHOUSE_LOG_TIME',
    type: LOG_TIMES.join(' | '),
    default: 'epoch',
    doc: 'The `time` of each log line: `epoch`, milliseconds since 1970 (pino\'s default, cheapest to write); `iso`, an ISO 8601 string in UTC such as `"2026-11-24T07:00:00.000Z"`. Logs are JSON lines on stdout either way; for a terminal, pipe them through pino-pretty (README.md, "Logs").',
    parse: oneOf(LOG_TIMES),
  }),
  acr: setting({
    env: 'GATEHOUSE_ACR',
    type: 'string',
    default: undefined,
    doc: 'The acr value (authentication context class reference) of a single-method sign-in, such as a password alone: the weakest level (`single`), put before the levels of GATEHOUSE_ACR_LEVELS unless that list names it. Unset, with GATEHOUSE_ACR_LEVELS unset too: no `acr` claim and no `acr_values_supported`.',
    parse: nonEmpty,
  }),
  acrLevels: setting({
    env: 'GATEHOUSE_ACR_LEVELS',
    type: 'list',
    default: undefined,
    doc: 'Levels of authentication, weakest first: `value=requirement` entries, the requirement one of `single` (any sign-in), `multi` (two factors: amr `mfa`), `phr` (phishing-resistant: a passkey, amr `hwk` or `swk`), `phrh` (a device-bound passkey, amr `hwk`); `phr` and `phrh` alone mean themselves (OpenID EAP ACR Values 1.0). One level per requirement. `acr_values_supported` lists exactly these values (with GATEHOUSE_ACR\'s). Recommended: `urn:gatehouse:loa:password=single,urn:gatehouse:loa:mfa=multi,phr,phrh` (docs/authorization.md, "Levels of authentication"). Unset: only GATEHOUSE_ACR\'s level, if any.',
    parse: (raw) => parseAcrLevels(list(raw)),
  }),
  totpIssuer: setting({
    env: 'GATEHOUSE_TOTP_ISSUER',
    type: 'string',
    default: undefined,
    doc: 'The issuer an authenticator app shows beside a TOTP factor enrolled here (the `issuer` of the otpauth:// URI, docs/second-factors.md). Unset: the host of GATEHOUSE_ISSUER.',
    parse: nonEmpty,
  }),
  configFile: setting({
    env: CONFIG_FILE_VARIABLE,
    type: 'path',
    default: undefined,
    doc: 'A YAML (`.yaml`, `.yml`) or JSON (`.json`) file of settings, keyed by the variable names of this table (`GATEHOUSE_PORT: 8443`; a list may be a sequence). A variable set in the environment wins over the file. An unknown key, or one whose value is not a string, number, boolean (or list), stops start-up. Unset: no file.',
    parse: nonEmpty,
  }),
  secureCookies: setting({
    env: 'GATEHOUSE_SECURE_COOKIES',
    type: 'boolean',
    default: undefined,
    shownDefault: 'true when the issuer is https',
    doc: 'Mark cookies Secure (and give them the __Host- prefix).',
    parse: boolean,
  }),
  smtpUrl: setting({
    env: 'GATEHOUSE_SMTP_URL',
    type: 'URL',
    default: undefined,
    doc: 'Where mail is sent (docs/mail.md): `smtp://user:password@host:587` (the connection must be upgraded with STARTTLS, or nothing is sent; see GATEHOUSE_SMTP_STARTTLS) or `smtps://user:password@host:465` (TLS from the first byte). Percent-encode `@`, `:` and `/` in the user and password. Unset: mail is off, and every feature that needs it says so (`gatehouse mail test` fails) instead of dropping mail.',
    secret: true,
    parse: smtpUrl,
  }),
  smtpStarttls: setting({
    env: 'GATEHOUSE_SMTP_STARTTLS',
    type: 'required | off',
    default: 'required',
    doc: '`required`: an `smtp://` server that does not offer STARTTLS, or whose certificate does not verify, gets no mail (it is retried and then dead). `off`: mail goes to an `smtp://` server unencrypted, for a relay on this machine or its private network only (a local Postfix, a test server). Not allowed with `smtps://`.',
    parse: oneOf(['required', 'off'] as const),
  }),
  mailFrom: setting({
    env: 'GATEHOUSE_MAIL_FROM',
    type: 'address',
    default: undefined,
    doc: 'The From of every mail: `sso@example.com` or `Example SSO <sso@example.com>`. Required with GATEHOUSE_SMTP_URL. Its domain also names each mail\'s Message-ID (`<message id@domain>`).',
    parse: mailFrom,
  }),
  smtpTimeout: setting({
    env: 'GATEHOUSE_SMTP_TIMEOUT',
    type: 'seconds',
    default: '30',
    doc: 'The longest the SMTP server may take to accept a connection, to greet, or to answer one command; then the attempt fails and is retried later.',
    parse: integer(1, 600),
  }),
  outboxInterval: setting({
    env: 'GATEHOUSE_OUTBOX_INTERVAL',
    type: 'seconds',
    default: '5',
    doc: 'How often this process looks for messages due in the outbox (mail, back-channel logout tokens) and sends them. Every instance may: each message is sent by one at a time (docs/mail.md, "The outbox"). 0: this process sends nothing (another does).',
    parse: integer(0, 3600),
  }),
  outboxMaxAttempts: setting({
    env: 'GATEHOUSE_OUTBOX_MAX_ATTEMPTS',
    type: 'integer',
    default: '12',
    doc: 'Attempts at a message whose failures are temporary (4xx replies, the server unreachable, timeouts) before it is dead: retried after 30 s, then twice as long each time up to an hour (with jitter), so 12 attempts span about 5 hours. A permanent refusal (5xx) is dead after 3 attempts. An administrator can redeliver a dead message.',
    parse: integer(1, 100),
  }),
  outboundLoopback: setting({
    env: 'GATEHOUSE_OUTBOUND_LOOPBACK',
    type: 'boolean',
    default: 'off',
    doc: 'Whether gatehouse may POST back-channel logout tokens and webhooks to a loopback address (127.0.0.0/8, ::1), over http or https: for development and tests on one machine. `off`: such URLs are refused at each delivery (docs/logout.md, "Where gatehouse may POST").',
    parse: boolean,
  }),
  outboundPrivate: setting({
    env: 'GATEHOUSE_OUTBOUND_PRIVATE',
    type: 'boolean',
    default: 'off',
    doc: 'Whether gatehouse may POST back-channel logout tokens and webhooks to addresses that are not public (private networks such as 10.0.0.0/8 and fc00::/7, link-local, shared and reserved ranges), checked against the address the receiver\'s name resolves to at each delivery. `off`: only public addresses, so a registered URL cannot reach into the network gatehouse runs in.',
    parse: boolean,
  }),
  backchannelLogoutOnExpiry: setting({
    env: 'GATEHOUSE_BACKCHANNEL_LOGOUT_ON_EXPIRY',
    type: 'boolean',
    default: 'off',
    doc: 'Whether a session that expires (its idle or absolute lifetime, GATEHOUSE_SESSION_TTL and GATEHOUSE_SESSION_MAX_TTL) also logs the user out of the applications it signed in to: the cleanup job (GATEHOUSE_CLEANUP_INTERVAL, or `gatehouse cleanup`) ends each such session 15 minutes after it expired and queues a back-channel logout token for each of its applications, in the same unit of work (docs/logout.md). `off`: an expired session is deleted an hour later and tells nobody.',
    parse: boolean,
  }),
  outboundTimeout: setting({
    env: 'GATEHOUSE_OUTBOUND_TIMEOUT',
    type: 'seconds',
    default: '5',
    doc: 'The longest one POST to a relying party (a back-channel logout token) or a webhook endpoint may take, connection to answer; then the attempt fails and is retried later with back-off (GATEHOUSE_OUTBOX_MAX_ATTEMPTS).',
    parse: integer(1, 60),
  }),
  webhookSecretOverlap: setting({
    env: 'GATEHOUSE_WEBHOOK_SECRET_OVERLAP',
    type: 'seconds',
    default: '86400',
    doc: 'After a webhook endpoint\'s secret is rotated (`gatehouse webhooks rotate-secret`), how long the previous secret still signs each delivery beside the new one, so receivers can switch without missing one (docs/webhooks.md, "Rotating the secret"); then only the new one signs. 0: the old secret stops at once.',
    parse: integer(0, 30 * DAY),
  }),
  // Only the folder: the theme is loaded where it is used (configuredTheme in
  // src/http/interaction/theme.ts, at start-up and by `gatehouse theme check`).
  themeDir: setting<string>({
    env: 'GATEHOUSE_THEME_DIR',
    type: 'path',
    default: undefined,
    doc: 'Folder of a login-page theme: `theme.json` with the product name, logo, favicon, colours, custom CSS and per-locale texts (docs/theming.md; example: examples/theme). Read and validated once at start-up: an invalid theme stops start-up with a message naming the file and field. Unset: the built-in look.',
    parse: nonEmpty,
  }),
};

type Settings = typeof settings;
type ParsedSetting<S> = S extends Setting<infer T> ? T : never;
type Optional = 'apiUsername' | 'apiPassword' | 'apiClientId' | 'keyEncryptionKey' | 'acr' | 'acrLevels' | 'totpIssuer' | 'auditLog' | 'metricsPort' | 'metricsToken' | 'configFile' | 'themeDir' | 'smtpUrl' | 'mailFrom';
// `home` and `databaseUrl` are always set: their defaults are derived (loadConfig).

export type Config = {
  readonly [K in Exclude<keyof Settings, Optional | 'secureCookies'>]: ParsedSetting<Settings[K]>;
} & {
  readonly [K in Optional]: ParsedSetting<Settings[K]> | undefined;
} & {
  readonly secureCookies: boolean;
  /** The absolute path of the SQLite file, when the store is SQLite. */
  readonly sqlitePath: string | undefined;
  /** The issuer's path, where the OpenID Provider's routes live: `/uas` by default, `` at the root. */
  readonly issuerPath: string;
  /** GATEHOUSE_ISSUER was unset (in the environment and the file): the issuer is derived from host and port. */
  readonly issuerDerived: boolean;
  /** The levels of authentication, weakest first: GATEHOUSE_ACR's then GATEHOUSE_ACR_LEVELS' (src/oauth/levels.ts); empty: no acr claim. */
  readonly levels: readonly AcrLevel[];
};

export type Env = Record<string, string | undefined>;

/** The settings of each loaded Config that came from the config file, with that file. */
const FROM_FILE = new WeakMap<Config, ReadonlyMap<string, string>>();

/**
 * The error for a setting whose value is checked where it is used, after loadConfig (the login
 * theme of GATEHOUSE_THEME_DIR): worded as loadConfig words its own, naming the config file when
 * the value came from there.
 */
export function settingError(config: Config, variable: string, error: unknown): ConfigError {
  const file = FROM_FILE.get(config)?.get(variable);
  return new ConfigError(variable, `${(error as Error).message}${file === undefined ? '' : ` (in ${file})`}`);
}

/** Reads and validates every setting; throws a ConfigError naming the first bad variable. */
export function loadConfig(env: Env = process.env): Config {
  const fromFile = configFileSettings(env);
  const out: Record<string, unknown> = {};
  const filed = new Map<string, string>();
  for (const [key, s] of Object.entries(settings) as [string, Setting<unknown>][]) {
    const set = env[s.env] !== undefined && env[s.env] !== '';
    const raw = set ? env[s.env] : (fromFile[s.env] ?? s.default);
    if (!set && fromFile[s.env] !== undefined) filed.set(s.env, env[CONFIG_FILE_VARIABLE]!);
    if (raw === undefined) {
      out[key] = undefined;
      continue;
    }
    try {
      out[key] = s.parse(raw);
    } catch (error) {
      const where = !set && fromFile[s.env] !== undefined ? ` (in ${env[CONFIG_FILE_VARIABLE]})` : '';
      throw new ConfigError(s.env, `${(error as Error).message}${where}`);
    }
  }
  const host = out.host as string;
  out.issuerDerived = out.issuer === undefined;
  if (out.issuer === undefined) {
    const publicHost = allInterfaces(host) ? 'localhost' : host.includes(':') ? `[${host}]` : host;
    out.issuer = `http://${publicHost}:${out.port as number}/uas`;
  }
  // The cores this process may run on (so `taskset -c 0 npm start` means one worker).
  if (out.workers === undefined) out.workers = availableParallelism();
  if (out.secureCookies === undefined) out.secureCookies = (out.issuer as string).startsWith('https:');
  if ((out.apiUsername === undefined) !== (out.apiPassword === undefined)) {
    throw new ConfigError(out.apiUsername === undefined ? 'GATEHOUSE_API_USERNAME' : 'GATEHOUSE_API_PASSWORD', 'set both GATEHOUSE_API_USERNAME and GATEHOUSE_API_PASSWORD, or neither');
  }
  if ((out.throttleWindow as number) < (out.throttleMaxDelay as number)) {
    throw new ConfigError('GATEHOUSE_THROTTLE_WINDOW', 'must be at least GATEHOUSE_THROTTLE_MAX_DELAY, or a counter could be forgotten while it still makes callers wait');
  }
  // Node refuses a headers timeout longer than the request timeout it is part of.
  if ((out.headersTimeout as number) > (out.requestTimeout as number)) {
    throw new ConfigError('GATEHOUSE_HEADERS_TIMEOUT', 'must be at most GATEHOUSE_REQUEST_TIMEOUT: the headers are part of the request');
  }
  try {
    out.levels = configuredLevels(out.acr as string | undefined, out.acrLevels as AcrLevel[] | undefined);
  } catch (error) {
    throw new ConfigError('GATEHOUSE_ACR_LEVELS', (error as Error).message);
  }
  if (out.smtpUrl !== undefined && out.mailFrom === undefined) throw new ConfigError('GATEHOUSE_MAIL_FROM', 'is required with GATEHOUSE_SMTP_URL: every mail needs a From');
  if (out.smtpStarttls === 'off' && (out.smtpUrl as string | undefined)?.startsWith('smtps:')) {
    throw new ConfigError('GATEHOUSE_SMTP_STARTTLS', 'off cannot go with an smtps:// GATEHOUSE_SMTP_URL, which is TLS from the first byte: use smtp:// for a relay without TLS');
  }
  // Self-registration mails every asker (docs/registration.md): without mail it would drop them silently.
  if (out.registration !== 'off' && out.smtpUrl === undefined) throw new ConfigError('GATEHOUSE_REGISTRATION', `${out.registration as string} needs mail: set GATEHOUSE_SMTP_URL and GATEHOUSE_MAIL_FROM (docs/mail.md), or set it to off`);
  if (out.registration === 'domain' && (out.registrationDomains as string[]).length === 0) throw new ConfigError('GATEHOUSE_REGISTRATION_DOMAINS', 'is required with GATEHOUSE_REGISTRATION=domain: name the e-mail domains that may register');
  out.home = resolve((out.home as string | undefined) ?? DEFAULT_HOME);
  out.databaseUrl ??= `sqlite:${join(out.home as string, 'gatehouse.db')}`;
  out.issuerPath = issuerPath(out.issuer as string);
  checkIssuerPath(out.issuerPath as string, [out.identityRestPrefix as string, out.legacyRestPrefix as string]);
  const dbUrl = out.databaseUrl as string;
  const sqliteFile = dbUrl.startsWith('sqlite:') ? dbUrl.slice('sqlite:'.length) : undefined;
  out.sqlitePath = sqliteFile === undefined || sqliteFile === ':memory:' ? sqliteFile : resolve(sqliteFile);
  const config = Object.freeze(out) as Config;
  FROM_FILE.set(config, filed);
  return config;
}

/** `0.0.0.0` or `::` (in any of its spellings): a listener reachable from every network the machine is on. */
function allInterfaces(host: string): boolean {
  return host === '0.0.0.0' || (isIP(host) === 6 && /^[0:]+$/.test(host));
}

/** A host name or address that only this machine reaches (RFC 6761 §6.3 for `localhost`; RFC 1122 §3.2.1.3, RFC 4291 §2.5.3). */
function loopbackHost(hostname: string): boolean {
  const host = hostname.toLowerCase();
  return host === 'localhost' || host.endsWith('.localhost') || host === '[::1]' || (isIP(host) === 4 && host.startsWith('127.'));
}

/**
 * What the server refuses to start with unless GATEHOUSE_ALLOW_INSECURE_HTTP is set (decisions
 * D6): an `http` issuer that other machines use, which sends passwords, codes and tokens over the
 * network in the clear (RFC 6749 §3.1 and §3.2 require TLS at the endpoints; OIDC Discovery §3 an
 * https issuer); and a listener on every interface behind the derived `http://localhost…` issuer,
 * which other machines reach but cannot use. Only the server checks this: the CLI serves nothing.
 */
export function checkServingExposure(config: Pick<Config, 'issuer' | 'issuerDerived' | 'host' | 'allowInsecureHttp'>): void {
  if (config.allowInsecureHttp) return;
  const issuer = new URL(config.issuer);
  const allow = 'or set GATEHOUSE_ALLOW_INSECURE_HTTP=true for development';
  if (issuer.protocol === 'http:' && !loopbackHost(issuer.hostname)) {
    throw new ConfigError('GATEHOUSE_ISSUER', `${config.issuer} is plain http on a host other machines use, so passwords, codes and tokens would cross the network unencrypted: set the https URL clients use (TLS at a proxy, docs/deployment.md), ${allow}`);
  }
  if (allInterfaces(config.host) && config.issuerDerived) {
    throw new ConfigError('GATEHOUSE_HOST', `${config.host} listens on every interface, but GATEHOUSE_ISSUER is unset, so the issuer is ${config.issuer}, which only this machine can use: set GATEHOUSE_ISSUER to the https URL clients use (docs/deployment.md), ${allow}`);
  }
}

/** Variables named GATEHOUSE_* that are not settings, read by gatehouse's own processes and tests. */
export const NON_SETTING_VARIABLES: readonly string[] = [
  // Set by the cluster's primary in the one worker that runs the cleanup job (src/main.ts).
  'GATEHOUSE_INTERNAL_CLEANUP_WORKER',
  // The test suite's PostgreSQL (test/helpers/databases.ts) and the benchmark's (bench/run.ts).
  'GATEHOUSE_TEST_POSTGRES_URL',
  'GATEHOUSE_BENCH_POSTGRES_URL',
  'GATEHOUSE_BENCH_LOG_LEVEL',
  // test/http/statement-counts.test.ts prints what it counted, to update its expectations.
  'GATEHOUSE_PRINT_COUNTS',
  'GATEHOUSE_PRINT_SQL',
];

export interface UnknownVariable {
  variable: string;
  /** The setting it was probably meant to be, when one is a typing slip away. */
  suggestion: string | undefined;
}

/**
 * The GATEHOUSE_* variables of the environment that are no setting of this version, each with the
 * setting it is probably a misspelling of (decisions D7). They are warned about, not refused: an
 * environment may carry variables for another version of gatehouse.
 */
export function unknownVariables(env: Env): UnknownVariable[] {
  const known = new Set<string>([...Object.values(settings).map((s: Setting<unknown>) => s.env), ...NON_SETTING_VARIABLES]);
  return Object.keys(env)
    .filter((name) => name.startsWith('GATEHOUSE_') && !known.has(name))
    .sort()
    .map((variable) => ({ variable, suggestion: similarSetting(variable, Object.values(settings).map((s: Setting<unknown>) => s.env)) }));
}

/**
 * The one warning about an unknown variable, in the server's start log and on the CLI's stderr
 * alike: that it is ignored, and the setting it is probably meant to be (or where the settings are).
 */
export function unknownVariableWarning({ variable, suggestion }: UnknownVariable): string {
  const hint = suggestion === undefined ? 'see docs/configuration.md' : `did you mean ${suggestion}?`;
  return `${variable} is not a setting of gatehouse ${VERSION} and is ignored; ${hint}`;
}

/**
 * The store, named for people (the start-up log, every CLI command): `SQLite /abs/path` or
 * `PostgreSQL postgres://user@host:port/db` without the password, nor any query parameter that
 * could hold one (`password`, `sslpassword`).
 */
export function storeDescription(config: Pick<Config, 'databaseUrl' | 'sqlitePath'>): string {
  if (config.sqlitePath !== undefined) return `SQLite ${config.sqlitePath}`;
  const url = new URL(config.databaseUrl);
  url.password = '';
  for (const name of [...url.searchParams.keys()]) if (/pass/i.test(name)) url.searchParams.delete(name);
  return `PostgreSQL ${url.toString()}`;
}

/** The settings of the file GATEHOUSE_CONFIG names, or none; the environment's values win over them. */
function configFileSettings(env: Env): Record<string, string> {
  const path = env[CONFIG_FILE_VARIABLE];
  if (path === undefined || path === '') return {};
  const known = new Map(Object.values(settings).map((s: Setting<unknown>) => [s.env, s.type]));
  try {
    return readConfigFile(path, known);
  } catch (error) {
    throw new ConfigError(CONFIG_FILE_VARIABLE, (error as Error).message);
  }
}

/** The first path segments of the OpenID Provider's routes when the issuer is a bare host. */
const ROOT_ISSUER_SEGMENTS = ['.well-known', 'oauth2', 'status', 'assets', 'theme'];

/**
 * The identity API (`/{prefix}/services/...`), the health checks (`/health/...`) and the management
 * API and console (`/manage/...`) stay at the root whatever the issuer: an issuer path starting with one of their first segments, or a bare
 * host whose routes would start with a prefix, would mix the two route trees, so it is refused.
 */
function checkIssuerPath(path: string, prefixes: string[]): void {
  // `manage`: the management API and web console (/manage/api/v1, /manage/), also at the root.
  const taken = ['health', 'manage', ...prefixes];
  const ours = path === '' ? ROOT_ISSUER_SEGMENTS : [path.split('/')[1]!];
  const clash = ours.find((segment) => taken.includes(segment));
  if (clash === undefined) return;
  throw new ConfigError(
    'GATEHOUSE_ISSUER',
    path === ''
      ? `an issuer without a path serves /${clash}/..., which an identity API prefix also uses: give the issuer a path (such as /uas) or change GATEHOUSE_IDENTITY_REST_PREFIX / GATEHOUSE_LEGACY_REST_PREFIX`
      : `its path "${path}" starts with /${clash}, which the ${clash === 'health' ? 'health checks use' : clash === 'manage' ? 'management API and console use' : 'identity API uses'}: choose another path (the default is /uas)`,
  );
}

/** A table cell: `|` would end the cell early (GitHub Flavored Markdown, tables), so it is escaped. */
function cell(text: string): string {
  return text.replaceAll('|', '\\|');
}

/** The Markdown of docs/configuration.md. */
export function configurationDocs(): string {
  const rows = Object.values(settings).map((s: Setting<unknown>) => {
    const shown = s.shownDefault ?? (s.default === undefined ? '(unset)' : s.default === '' ? '(empty)' : `\`${s.default}\``);
    return `| \`${s.env}\` | ${cell(s.type)} | ${cell(shown)} | ${cell(s.doc)}${s.secret ? ' *Secret: never logged.*' : ''} |`;
  });
  return [
    '# Configuration',
    '',
    '<!-- Generated from src/config.ts by `npm run docs:config`. Do not edit by hand. -->',
    '',
    'gatehouse is configured through environment variables; the server and the `gatehouse` CLI read the same ones.',
    'An invalid value stops start-up with a message naming the variable. An empty value counts as unset.',
    'A `GATEHOUSE_*` variable that is no setting of this table is not refused (an environment may carry the variables of another version),',
    'but the server warns of it by name at start, and every `gatehouse` command on stderr, with the setting it is likely a misspelling of (`GATEHOUSE_WORKRES`: did you mean `GATEHOUSE_WORKERS`?).',
    '',
    'The same settings may also be kept in a file that `GATEHOUSE_CONFIG` names, YAML or JSON, keyed by the variable names below;',
    'a variable set (non-empty) in the environment wins over the file. For example, `/etc/gatehouse/gatehouse.yaml`:',
    '',
    '```yaml',
    'GATEHOUSE_ISSUER: https://sso.example.com/uas',
    'GATEHOUSE_HOST: 0.0.0.0',
    'GATEHOUSE_DATABASE_URL: postgres://gatehouse:secret@db.internal:5432/gatehouse',
    'GATEHOUSE_TRUSTED_PROXIES: [10.0.0.0/8, 127.0.0.1]',
    'GATEHOUSE_WORKERS: 4',
    '```',
    '',
    'A key that is not a variable of this table is refused, naming it, rather than ignored.',
    '',
    '| Variable | Type | Default | Meaning |',
    '|---|---|---|---|',
    ...rows,
    '',
  ].join('\n');
}
