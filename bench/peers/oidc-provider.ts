/**
 * The peer of the same run: node-oidc-provider (npm `oidc-provider`, v9), the only peer that
 * runs here (Keycloak, Hydra and Zitadel need a JVM download or a container). The benchmark
 * starts this script exactly as it starts gatehouse: its own process, pinned to the server's core,
 * one process (no cluster). Configured as close to gatehouse's behaviour as its options allow:
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
 * - access tokens live 3600 s, device codes 600 s; no request logging (gatehouse logs at `info`).
 *
 * Its configuration comes from the environment: PORT, and BENCH_PEER_FIXTURE, a JSON
 * `PeerFixtureConfig` made by the benchmark (secrets and the S8 client's public key). It prints
 * nothing; the benchmark waits for its discovery document, and SIGTERM ends it.
 */
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import { exportJWK, generateKeyPair, type JWK } from 'jose';
import Provider from 'oidc-provider';
import { MapAdapter } from './map-adapter.ts';

/** What the benchmark tells the peer (bench/lib/peer.ts makes it). */
export interface PeerFixtureConfig {
  ccBasic: { clientId: string; secret: string };
  ccJwt: { clientId: string; jwk: JWK };
  device: { clientId: string };
  rs: { clientId: string; secret: string };
}

const port = Number(process.env.PORT);
const fixture = JSON.parse(process.env.BENCH_PEER_FIXTURE ?? 'null') as PeerFixtureConfig | null;
if (!port || !fixture) throw new Error('PORT and BENCH_PEER_FIXTURE are required');

const issuer = `http://127.0.0.1:${port}`;
// Its own signing key (ID tokens are not issued in these scenarios, but the provider needs one).
const { privateKey } = await generateKeyPair('RS256', { extractable: true });
const signingKey = { ...(await exportJWK(privateKey)), kid: 'peer-rs256', alg: 'RS256', use: 'sig' };

const noRedirects = { redirect_uris: [], response_types: [] };
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
  ],
  jwks: { keys: [signingKey] },
  cookies: { keys: [randomBytes(32).toString('base64url')] },
  features: {
    clientCredentials: { enabled: true },
    deviceFlow: { enabled: true },
    introspection: { enabled: true },
    devInteractions: { enabled: false },
  },
  ttl: { AccessToken: 3600, ClientCredentials: 3600, DeviceCode: 600 },
});

// A 500 is counted as unexpected by the benchmark; its cause goes to stderr, which the benchmark keeps.
provider.on('server_error', (_ctx: unknown, error: Error) => process.stderr.write(`peer server_error: ${error.stack ?? String(error)}\n`));

const server = createServer(provider.callback());
server.listen(port, '127.0.0.1');
process.on('SIGTERM', () => server.close(() => process.exit(0)));
