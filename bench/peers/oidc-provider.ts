/**
 * The peer of the same run: node-oidc-provider (npm `oidc-provider`, v9). The benchmark starts
 * this script exactly as it starts gatehouse: its own process, pinned to the server's core, one
 * process (no cluster). Configured as close to gatehouse's behaviour as its options allow:
 *
 * - opaque access tokens (its default format), kept in memory until they expire by our adapter
 *   (bench/peers/map-adapter.ts: nothing is written to disk, unlike gatehouse's SQLite or
 *   PostgreSQL store; the package's own in-memory adapter would drop them after 1,000 entries);
 * - client_credentials on, for a client with client_secret_basic (S7) and one with
 *   private_key_jwt and an ES256 key, the same key as gatehouse's S8 client (S8); client-assertion
 *   `jti`s are kept (its ReplayDetection model) as gatehouse keeps them;
 * - the device authorization grant on, for a public client whose pending device codes S9 polls;
 *   it never answers `slow_down` (it does not track the polling interval);
 * - introspection on, for a resource server with client_secret_basic (the peer's S1);
 * - a relying party with client_secret_basic, the authorization code and refresh token grants and
 *   RS256 ID tokens (S2–S6), and one with ES256 ID tokens (S3-ES); refresh tokens rotate on every
 *   use (S4, as gatehouse's rotating client) and are issued without `offline_access`, as
 *   gatehouse issues them to a client registered for them; PKCE is not required (gatehouse's rp
 *   sends none either);
 * - its own login interaction (oidc-provider leaves the pages to the application): a form with a
 *   username and a password, checked against an argon2id hash made at start with @node-rs/argon2 at
 *   gatehouse's parameters (src/identity/passwords.ts ARGON2_PARAMETERS), the same library and
 *   cost as gatehouse's login (S6); consent is never asked, as gatehouse asks none of its bench
 *   clients: an existing grant is loaded, or one with the requested scopes is made and saved;
 * - access tokens live 3600 s, device codes 600 s; no request logging (gatehouse logs at `info`).
 *
 * Its configuration comes from the environment: PORT, and BENCH_PEER_FIXTURE, a JSON
 * `PeerFixtureConfig` made by the benchmark (secrets, the S8 client's public key, the login). It
 * prints nothing; the benchmark waits for its discovery document, and SIGTERM ends it.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { hash, verify, type Algorithm } from '@node-rs/argon2';
import { exportJWK, generateKeyPair, type JWK } from 'jose';
import Provider, { type KoaContextWithOIDC } from 'oidc-provider';
import { ARGON2_PARAMETERS } from '../../src/identity/passwords.ts';
import { MapAdapter } from './map-adapter.ts';

/** What the benchmark tells the peer (bench/lib/peer.ts makes it). */
export interface PeerFixtureConfig {
  ccBasic: { clientId: string; secret: string };
  ccJwt: { clientId: string; jwk: JWK };
  device: { clientId: string };
  rs: { clientId: string; secret: string };
  /** S2–S6: RS256 ID tokens. */
  rp: { clientId: string; secret: string };
  /** S3-ES: ES256 ID tokens. */
  rpEs: { clientId: string; secret: string };
  redirectUri: string;
  login: { username: string; password: string };
}

const port = Number(process.env.PORT);
const fixture = JSON.parse(process.env.BENCH_PEER_FIXTURE ?? 'null') as PeerFixtureConfig | null;
if (!port || !fixture) throw new Error('PORT and BENCH_PEER_FIXTURE are required');

const issuer = `http://127.0.0.1:${port}`;
const signingKey = async (alg: 'RS256' | 'ES256') => {
  const { privateKey } = await generateKeyPair(alg, { extractable: true });
  return { ...(await exportJWK(privateKey)), kid: `peer-${alg.toLowerCase()}`, alg, use: 'sig' };
};

// `Algorithm` is an ambient const enum (as in src/identity/passwords.ts): argon2id is 2.
const ARGON2 = { algorithm: 2 as Algorithm, memoryCost: ARGON2_PARAMETERS.memoryCost, timeCost: ARGON2_PARAMETERS.timeCost, parallelism: ARGON2_PARAMETERS.parallelism };
/** The one account, as gatehouse's bench login user: NFKC as gatehouse compares passwords. */
const account = {
  id: randomBytes(16).toString('hex'),
  username: fixture.login.username,
  passwordHash: await hash(fixture.login.password.normalize('NFKC'), ARGON2),
  claims: { given_name: 'Ada', family_name: 'Lovelace', name: 'Ada Lovelace', email: `${fixture.login.username}@example.com`, email_verified: false },
};

const noRedirects = { redirect_uris: [], response_types: [] };
const relyingParty = (client: { clientId: string; secret: string }, alg: string) => ({
  client_id: client.clientId,
  client_secret: client.secret,
  grant_types: ['authorization_code', 'refresh_token'],
  response_types: ['code'],
  redirect_uris: [fixture.redirectUri],
  token_endpoint_auth_method: 'client_secret_basic',
  id_token_signed_response_alg: alg,
});

const provider = new Provider(issuer, {
  adapter: MapAdapter,
  clients: [
    {
      client_id: fixture.ccBasic.clientId,
      client_secret: fixture.ccBasic.secret,
      grant_types: ['client_credentials'],
      token_endpoint_auth_method: 'client_secret_basic',
      ...noRedirects,
    },
    {
      client_id: fixture.ccJwt.clientId,
      grant_types: ['client_credentials'],
      token_endpoint_auth_method: 'private_key_jwt',
      token_endpoint_auth_signing_alg: 'ES256',
      jwks: { keys: [fixture.ccJwt.jwk] },
      ...noRedirects,
    },
    {
      client_id: fixture.device.clientId,
      grant_types: ['urn:ietf:params:oauth:grant-type:device_code'],
      token_endpoint_auth_method: 'none',
      ...noRedirects,
    },
    {
      client_id: fixture.rs.clientId,
      client_secret: fixture.rs.secret,
      grant_types: [],
      token_endpoint_auth_method: 'client_secret_basic',
      ...noRedirects,
    },
    relyingParty(fixture.rp, 'RS256'),
    relyingParty(fixture.rpEs, 'ES256'),
  ],
  jwks: { keys: [await signingKey('RS256'), await signingKey('ES256')] },
  cookies: { keys: [randomBytes(32).toString('base64url')] },
  claims: { openid: ['sub'], profile: ['name', 'given_name', 'family_name'], email: ['email', 'email_verified'] },
  findAccount: async (_ctx: unknown, id: string) => (id === account.id ? { accountId: id, claims: async () => ({ sub: id, ...account.claims }) } : undefined),
  loadExistingGrant: async (ctx: KoaContextWithOIDC) => {
    const { oidc } = ctx;
    const grantId = oidc.result?.consent?.grantId ?? oidc.session?.grantIdFor(oidc.client!.clientId);
    const found = grantId ? await oidc.provider.Grant.find(grantId) : undefined;
    if (found || !oidc.session?.accountId) return found;
    const grant = new oidc.provider.Grant({ clientId: oidc.client!.clientId, accountId: oidc.session.accountId });
    grant.addOIDCScope('openid profile email offline_access');
    await grant.save();
    return grant;
  },
  issueRefreshToken: async (_ctx: unknown, client: { grantTypeAllowed(type: string): boolean }) => client.grantTypeAllowed('refresh_token'),
  rotateRefreshToken: () => true,
  pkce: { required: () => false },
  features: {
    clientCredentials: { enabled: true },
    deviceFlow: { enabled: true },
    introspection: { enabled: true },
    devInteractions: { enabled: false },
  },
  ttl: { AccessToken: 3600, ClientCredentials: 3600, DeviceCode: 600, AuthorizationCode: 600, IdToken: 3600, RefreshToken: 86_400, Grant: 86_400, Session: 86_400, Interaction: 3600 },
});

// A 500 is counted as unexpected by the benchmark; its cause goes to stderr, which the benchmark keeps.
provider.on('server_error', (_ctx: unknown, error: Error) => process.stderr.write(`peer server_error: ${error.stack ?? String(error)}\n`));

const LOGIN_PAGE = (uid: string, message = '') => `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Sign in</title></head><body><main><h1>Sign in</h1>${message ? `<p role="alert">${message}</p>` : ''}
<form method="post" action="/interaction/${uid}/login"><label>Username <input type="text" name="username" autocomplete="username"></label><label>Password <input type="password" name="password" autocomplete="current-password"></label><button type="submit">Sign in</button></form></main></body></html>`;

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let body = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => (body += chunk));
    request.on('end', () => resolve(body));
    request.on('error', reject);
  });
}

function page(response: ServerResponse, status: number, html: string): void {
  response.writeHead(status, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store', 'content-length': Buffer.byteLength(html) });
  response.end(html);
}

/** The login interaction: GET shows the form, POST checks the password and hands the account back. */
async function interaction(request: IncomingMessage, response: ServerResponse): Promise<void> {
  const { uid, prompt } = await provider.interactionDetails(request, response);
  if (prompt.name !== 'login') return page(response, 400, `<p>unexpected prompt ${prompt.name}</p>`);
  if (request.method === 'GET') return page(response, 200, LOGIN_PAGE(uid));
  const form = new URLSearchParams(await readBody(request));
  const password = (form.get('password') ?? '').normalize('NFKC');
  // The hash is verified whatever the username, as gatehouse verifies a dummy hash for an unknown one.
  const matches = await verify(account.passwordHash, password);
  if (!matches || form.get('username') !== account.username) return page(response, 200, LOGIN_PAGE(uid, 'Wrong username or password.'));
  await provider.interactionFinished(request, response, { login: { accountId: account.id } }, { mergeWithLastSubmission: false });
}

const callback = provider.callback();
const server = createServer((request, response) => {
  if (request.url?.startsWith('/interaction/')) {
    interaction(request, response).catch((error: unknown) => {
      process.stderr.write(`peer interaction error: ${(error as Error).stack ?? String(error)}\n`);
      if (!response.headersSent) page(response, 500, '<p>error</p>');
    });
    return;
  }
  callback(request, response);
});
server.listen(port, '127.0.0.1');
process.on('SIGTERM', () => server.close(() => process.exit(0)));
