/**
 * The fuzz harness: a real gatehouse on a fresh database with a client, a public client, a user, a
 * live SSO session and live tokens in it; a raw HTTP/1.1 client that can send what fetch refuses
 * to (bad bytes in the request line, CR/LF or NUL in headers, any body under any content type);
 * the checks every answer must pass; a fingerprint of the stored state; and process handlers that
 * turn an unhandled rejection or uncaught exception anywhere in the process into a failure.
 *
 * Runs and seed: FUZZ_RUNS scales every property's number of runs (default: the small fixed
 * count `npm test` can afford), FUZZ_SEED fixes the seed (default: a fixed seed; `npm run fuzz`
 * picks a random one). The seed is printed, and a failure reports the seed and path to replay.
 */
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import fc from 'fast-check';
import type { Client } from '../../src/domain/client.ts';
import type { User } from '../../src/domain/user.ts';
import { createSession } from '../../src/oauth/sessions.ts';
import type { Store } from '../../src/storage/ports.ts';
import type { SqlStore } from '../../src/storage/sql/store.ts';
import { addClient, basic, mintCode } from '../helpers/back-channel.ts';
import type { TestDatabaseKind } from '../helpers/databases.ts';
import { createTestClient, createTestUser, RP_REDIRECT_URI } from '../helpers/fixtures.ts';
import { send as sendRaw, type RawRequest, type RawResponse } from '../helpers/raw-http.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';

// ---------------------------------------------------------------------------------------------
// Runs and seed

const DEFAULT_SEED = 20260501;

function envInt(name: string): number | undefined {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return undefined;
  const value = Number(raw);
  if (!Number.isSafeInteger(value)) throw new Error(`${name} must be an integer, got ${raw}`);
  return value;
}

export const FUZZ_SEED = envInt('FUZZ_SEED') ?? DEFAULT_SEED;
/** Multiplies the default number of runs of each property; `npm run fuzz` raises it. */
const FUZZ_SCALE = envInt('FUZZ_RUNS');

let announced = false;

/** fast-check parameters for a property whose `npm test` budget is `runs` runs. */
export function fuzzParams<Ts>(runs: number): fc.Parameters<Ts> {
  if (!announced) {
    announced = true;
    console.log(`# fuzz: FUZZ_SEED=${FUZZ_SEED}${FUZZ_SCALE === undefined ? '' : ` FUZZ_RUNS=${FUZZ_SCALE}`}`);
  }
  return {
    seed: FUZZ_SEED,
    numRuns: FUZZ_SCALE === undefined ? runs : Math.max(runs, FUZZ_SCALE),
    endOnFailure: true,
    // fast-check's report, with over-long values cut so a 70 000-character counterexample stays readable.
    asyncReporter: async (details) => {
      if (!details.failed) return;
      const cause = details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance);
      throw new Error(shorten(`${(await fc.asyncDefaultReportMessage(details)) ?? 'property failed'}\nCause: ${cause}`));
    },
  };
}

function shorten(text: string): string {
  return text.replace(/([^]{1,12}?)\1{20,}/g, (run, unit: string) => `${unit.repeat(3)}…(${run.length / unit.length}×)`).slice(0, 4000);
}

// ---------------------------------------------------------------------------------------------
// No unhandled rejection, no uncaught exception

const processFailures: string[] = [];
let handlersInstalled = false;

/** Records every unhandled rejection and uncaught exception of the process, to fail the test. */
export function installProcessHandlers(): void {
  if (handlersInstalled) return;
  handlersInstalled = true;
  process.on('unhandledRejection', (reason) => processFailures.push(`unhandled rejection: ${describe(reason)}`));
  process.on('uncaughtException', (error) => processFailures.push(`uncaught exception: ${describe(error)}`));
}

export function assertNoProcessFailures(): void {
  printStatusCounts();
  assert.deepEqual(processFailures, [], 'no unhandled rejection or uncaught exception in the process');
}

function describe(value: unknown): string {
  return value instanceof Error ? (value.stack ?? value.message) : String(value);
}

// ---------------------------------------------------------------------------------------------
// Raw HTTP (test/helpers/raw-http.ts), counting answers by status for FUZZ_STATS

/** Answers by status, per suite, printed with FUZZ_STATS=1 to see what a run reached. */
const statusCounts = new Map<string, Map<number, number>>();

export function countStatus(suite: string, status: number): void {
  const counts = statusCounts.get(suite) ?? new Map<number, number>();
  counts.set(status, (counts.get(status) ?? 0) + 1);
  statusCounts.set(suite, counts);
}

export function printStatusCounts(): void {
  if (!process.env.FUZZ_STATS) return;
  for (const [suite, counts] of statusCounts) {
    console.log(`# ${suite}: ${[...counts].sort(([a], [b]) => a - b).map(([status, n]) => `${status}×${n}`).join(' ')}`);
  }
  statusCounts.clear();
}

export type { RawRequest, RawResponse } from '../helpers/raw-http.ts';

/** One request on its own connection; see test/helpers/raw-http.ts. */
export async function send(port: number, request: RawRequest): Promise<RawResponse> {
  const response = await sendRaw(port, request);
  countStatus(`${/^[A-Z]{1,10}$/.test(request.method) ? request.method : 'other'} ${request.target.split('?')[0]!.split('/').slice(0, 4).join('/').slice(0, 40)}`, response.status);
  return response;
}

/** A form body or query string from pairs, encoded as browsers do (fine for valid requests). */
export function formOf(pairs: readonly (readonly [string, string])[]): string {
  return new URLSearchParams(pairs as [string, string][]).toString();
}

// ---------------------------------------------------------------------------------------------
// What every answer must be

/**
 * Node's HTTP parser refused the request before any route saw it (src/http/plugins/limits.ts:
 * clientErrorHandler): header overflow, a malformed request line or header, a timeout. No
 * endpoint-specific format is possible there; the answer is the OAuth JSON error.
 */
export function isTransportRefusal(response: RawResponse): boolean {
  if (![400, 408, 431].includes(response.status) || !/^application\/json/.test(response.headers['content-type'] ?? '') || response.body === '') return false;
  const body = JSON.parse(response.body) as { error?: string; error_description?: string };
  return body.error === 'invalid_request' && TRANSPORT_DESCRIPTIONS.some((d) => body.error_description?.startsWith(d));
}

const TRANSPORT_DESCRIPTIONS = ['The request line and headers are larger than', 'The request is malformed.', 'The request took too long'];

/** What an answer may differ in by surface: the console's pages send `Referrer-Policy: same-origin` (src/http/console/views.ts). */
export interface SafeResponseOptions {
  referrerPolicies?: readonly string[];
}

/** The security headers of every response (src/http/plugins/security-headers.ts). */
export function assertSecurityHeaders(response: RawResponse, context: string, options: SafeResponseOptions = {}): void {
  const csp = response.headers['content-security-policy'] ?? '';
  assert.match(csp, /default-src 'none'/, `CSP on ${context}`);
  assert.match(csp, /frame-ancestors 'none'/, `CSP on ${context}`);
  assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/, `CSP on ${context}`);
  assert.equal(response.headers['x-frame-options'], 'DENY', `X-Frame-Options on ${context}`);
  assert.equal(response.headers['x-content-type-options'], 'nosniff', `X-Content-Type-Options on ${context}`);
  const referrerPolicies = options.referrerPolicies ?? ['no-referrer'];
  assert.ok(referrerPolicies.includes(response.headers['referrer-policy'] ?? ''), `Referrer-Policy on ${context}: ${response.headers['referrer-policy']}`);
}

/** Stack frames, file paths, SQL and driver messages, JS error names: none may reach a body. */
const LEAKS: [string, RegExp][] = [
  ['a stack frame', /\n\s*at \S|\bat (?:async )?[\w$.<>[\]]+ \(/],
  ['a file path', /(?:\/(?:work|home|root|usr|tmp|opt|var|src|node_modules)\/[\w.-]+)|file:\/\/|\.[cm]?[jt]s:\d+/],
  ['SQL text', /\b(?:select\s[\s\S]{0,80}\bfrom|insert\s+into|update\s+\w+\s+set|delete\s+from|returning\s+\*)\b/i],
  ['a database message', /SQLITE_|sqlite3?_|syntax error|relation "|violates .* constraint|duplicate key|invalid byte sequence|invalid input syntax|\bpg_(?:catalog|class|namespace|stat)|kysely|node:sqlite/i],
  ['a JS error name', /\b(?:Type|Range|Syntax|Reference|Eval|URI|Aggregate|Internal|Database)?Error: /],
  ['undefined or NaN text', /\b(?:undefined|NaN|\[object Object\])\b/],
];

/**
 * The invariants of any answer to anything: never a 5xx, never a leak of internals, always the
 * security headers, and a body in a known format. The error page's "Error: <code>…" label is the
 * only "Error:" a body may hold.
 */
export function assertSafeResponse(response: RawResponse, context: string, sent = '', options: SafeResponseOptions = {}): void {
  assert.ok(response.status >= 200 && response.status < 500, `${context}: status ${response.status}: ${response.body.slice(0, 300)}`);
  assertSecurityHeaders(response, context, options);
  // Random tokens (the CSRF field, ids) may spell anything by chance ("-NaN-", "pg_"): not text.
  const body = response.body.replace(/<p class="error-detail">[^:<]{1,20}: <code>/g, '').replace(/[A-Za-z0-9_-]{32,}/g, '');
  const echoes = unescapeHtml(sent);
  for (const [what, pattern] of LEAKS) {
    const found = pattern.exec(body) ?? pattern.exec(unescapeHtml(body));
    // The login page keeps the username and carries the request in hidden fields: an echo of
    // what was sent (HTML-escaped) is not a leak.
    if (found !== null && (sent.includes(found[0]) || echoes.includes(found[0]))) continue;
    assert.equal(found, null, `${context}: the body holds ${what} (${JSON.stringify(found?.[0])}): ${response.body.slice(0, 500)}`);
  }
  const type = response.headers['content-type'] ?? '';
  if (response.body.length > 0) assert.match(type, /^(?:application\/(?:json|jwk-set\+json|problem\+json|xml)|text\/(?:html|css|xml|javascript)|image\/x-icon)(?:;|$)/, `${context}: content-type ${type}`);
  if (/^application\/(?:jwk-set\+|problem\+)?json/.test(type) && response.body.length > 0) {
    assert.doesNotThrow(() => JSON.parse(response.body), `${context}: a JSON body that parses`);
  }
  if (response.status >= 400 && /^application\/json/.test(type) && response.body.length > 0) {
    const parsed = JSON.parse(response.body) as Record<string, unknown>;
    // OAuth errors (RFC 6749 §5.2): error and error_description in the allowed ASCII only.
    if (typeof parsed.error === 'string') {
      assert.match(parsed.error, /^[\x20\x21\x23-\x5b\x5d-\x7e]+$/, `${context}: error code charset`);
      if (parsed.error_description !== undefined) assert.match(String(parsed.error_description), /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/, `${context}: error_description charset`);
    }
  }
}

function unescapeHtml(text: string): string {
  return text.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
}

// ---------------------------------------------------------------------------------------------
// The stored state

export interface Fingerprint {
  tokens: number;
  revoked: number;
  rotated: number;
  codes: number;
  consumed: number;
  replayed: number;
  sessions: number;
  sessionDeadlines: number;
  users: number;
  clients: number;
  groups: number;
  organizations: number;
  groupMembers: number;
  userAttributes: number;
  organizationAttributes: number;
  usersUpdated: number;
  organizationsUpdated: number;
  /** Remembered consents to third-party clients (migration 013). */
  consents: number;
}

/**
 * Counts that any change a request could make would move: rows created, codes consumed or
 * replayed, tokens revoked or rotated, sessions created, ended or extended, users, organizations,
 * their attributes and group memberships created or updated. (Throttling counters
 * are left out: counting failures is what they are for.)
 */
export async function fingerprint(server: RunningServer): Promise<Fingerprint> {
  const { db } = (server.gatehouse.store as SqlStore).database;
  const { rows } = await sql<Record<keyof Fingerprint, number | string>>`
    select
      (select count(*) from tokens) as tokens,
      (select count(revoked_at) from tokens) as revoked,
      (select count(rotated_at) from tokens) as rotated,
      (select count(*) from authorization_codes) as codes,
      (select count(consumed_at) from authorization_codes) as consumed,
      (select count(replayed_at) from authorization_codes) as replayed,
      (select count(*) from sessions) as sessions,
      (select coalesce(sum(expires_at), 0) from sessions) as "sessionDeadlines",
      (select count(*) from users) as users,
      (select count(*) from clients) as clients,
      (select count(*) from groups) as groups,
      (select count(*) from organizations) as organizations,
      (select count(*) from group_members) as "groupMembers",
      (select count(*) from user_attributes) as "userAttributes",
      (select count(*) from organization_attributes) as "organizationAttributes",
      (select coalesce(sum(updated_at), 0) from users) as "usersUpdated",
      (select coalesce(sum(updated_at), 0) from organizations) as "organizationsUpdated",
      (select count(*) from consents) as consents
  `.execute(db);
  const row = rows[0]!;
  return Object.fromEntries(Object.entries(row).map(([name, value]) => [name, Number(value)])) as unknown as Fingerprint;
}

// ---------------------------------------------------------------------------------------------
// The target

export const PASSWORD = 'fuzz password 1';

export interface FuzzTarget {
  server: RunningServer;
  port: number;
  store: Store;
  /** A confidential client with RP_REDIRECT_URI, refresh tokens and a post-logout URI, and its secret. */
  client: Client;
  clientSecret: string;
  /** A public client (PKCE required) with a loopback and a private-use-scheme redirect URI. */
  publicClient: Client;
  /** An enabled user whose password is PASSWORD. */
  user: User;
  /** A confidential client of its own, so one suite's failed attempts never throttle another's. */
  newClient(): Promise<{ client: Client; secret: string }>;
  /** A fresh, unredeemed code for `client` (default: the main one) at RP_REDIRECT_URI. */
  freshCode(client?: Client): Promise<string>;
  /** Live tokens for `client`, through a real code redemption. */
  freshTokens(client?: Client, secret?: string): Promise<{ accessToken: string; refreshToken: string; idToken: string }>;
  /** A new live SSO session of the user: its cookie value and session_index. */
  freshSession(): Promise<{ cookie: string; sessionIndex: string }>;
  close(): Promise<void>;
}

export async function startFuzzTarget(kind: TestDatabaseKind, env: Record<string, string> = {}): Promise<FuzzTarget> {
  const server = await startServer(kind, { env });
  const port = Number(new URL(server.url).port);
  const store = server.gatehouse.store;
  const newClient = async () => {
    const { client, clientSecret } = await createTestClient(store, { refreshTokens: true, postLogoutRedirectUris: ['https://rp.example.test/bye'] });
    return { client, secret: clientSecret };
  };
  const main = await newClient();
  const { client: publicClient } = await addClient(store, { tokenEndpointAuthMethod: 'none', redirectUris: ['http://127.0.0.1/cb', 'com.example.app:/cb'], metadata: { application_type: 'native' } });
  const user = await createTestUser(store, { username: `fuzz-${Date.now()}`, password: PASSWORD, email: 'fuzz@example.test', givenName: 'Fuzz' });
  const freshCode = async (client: Client = main.client) => (await mintCode(store, client, user, { redirectUri: RP_REDIRECT_URI, scope: 'openid profile email' })).code;
  const freshTokens = async (client: Client = main.client, secret: string = main.secret) => {
    const response = await fetch(`${server.url}/uas/oauth2/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(client.clientId, secret) },
      body: formOf([['grant_type', 'authorization_code'], ['code', await freshCode(client)], ['redirect_uri', RP_REDIRECT_URI]]),
    });
    const tokens = (await response.json()) as { access_token: string; refresh_token: string; id_token: string };
    assert.equal(response.status, 200, JSON.stringify(tokens));
    return { accessToken: tokens.access_token, refreshToken: tokens.refresh_token, idToken: tokens.id_token };
  };
  const freshSession = async () => {
    const { cookieValue, session } = await createSession(server.gatehouse.deps, { userId: user.id });
    return { cookie: cookieValue, sessionIndex: session.sessionIndex };
  };
  return { server, port, store, client: main.client, clientSecret: main.secret, publicClient, user, newClient, freshCode, freshTokens, freshSession, close: () => server.close() };
}

// ---------------------------------------------------------------------------------------------
// Arbitraries shared by the suites

/** Strings that have broken parsers before: encodings, separators, controls, surrogates, huge. */
export const NASTY_STRINGS = [
  '',
  ' ',
  '%',
  '%%',
  '%0',
  '%00',
  '%FF',
  '%C0%AF',
  '%ED%A0%80',
  '%E0%A4%A',
  '%zz',
  '%u0041',
  '+',
  '&',
  '=',
  '==',
  '&&=&',
  '\u0000',
  'a\u0000b',
  '\r\n',
  '\r\nSet-Cookie: x=y',
  '\t',
  '\u0007',
  '\u007f',
  '\u0085',
  '\u2028',
  '\ufeff',
  '\ufffd',
  '\ud800',
  '\udfff',
  '😀',
  'Ω≈ç√',
  '<script>alert(1)</script>',
  '"\'><img src=x>',
  '../../../../etc/passwd',
  '..%2f..%2f',
  '${jndi:ldap://x}',
  '{{7*7}}',
  '<%= 7*7 %>',
  "' OR '1'='1",
  "'; DROP TABLE tokens; --",
  '__proto__',
  'constructor',
  'toString',
  'null',
  'undefined',
  'NaN',
  '-1',
  '0',
  '1e309',
  '9999999999999999999999',
  'true',
  '[]',
  '{}',
  'javascript:alert(1)',
  'data:text/html,<script>alert(1)</script>',
  'http://evil.example/',
  'https://rp.example.test/cb/../cb',
  'https://rp.example.test/cb?x=1',
  'https://rp.example.test/cb#frag',
  'HTTPS://RP.EXAMPLE.TEST/CB',
  'a'.repeat(257),
  'a'.repeat(2049),
  'a'.repeat(8193),
  'x'.repeat(70_000),
];

/** A string a fuzzer would try: nasty constants, random unicode, random ASCII, or a mix. */
export function hostileString(): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom(...NASTY_STRINGS) },
    { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
    { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 40 }) },
    { weight: 2, arbitrary: fc.string({ maxLength: 40 }) },
    { weight: 1, arbitrary: fc.tuple(fc.constantFrom(...NASTY_STRINGS), fc.string({ maxLength: 10 })).map(([a, b]) => a + b) },
  );
}

/**
 * How a form or query is put on the wire: properly encoded, raw (whatever the characters are,
 * including `%`, `&` and bytes above 0x7F), or with every byte percent-encoded (lone surrogates
 * become U+FFFD there).
 */
export type Encoding = 'proper' | 'raw' | 'percent-all';

export function encodePairs(pairs: readonly (readonly [string, string])[], encoding: Encoding): string {
  switch (encoding) {
    case 'proper':
      return formOf(pairs);
    case 'raw':
      return pairs.map(([name, value]) => `${name}=${value}`).join('&');
    case 'percent-all':
      return pairs.map(([name, value]) => `${percentAll(name)}=${percentAll(value)}`).join('&');
  }
}

function percentAll(text: string): string {
  return [...Buffer.from(text, 'utf8')].map((byte) => `%${byte.toString(16).padStart(2, '0').toUpperCase()}`).join('');
}

/**
 * A request target that Node's parser may refuse: raw text goes on the wire byte for byte
 * (latin1 of UTF-16 code units would lose information, so non-latin1 text is sent as UTF-8).
 */
export function targetOf(path: string, query: string): string {
  const full = query === '' ? path : `${path}?${query}`;
  // eslint-disable-next-line no-control-regex
  return /[^\x00-\xff]/.test(full) ? Buffer.from(full, 'utf8').toString('latin1') : full;
}

/** Header values as a fuzzer would send them. */
export const CONTENT_TYPES = [
  'application/x-www-form-urlencoded',
  'application/x-www-form-urlencoded; charset=utf-8',
  'application/x-www-form-urlencoded; charset=iso-8859-1',
  'APPLICATION/X-WWW-FORM-URLENCODED',
  'application/json',
  'application/xml',
  'text/xml',
  'text/plain',
  'multipart/form-data; boundary=x',
  'application/octet-stream',
  'application/x-www-form-urlencoded, application/json',
  '',
  '*/*',
  'application/x-www-form-urlencoded\u0000',
  'ä/ö',
];
