/**
 * The second peer of the same run (issue 27 §4): better-auth with its OAuth 2.1 provider plugin
 * (npm `better-auth` and `@better-auth/oauth-provider`, dev dependencies of the bench only),
 * in-process on SQLite through Node's own driver (node:sqlite: no native compilation), as its
 * documentation shows (`database: new DatabaseSync(path)`); the file is a fresh one in the run's
 * directory, WAL mode, as gatehouse's store. Started by the benchmark exactly as gatehouse and
 * oidc-provider are: its own process, pinned to the server's core.
 *
 * Configured as close to gatehouse's behaviour as its options allow:
 * - opaque access tokens (no `resource` is asked for), hashed in the store (its default);
 * - the JWT plugin for ID-token keys, RS256 (its `jwks.keyPairConfig`);
 * - e-mail and password accounts, hashed with argon2id at gatehouse's parameters through
 *   @node-rs/argon2 (its default is scrypt), the bench's login user signed up at start;
 * - the device authorization grant through its `oauthDeviceAuthorization` extension, for a
 *   public client (S9); its interval is 5 s;
 * - its rate limits off (`rateLimit.enabled: false` and each of the plugin's own), as gatehouse's
 *   are off in the bench: a refusal would measure the limit, not the grant;
 * - clients registered through its own admin API at start (`adminCreateOAuthClient`), which makes
 *   up their ids and secrets: the script prints them, with what it does not offer, as one JSON
 *   line on stdout (`{"clients": …, "notOffered": …}`), which the benchmark reads.
 *
 * Environment: PORT, BENCH_PEER_FIXTURE (bench/lib/peer.ts: the S8 key, the login), BENCH_PEER_DIR.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { hash, verify, type Algorithm } from '@node-rs/argon2';
import { DEVICE_CODE_GRANT_TYPE, oauthDeviceAuthorization, oauthProvider, oauthProviderOpenIdConfigMetadata } from '@better-auth/oauth-provider';
import { betterAuth } from 'better-auth';
import { getMigrations } from 'better-auth/db/migration';
import { toNodeHandler } from 'better-auth/node';
import { jwt } from 'better-auth/plugins';
import { ARGON2_PARAMETERS } from '../../src/identity/passwords.ts';
import type { PeerFixtureConfig } from './oidc-provider.ts';

const port = Number(process.env.PORT);
const fixture = JSON.parse(process.env.BENCH_PEER_FIXTURE ?? 'null') as PeerFixtureConfig | null;
const dir = process.env.BENCH_PEER_DIR;
if (!port || !fixture || !dir) throw new Error('PORT, BENCH_PEER_FIXTURE and BENCH_PEER_DIR are required');

const base = `http://127.0.0.1:${port}`;
const path = join(dir, `better-auth-${process.pid}.db`);
const database = new DatabaseSync(path);
database.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;');

// `Algorithm` is an ambient const enum (as in src/identity/passwords.ts): argon2id is 2.
const ARGON2 = { algorithm: 2 as Algorithm, memoryCost: ARGON2_PARAMETERS.memoryCost, timeCost: ARGON2_PARAMETERS.timeCost, parallelism: ARGON2_PARAMETERS.parallelism };

const auth = betterAuth({
  baseURL: base,
  secret: randomBytes(32).toString('base64url'),
  database,
  telemetry: { enabled: false },
  rateLimit: { enabled: false },
  // Passwords hashed with argon2id at gatehouse's parameters (its default is scrypt), NFKC as gatehouse compares them.
  emailAndPassword: {
    enabled: true,
    password: {
      hash: (password: string) => hash(password.normalize('NFKC'), ARGON2),
      verify: ({ hash: stored, password }: { hash: string; password: string }) => verify(stored, password.normalize('NFKC')),
    },
  },
  plugins: [
    jwt({ jwks: { keyPairConfig: { alg: 'RS256' } } }),
    oauthProvider({
      scopes: ['openid', 'profile', 'email', 'offline_access', 'read'],
      // The bench's one user registers the clients (its admin API needs a signed-in user with this privilege).
      clientPrivileges: () => true,
      // S8's assertions are signed before the round (bench/lib/assertions.ts) and live longer than
      // its default 300 s bound on `exp`; gatehouse and oidc-provider accept them.
      assertionMaxLifetime: 900,
      loginPage: '/login',
      consentPage: '/consent',
      grantTypes: ['authorization_code', 'client_credentials', 'refresh_token'],
      rateLimit: { token: false, authorize: false, introspect: false, revoke: false, register: false },
    }),
    // S9: its device authorization grant (RFC 8628), an extension of the provider.
    oauthDeviceAuthorization(),
  ],
});
await (await getMigrations(auth.options)).runMigrations();

// Its client API needs a signed-in user: the bench's login user, signed up through its own API.
const signedUp = await auth.api.signUpEmail({ body: { email: `${fixture.login.username}@example.com`, password: fixture.login.password, name: 'Ada Lovelace' }, returnHeaders: true });
const cookie = signedUp.headers
  .getSetCookie()
  .map((line) => line.split(';', 1)[0])
  .join('; ');

interface Created {
  client_id: string;
  client_secret?: string;
}
const create = async (body: Record<string, unknown>) => (await auth.api.adminCreateOAuthClient({ body, headers: new Headers({ cookie }) })) as Created;
const machine = (extra: Record<string, unknown>) => create({ grant_types: ['client_credentials'], client_credentials_scopes: ['read'], ...extra });
const ccBasic = await machine({ token_endpoint_auth_method: 'client_secret_basic', client_name: 'bench service' });
// The relying party of S2–S6: confidential, no consent screen (as gatehouse's bench clients), no PKCE (gatehouse's rp sends none).
const rp = await create({
  client_name: 'bench rp',
  redirect_uris: [fixture.redirectUri],
  grant_types: ['authorization_code', 'refresh_token'],
  response_types: ['code'],
  token_endpoint_auth_method: 'client_secret_basic',
  skip_consent: true,
  require_pkce: false,
});
// S9's public device client.
const device = await create({ client_name: 'bench TV', grant_types: [DEVICE_CODE_GRANT_TYPE], token_endpoint_auth_method: 'none' });
let ccJwt: Created | undefined;
let ccJwtRefused: string | undefined;
try {
  ccJwt = await machine({ token_endpoint_auth_method: 'private_key_jwt', jwks: { keys: [fixture.ccJwt.jwk] }, client_name: 'bench service with a key' });
} catch (error) {
  ccJwtRefused = `its admin API refuses a private_key_jwt client (${(error as Error).message})`;
}

const notOffered: Record<string, string> = {
  'S3-ES': 'its ID tokens are signed with the one key pair of its JWT plugin (RS256 here; discovery lists id_token_signing_alg_values_supported ["RS256"]), not per client',
  ...(ccJwtRefused ? { S8: ccJwtRefused } : {}),
};
process.stdout.write(
  `${JSON.stringify({
    clients: {
      ccBasic: { clientId: ccBasic.client_id, secret: ccBasic.client_secret },
      // Its introspection answers `active: true` only to the client the token was issued to (or a
      // resource the token is bound to): S1's introspecting client is S7's client itself.
      rs: { clientId: ccBasic.client_id, secret: ccBasic.client_secret },
      ...(ccJwt ? { ccJwt: { clientId: ccJwt.client_id } } : {}),
      rp: { clientId: rp.client_id, secret: rp.client_secret },
      device: { clientId: device.client_id },
    },
    // It issues refresh tokens only when offline_access is granted.
    authorizeScope: 'openid profile email offline_access',
    notOffered,
  })}\n`,
);

/**
 * The login page its authorization endpoint redirects to (`loginPage`), with the signed query
 * (`oauth_query`) kept in a hidden field. Its own sign-in API takes the password and that query
 * and answers, with the session cookie, the URL that continues the authorization; the page's
 * POST answers 303 to it, as a browser page would navigate.
 */
const LOGIN_PAGE = (query: string, message = '') => `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Sign in</title></head><body><main><h1>Sign in</h1>${message ? `<p role="alert">${message}</p>` : ''}
<form method="post" action="/login"><input type="hidden" name="oauth_query" value="${query.replace(/&/g, '&amp;').replace(/"/g, '&quot;')}"><label>Username <input type="text" name="username" autocomplete="username"></label><label>Password <input type="password" name="password" autocomplete="current-password"></label><button type="submit">Sign in</button></form></main></body></html>`;

function page(response: ServerResponse, status: number, html: string): void {
  response.writeHead(status, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store', 'content-length': Buffer.byteLength(html) });
  response.end(html);
}

async function login(request: IncomingMessage, response: ServerResponse): Promise<void> {
  if (request.method === 'GET') return page(response, 200, LOGIN_PAGE(new URL(request.url!, base).search.slice(1)));
  let body = '';
  for await (const chunk of request) body += String(chunk);
  const form = new URLSearchParams(body);
  const query = form.get('oauth_query') ?? '';
  const answer = await auth.handler(
    new Request(`${base}/api/auth/sign-in/email`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: base },
      body: JSON.stringify({ email: `${form.get('username') ?? ''}@example.com`, password: form.get('password') ?? '', oauth_query: query }),
    }),
  );
  const result = (await answer.json()) as { url?: string };
  if (!answer.ok || !result.url) return page(response, 200, LOGIN_PAGE(query, 'Wrong username or password.'));
  response.writeHead(303, { location: result.url, 'set-cookie': answer.headers.getSetCookie(), 'content-length': 0 });
  response.end();
}

const handler = toNodeHandler(auth);
const discovery = oauthProviderOpenIdConfigMetadata(auth);
const server = createServer((request, response) => {
  // Node's fetch, the bench's probing "browser", always sends `sec-fetch-mode: cors`, which
  // better-auth takes for a page script's fetch and answers with JSON instead of a redirect; a
  // browser following a link sends `navigate`, and autocannon sends none. Dropped here so the
  // probe sees what a browser sees.
  if (request.headers['user-agent'] === 'node' && request.headers['sec-fetch-mode'] === 'cors') delete request.headers['sec-fetch-mode'];
  if (request.url === '/.well-known/openid-configuration') {
    void discovery(new Request(`${base}${request.url}`)).then(async (answer) => {
      const body = await answer.text();
      response.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' });
      response.end(body);
    });
    return;
  }
  if (request.url === '/login' || request.url?.startsWith('/login?')) {
    login(request, response).catch((error: unknown) => {
      process.stderr.write(`better-auth peer login error: ${(error as Error).stack ?? String(error)}\n`);
      if (!response.headersSent) page(response, 500, '<p>error</p>');
    });
    return;
  }
  void handler(request, response);
});
server.listen(port, '127.0.0.1');
process.on('SIGTERM', () =>
  server.close(() => {
    database.close();
    for (const suffix of ['', '-wal', '-shm']) rmSync(`${path}${suffix}`, { force: true });
    process.exit(0);
  }),
);
