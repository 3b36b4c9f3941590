/**
 * The real `gatehouse` command, run as child processes against a fresh database of every kind.
 * Independent scenarios run concurrently (the CLI shares the store with other processes, so this
 * also exercises that), keeping the suite to a few seconds.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import { sql } from 'kysely';
import { buildProgram } from '../../src/cli/program.ts';
import { DEFAULT_HOME } from '../../src/config.ts';
import { decryptPrivateKey } from '../../src/crypto/key-encryption.ts';
import { GRANT_TYPES_SUPPORTED } from '../../src/oauth/grants/registry.ts';
import { openSqlStore } from '../../src/storage/sql/store.ts';
import { VERSION } from '../../src/version.ts';
import { storeLineOf } from '../helpers/cli.ts';
import { DATABASES, type TestDatabase } from '../helpers/databases.ts';

const BIN = fileURLToPath(new URL('../../bin/gatehouse.js', import.meta.url));
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

interface Result {
  code: number | null;
  stdout: string;
  stderr: string;
  /** The line a command that opens the store writes first on stderr, for the store of `env`. */
  storeLine: string;
}

function gatehouse(args: string[], env: Record<string, string>, input?: string, cwd?: string): Promise<Result> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd,
      env: { PATH: process.env.PATH ?? '', GATEHOUSE_LOG_LEVEL: 'silent', ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
      // `serve` runs until stopped: a test that expects it to refuse to start must not hang.
      timeout: 60_000,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr, storeLine: storeLineOf(env) }));
    child.stdin.end(input ?? '');
  });
}

/** Success: exit 0, on stderr only the line naming the store, and (with --json) one JSON document on stdout. */
function json(result: Result): Record<string, unknown> & Record<string, unknown>[] {
  assert.equal(result.stderr, result.storeLine, result.stderr);
  assert.equal(result.code, 0);
  return JSON.parse(result.stdout) as Record<string, unknown> & Record<string, unknown>[];
}

/**
 * Failure: exit 2, nothing on stdout, and on stderr exactly one line "gatehouse: …" — after the
 * line naming the store when the command got as far as opening it (`store: 'named'`), alone when
 * it failed before (a usage error, an invalid setting: `store: 'none'`).
 */
function failed(result: Result, pattern: RegExp, store: 'named' | 'none' = 'named'): void {
  assert.equal(result.code, 2, result.stderr);
  assert.equal(result.stdout, '');
  const first = store === 'named' ? result.storeLine : '';
  assert.equal(result.stderr.slice(0, first.length), first, result.stderr);
  const error = result.stderr.slice(first.length);
  assert.match(error, /^gatehouse: [^\n]+\n$/);
  assert.match(error, pattern);
}

for (const kind of DATABASES) {
  describe(`gatehouse CLI on ${kind.name}`, { concurrency: true }, () => {
    let database: TestDatabase;
    let env: Record<string, string>;
    let dir: string;
    const run = (...args: string[]) => gatehouse(args, env);

    before(async () => {
      database = await kind.create();
      env = { GATEHOUSE_DATABASE_URL: database.url };
      dir = mkdtempSync(join(tmpdir(), 'gatehouse-cli-'));
      // The first command migrates the fresh database; the rest may then run side by side.
      assert.match((await run('migrate')).stdout, /^Ran \d+ migrations?: 001-initial(, \d{3}-[a-z-]+)*\.$/m);
    });
    after(async () => {
      await database.drop();
      rmSync(dir, { recursive: true, force: true });
    });

    test('client create with flags prints the client_id, a 43-character secret and the metadata', async () => {
      const out = json(await run('client', 'create', '--name', 'Web shop', '--redirect-uri', 'https://shop.example/cb', '--redirect-uri', 'http://127.0.0.1:8080/cb', '--code-challenge-method', 'S256', '--refresh-tokens', '--scope', 'openid email', '--access-token-ttl', '600', '--json'));
      assert.match(out.client_id as string, UUID);
      assert.match(out.client_secret as string, /^[A-Za-z0-9_-]{43}$/);
      assert.equal(out.client_name, 'Web shop');
      assert.deepEqual(out.redirect_uris, ['https://shop.example/cb', 'http://127.0.0.1:8080/cb']);
      assert.deepEqual(out.grant_types, ['authorization_code', 'refresh_token']);
      assert.equal(out.code_challenge_method, 'S256');
      assert.equal(out.refresh_tokens, true);
      assert.equal(out.scope, 'openid email');
      assert.equal(out.access_token_ttl, 600);
      assert.equal(out.active, true);
      const levels = json(await run('client', 'create', '--name', 'Levels', '--redirect-uri', 'https://levels.example/cb', '--default-acr-value', 'urn:mfa', '--default-acr-value', 'urn:pwd', '--default-max-age', '900', '--json'));
      assert.deepEqual([levels.default_acr_values, levels.default_max_age], [['urn:mfa', 'urn:pwd'], 900], 'issue 24: OIDC Registration §2 defaults');
      const logout = json(await run('client', 'create', '--name', 'Logout', '--redirect-uri', 'https://logout.example/cb', '--backchannel-logout-uri', 'https://logout.example/bcl', '--backchannel-logout-session-required', '--frontchannel-logout-uri', 'https://logout.example/fcl', '--json'));
      assert.deepEqual([logout.backchannel_logout_uri, logout.backchannel_logout_session_required, logout.frontchannel_logout_uri], ['https://logout.example/bcl', true, 'https://logout.example/fcl'], 'issue 26: Back-/Front-Channel Logout §2');
      const shown = json(await run('client', 'show', out.client_id as string, '--json'));
      assert.equal(shown.client_secret, undefined);
      assert.deepEqual({ ...shown }, Object.fromEntries(Object.entries(out).filter(([key]) => key !== 'client_secret')));
    });

    test('a GATEHOUSE_* variable that is no setting: one warning line on stderr with the likely setting, and the command succeeds (issue 22 item 9)', async () => {
      const result = await gatehouse(['client', 'create', '--name', 'Typo', '--redirect-uri', 'https://typo.example/cb', '--json'], { ...env, GATEHOUSE_WORKRES: '2', GATEHOUSE_UNHEARD_OF: 'x' });
      assert.equal(result.code, 0, result.stderr);
      assert.equal(
        result.stderr,
        `gatehouse: warning: GATEHOUSE_UNHEARD_OF is not a setting of gatehouse ${VERSION} and is ignored; see docs/configuration.md\n` +
          `gatehouse: warning: GATEHOUSE_WORKRES is not a setting of gatehouse ${VERSION} and is ignored; did you mean GATEHOUSE_WORKERS?\n` +
          result.storeLine,
      );
      assert.equal((JSON.parse(result.stdout) as Record<string, unknown>).client_name, 'Typo');
    });

    test('client create --metadata-file takes a metadata document; flags override it', async () => {
      const api = json(await run('client', 'create', '--name', 'Orders API', '--resource-server', '--json'));
      const file = join(dir, 'native-app.json');
      writeFileSync(file, JSON.stringify({ client_name: 'from file', redirect_uris: ['com.example.app:/oauth2redirect'], token_endpoint_auth_method: 'none', aud: [api.client_id] }));
      const out = json(await run('client', 'create', '--metadata-file', file, '--name', 'Native app', '--inactive', '--json'));
      assert.match(out.client_id as string, UUID);
      assert.equal('client_secret' in out, false, 'a public client has no secret');
      assert.equal(out.client_name, 'Native app');
      assert.deepEqual(out.aud, [api.client_id]);
      assert.equal(out.token_endpoint_auth_method, 'none');
      assert.deepEqual(out.grant_types, ['authorization_code']);
      assert.equal(out.active, false);
    });

    test('client create registers a client_credentials client without a redirect URI, by flag or metadata file; a public one is refused (CC-14)', async () => {
      const api = json(await run('client', 'create', '--name', 'Reports API', '--resource-server', '--json'));
      const byFlags = json(await run('client', 'create', '--name', 'Nightly sync', '--grant-type', 'client_credentials', '--aud', api.client_id as string, '--json'));
      assert.match(byFlags.client_secret as string, /^[A-Za-z0-9_-]{43}$/);
      assert.deepEqual([byFlags.grant_types, byFlags.redirect_uris, byFlags.aud], [['client_credentials'], [], [api.client_id]]);
      const file = join(dir, 'machine.json');
      writeFileSync(file, JSON.stringify({ client_name: 'Billing job', grant_types: ['client_credentials'], token_endpoint_auth_method: 'client_secret_post', aud: [api.client_id] }));
      const byFile = json(await run('client', 'create', '--metadata-file', file, '--json'));
      assert.deepEqual([byFile.grant_types, byFile.token_endpoint_auth_method, byFile.redirect_uris], [['client_credentials'], 'client_secret_post', []]);
      failed(
        await run('client', 'create', '--name', 'Public machine', '--grant-type', 'client_credentials', '--token-endpoint-auth-method', 'none'),
        /^gatehouse: grant_types: "client_credentials" is for confidential clients only; a public client \(token_endpoint_auth_method "none"\) cannot register it\n$/,
      );
      assert.match((await run('client', 'create', '--help')).stdout, /--grant-type <grant> +a grant the client may use \(repeatable\): authorization_code, refresh_token, client_credentials, password, urn:ietf:params:oauth:grant-type:device_code;/);
    });

    test('the password grant: --grant-type password and grant_types in --metadata-file register it for a confidential client; a public one is refused (PW-REG)', async () => {
      const api = json(await run('client', 'create', '--name', 'CustomerID API', '--resource-server', '--json'));
      const script = json(await run('client', 'create', '--name', 'Migration script', '--grant-type', 'password', '--grant-type', 'refresh_token', '--aud', api.client_id as string, '--json'));
      assert.deepEqual(script.grant_types, ['password', 'refresh_token']);
      assert.equal(typeof script.client_secret, 'string');
      assert.deepEqual(script.aud, [api.client_id]);
      const file = join(dir, 'password-client.json');
      writeFileSync(file, JSON.stringify({ client_name: 'from file', grant_types: ['password'], token_endpoint_auth_method: 'client_secret_basic' }));
      const fromFile = json(await run('client', 'create', '--metadata-file', file, '--json'));
      assert.deepEqual(fromFile.grant_types, ['password']);
      assert.equal(fromFile.refresh_tokens, false);
      const refusal = /^gatehouse: grant_types: "password" is for confidential clients only; a public client \(token_endpoint_auth_method "none"\) cannot register it\n$/;
      failed(await run('client', 'create', '--metadata-file', file, '--token-endpoint-auth-method', 'none'), refusal);
      failed(await run('client', 'create', '--name', 'SPA', '--redirect-uri', 'https://spa.example/cb', '--token-endpoint-auth-method', 'none', '--grant-type', 'authorization_code', '--grant-type', 'password'), refusal);
      const help = await run('client', 'create', '--help');
      // The list is the grant registry's, whatever it holds.
      assert.ok(help.stdout.replace(/\s+/g, ' ').includes(`--grant-type <grant> a grant the client may use (repeatable): ${GRANT_TYPES_SUPPORTED.join(', ')}; client_credentials needs no redirect URI and a confidential client; password only for a confidential client migrating from Ubisecure`), help.stdout);
      assert.ok(GRANT_TYPES_SUPPORTED.includes('password'));
    });

    test('JWT client authentication: --jwks-file, --jwks-uri, --token-endpoint-auth-signing-alg and the metadata document; refused combinations (JW-10, JW-11)', async () => {
      const jwks = { keys: [{ kty: 'EC', crv: 'P-256', x: 'f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU', y: 'x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0', kid: 'k1' }] };
      const jwksFile = join(dir, 'client-keys.json');
      writeFileSync(jwksFile, JSON.stringify(jwks));
      const inline = json(await run('client', 'create', '--name', 'Keyed', '--redirect-uri', 'https://k.example/cb', '--token-endpoint-auth-method', 'private_key_jwt', '--jwks-file', jwksFile, '--token-endpoint-auth-signing-alg', 'ES256', '--json'));
      assert.equal('client_secret' in inline, false, 'a private_key_jwt client holds no secret');
      assert.deepEqual(inline.jwks, jwks);
      assert.equal(inline.token_endpoint_auth_signing_alg, 'ES256');
      const remote = json(await run('client', 'create', '--name', 'Keyed remotely', '--redirect-uri', 'https://k.example/cb', '--token-endpoint-auth-method', 'private_key_jwt', '--jwks-uri', 'https://k.example/jwks.json', '--json'));
      assert.equal(remote.jwks_uri, 'https://k.example/jwks.json');
      const document = join(dir, 'keyed-client.json');
      writeFileSync(document, JSON.stringify({ client_name: 'From file', redirect_uris: ['https://k.example/cb'], token_endpoint_auth_method: 'private_key_jwt', jwks, token_endpoint_auth_signing_alg: 'ES256' }));
      assert.deepEqual(json(await run('client', 'create', '--metadata-file', document, '--json')).jwks, jwks);
      failed(await run('client', 'create', '--name', 'x', '--redirect-uri', 'https://k.example/cb', '--token-endpoint-auth-method', 'private_key_jwt'), /^gatehouse: token_endpoint_auth_method: private_key_jwt needs the client's public keys: register jwks or jwks_uri\n$/);
      failed(await run('client', 'create', '--name', 'x', '--redirect-uri', 'https://k.example/cb', '--token-endpoint-auth-method', 'private_key_jwt', '--jwks-file', jwksFile, '--jwks-uri', 'https://k.example/jwks'), /^gatehouse: jwks: jwks and jwks_uri cannot both be registered/);
      failed(await run('client', 'create', '--name', 'x', '--redirect-uri', 'https://k.example/cb', '--token-endpoint-auth-method', 'private_key_jwt', '--jwks-uri', 'http://k.example/jwks'), /^gatehouse: jwks_uri: must be an https URL/);
      // HS256 is a choice only with the key-encryption key (client_secret_jwt's algorithm); registration refuses it for private_key_jwt.
      const kek = { ...env, GATEHOUSE_KEY_ENCRYPTION_KEY: 'a key-encryption key of forty characters.' };
      failed(await gatehouse(['client', 'create', '--name', 'x', '--redirect-uri', 'https://k.example/cb', '--token-endpoint-auth-method', 'private_key_jwt', '--jwks-file', jwksFile, '--token-endpoint-auth-signing-alg', 'HS256'], kek), /^gatehouse: token_endpoint_auth_signing_alg: must be one of RS256, PS256, ES256, EdDSA, Ed25519 for private_key_jwt/);
      writeFileSync(jwksFile, JSON.stringify({ keys: [{ ...jwks.keys[0], d: 'jpsQnnGQmL-YBIffH1136cspYG6-0iY7X1fCE9-E9LI' }] }));
      failed(await run('client', 'create', '--name', 'x', '--redirect-uri', 'https://k.example/cb', '--token-endpoint-auth-method', 'private_key_jwt', '--jwks-file', jwksFile), /^gatehouse: jwks: holds private or symmetric key material/);
      // client_secret_jwt: only with a key-encryption key to seal the secret with. Without it the
      // flag does not offer it (as discovery does not), and a metadata document naming it is refused.
      failed(await run('client', 'create', '--name', 'x', '--redirect-uri', 'https://k.example/cb', '--token-endpoint-auth-method', 'client_secret_jwt'), /^gatehouse: option '--token-endpoint-auth-method <method>' argument 'client_secret_jwt' is invalid\. Allowed choices are client_secret_basic, client_secret_post, private_key_jwt, none\.\n$/, 'none');
      const hmacDocument = join(dir, 'hmac-client.json');
      writeFileSync(hmacDocument, JSON.stringify({ client_name: 'x', redirect_uris: ['https://k.example/cb'], token_endpoint_auth_method: 'client_secret_jwt' }));
      failed(await run('client', 'create', '--metadata-file', hmacDocument), /^gatehouse: token_endpoint_auth_method: client_secret_jwt needs GATEHOUSE_KEY_ENCRYPTION_KEY set/);
      const sealed = json(await gatehouse(['client', 'create', '--name', 'HMAC', '--redirect-uri', 'https://k.example/cb', '--token-endpoint-auth-method', 'client_secret_jwt', '--json'], kek));
      assert.match(sealed.client_secret as string, /^[A-Za-z0-9_-]{43}$/);
      assert.equal(sealed.token_endpoint_auth_method, 'client_secret_jwt');
    });

    test('a device-flow client (RFC 8628): the device_code grant from --grant-type or --metadata-file, no redirect URI needed', async () => {
      const flags = json(await run('client', 'create', '--name', 'TV', '--token-endpoint-auth-method', 'none', '--grant-type', 'urn:ietf:params:oauth:grant-type:device_code', '--json'));
      assert.deepEqual(flags.grant_types, ['urn:ietf:params:oauth:grant-type:device_code']);
      assert.deepEqual(flags.redirect_uris, []);
      const file = join(dir, 'cli-tool.json');
      writeFileSync(file, JSON.stringify({ client_name: 'CLI tool', grant_types: ['urn:ietf:params:oauth:grant-type:device_code', 'refresh_token'] }));
      const fromFile = json(await run('client', 'create', '--metadata-file', file, '--json'));
      assert.deepEqual(fromFile.grant_types, ['urn:ietf:params:oauth:grant-type:device_code', 'refresh_token']);
      assert.match(fromFile.client_secret as string, /^[A-Za-z0-9_-]{43}$/);
      failed(await run('client', 'create', '--name', 'x', '--grant-type', 'urn:ietf:params:oauth:grant-type:device-code'), /^gatehouse: grant_types: /);
    });

    test('a private-use redirect scheme without a dot is registered with a warning on stderr (RFC 8252 §7.1: SHOULD); --json stays one document', async () => {
      const created = await run('client', 'create', '--name', 'Native', '--redirect-uri', 'myapp://cb', '--token-endpoint-auth-method', 'none', '--json');
      assert.equal(created.code, 0, created.stderr);
      assert.equal(
        created.stderr,
        created.storeLine +
          'gatehouse: warning: redirect_uris: "myapp://cb" uses the private-use scheme "myapp:" without a dot; RFC 8252 §7.1 says it SHOULD be a reverse domain name you control, such as com.example.app:, so that no other app can claim it\n',
      );
      const client = JSON.parse(created.stdout) as Record<string, unknown>;
      assert.deepEqual(client.redirect_uris, ['myapp://cb']);
      const updated = await run('client', 'update', client.client_id as string, '--redirect-uri', 'com.example.app:/cb', '--json');
      assert.equal(updated.stderr, updated.storeLine, 'a reverse-domain scheme draws no warning');
    });

    test('metadata gatehouse does not enforce is refused, naming the key; aud must name other registered clients (--aud, client update)', async () => {
      const file = join(dir, 'with-unknown-keys.json');
      writeFileSync(file, JSON.stringify({ client_name: 'x', redirect_uris: ['https://x.example/cb'], 'tos_uri#fi': 'https://x.example/ehdot' }));
      failed(await run('client', 'create', '--metadata-file', file), /^gatehouse: tos_uri#fi: is not supported: of the language-tagged metadata/);
      // Shown on the login page, so accepted (and echoed).
      writeFileSync(file, JSON.stringify({ client_name: 'x', redirect_uris: ['https://x.example/cb'], 'client_name#fi': 'Sovellus', logo_uri: 'https://x.example/logo.png' }));
      const shown = json(await run('client', 'create', '--metadata-file', file, '--json'));
      assert.equal(shown['client_name#fi'], 'Sovellus');
      assert.equal(shown.logo_uri, 'https://x.example/logo.png');
      writeFileSync(file, JSON.stringify({ client_name: 'x', redirect_uris: ['https://x.example/cb'], software_id: 'abc' }));
      failed(await run('client', 'create', '--metadata-file', file), /^gatehouse: software_id: is not a client metadata key gatehouse implements/);
      failed(await run('client', 'create', '--name', 'x', '--redirect-uri', 'https://x.example/cb', '--aud', 'no-such-client'), /^gatehouse: aud: "no-such-client" is not the client_id of a registered client/);
      const api = json(await run('client', 'create', '--name', 'API', '--resource-server', '--json'));
      const app = json(await run('client', 'create', '--name', 'App', '--redirect-uri', 'https://x.example/cb', '--json'));
      failed(await run('client', 'update', app.client_id as string, '--aud', app.client_id as string), /^gatehouse: aud: ".*" is this client's own client_id/);
      const updated = json(await run('client', 'update', app.client_id as string, '--aud', api.client_id as string, '--json'));
      assert.deepEqual(updated.aud, [api.client_id]);
    });

    test('client create/update --resource-server and --resource-uri (RI-14): a confidential client without grants; URIs unique across clients; aud may name only a resource server', async () => {
      const uri = `https://orders-${Date.now()}.example/api`;
      const api = json(await run('client', 'create', '--name', 'Orders API', '--resource-server', '--resource-uri', uri, '--resource-uri', `${uri}/v2`, '--json'));
      assert.equal(api.resource_server, true);
      assert.deepEqual(api.resource_uris, [uri, `${uri}/v2`]);
      assert.deepEqual(api.grant_types, []);
      assert.equal(typeof api.client_secret, 'string');
      const exactly = (text: string) => new RegExp(`^${text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}\n$`);
      failed(await run('client', 'create', '--name', 'Thief', '--resource-server', '--resource-uri', uri), exactly(`gatehouse: resource_uris: "${uri}" is already a resource URI of the client ${api.client_id as string}`));
      failed(await run('client', 'create', '--name', 'Not one', '--grant-type', 'client_credentials', '--resource-uri', 'https://x.example/'), exactly('gatehouse: resource_uris: only a resource server (resource_server: true) may register resource URIs'));
      failed(await run('client', 'create', '--name', 'Frag', '--resource-server', '--resource-uri', 'https://x.example/#f'), exactly('gatehouse: resource_uris: "https://x.example/#f" must not contain a fragment (RFC 8707 §2)'));
      const plain = json(await run('client', 'create', '--name', 'Plain', '--grant-type', 'client_credentials', '--json'));
      failed(await run('client', 'create', '--name', 'Caller', '--grant-type', 'client_credentials', '--aud', plain.client_id as string), exactly(`gatehouse: aud: "${plain.client_id as string}" is not a resource server; register it with resource_server: true (gatehouse client update ${plain.client_id as string} --resource-server)`));
      const promoted = json(await run('client', 'update', plain.client_id as string, '--resource-server', '--json'));
      assert.equal(promoted.resource_server, true);
      assert.deepEqual(promoted.grant_types, ['client_credentials'], 'an update keeps the grants registered');
      const caller = json(await run('client', 'create', '--name', 'Caller', '--grant-type', 'client_credentials', '--aud', plain.client_id as string, '--aud', api.client_id as string, '--json'));
      assert.deepEqual(caller.aud, [plain.client_id, api.client_id]);
      const noUris = join(dir, 'no-resource-uris.json');
      writeFileSync(noUris, JSON.stringify({ resource_uris: null }));
      const demoted = json(await run('client', 'update', api.client_id as string, '--no-resource-server', '--metadata-file', noUris, '--json'));
      assert.equal(demoted.resource_server, false);
      assert.equal(demoted.resource_uris, undefined);
    });

    test('client create --resource-scope (RS-05): a resource server declares scope values; a client\'s --scope is refused unless a grant honours it', async () => {
      const suffix = Date.now().toString(36);
      const exactly = (text: string) => new RegExp(`^${text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}\n$`);
      const api = json(await run('client', 'create', '--name', 'Stock API', '--resource-server', '--resource-scope', `stock.read.${suffix}`, '--resource-scope', `stock.write.${suffix}`, '--json'));
      assert.deepEqual(api.resource_scopes, [`stock.read.${suffix}`, `stock.write.${suffix}`]);
      failed(await run('client', 'create', '--name', 'Clash', '--resource-server', '--resource-scope', `stock.read.${suffix}`), exactly(`gatehouse: resource_scopes: "stock.read.${suffix}" is already a scope value of the resource server ${api.client_id as string}; a scope value names one resource server`));
      failed(await run('client', 'create', '--name', 'Not one', '--grant-type', 'client_credentials', '--resource-scope', 'x.read'), exactly('gatehouse: resource_scopes: only a resource server (resource_server: true) may declare scope values'));
      failed(await run('client', 'create', '--name', 'Sync', '--grant-type', 'client_credentials', '--scope', 'api.read api.write'), exactly('gatehouse: scope: "api.read" is not a scope value gatehouse grants: use openid, profile, email, the client_id of a resource server in aud, or a scope value one declared (resource_scopes)'));
      const machine = json(await run('client', 'create', '--name', 'Sync', '--grant-type', 'client_credentials', '--aud', api.client_id as string, '--scope', `stock.read.${suffix}`, '--json'));
      assert.equal(machine.scope, `stock.read.${suffix}`);
    });

    test('allowed_cors_origins from --metadata-file or --allowed-cors-origin (repeatable, overrides the file); a malformed origin is one line, exit 2 (SP-11)', async () => {
      const file = join(dir, 'spa.json');
      writeFileSync(file, JSON.stringify({ client_name: 'SPA', redirect_uris: ['https://spa.example/cb'], token_endpoint_auth_method: 'none', allowed_cors_origins: ['https://spa.example'] }));
      const fromFile = json(await run('client', 'create', '--metadata-file', file, '--json'));
      assert.deepEqual(fromFile.allowed_cors_origins, ['https://spa.example']);
      const fromFlags = json(await run('client', 'create', '--metadata-file', file, '--allowed-cors-origin', 'https://a.example', '--allowed-cors-origin', 'http://127.0.0.1:5173', '--json'));
      assert.deepEqual(fromFlags.allowed_cors_origins, ['https://a.example', 'http://127.0.0.1:5173']);
      failed(await run('client', 'create', '--metadata-file', file, '--allowed-cors-origin', 'https://a.example/app'), /^gatehouse: allowed_cors_origins: "https:\/\/a.example\/app" is not an origin: write it as https:\/\/a.example \(scheme:\/\/host\[:port\], no path, no trailing slash, no default port\)\n/);
      writeFileSync(file, JSON.stringify({ client_name: 'SPA', redirect_uris: ['https://spa.example/cb'], allowed_cors_origins: ['http://spa.example'] }));
      failed(await run('client', 'create', '--metadata-file', file), /^gatehouse: allowed_cors_origins: "http:\/\/spa.example" must be an https origin \(http only on a loopback host\)\n/);
    });

    test('an invalid redirect URI is one line on stderr and exit 2', async () => {
      failed(await run('client', 'create', '--name', 'x', '--redirect-uri', 'javascript:alert(1)', '--json'), /redirect_uris: .*javascript: scheme/);
    });

    test('users, groups and duplicate usernames', async () => {
      const alice = json(await gatehouse(['user', 'create', '--username', 'Alice', '--password-stdin', '--email', 'alice@example.com', '--json'], env, 'correct horse battery\n'));
      assert.match(alice.id as string, UUID);
      assert.equal(alice.username, 'Alice');
      assert.equal(alice.status, 'enabled');
      assert.equal('password' in alice || 'password_hash' in alice, false);
      failed(await run('user', 'create', '--username', 'alice', '--password', 'another password'), /already exists/);
      json(await run('group', 'create', 'Identity API Users', '--json'));
      const membership = json(await run('group', 'add-member', 'identity api users', 'alice', '--json'));
      assert.deepEqual(membership, { group: 'Identity API Users', user_id: alice.id, username: 'Alice', changed: true });
    });

    test('org create with a parent', async () => {
      const parent = json(await run('org', 'create', '--technical-name', 'acme', '--json'));
      const child = json(await run('org', 'create', '--technical-name', 'sales', '--friendly-name', 'Sales', '--parent', parent.id as string, '--json'));
      assert.equal(child.parent_id, parent.id);
      assert.equal(child.friendly_name, 'Sales');
      failed(await run('org', 'create', '--technical-name', 'orphan', '--parent', '00000000-0000-4000-8000-000000000000'), /parent organization .* does not exist/);
    });

    test('org create and update take --name, the management API’s word for the friendly name (issue 22 item 11)', async () => {
      const named = json(await run('org', 'create', '--technical-name', 'named-org', '--name', 'Named Org', '--json'));
      assert.equal(named.friendly_name, 'Named Org');
      assert.equal(json(await run('org', 'update', named.id as string, '--name', 'Renamed Org', '--json')).friendly_name, 'Renamed Org');
    });

    test('user update: username, email, names, organization and attributes change, the rest stay; an empty value removes', async () => {
      const org = json(await run('org', 'create', '--technical-name', `users-org-${Date.now()}`, '--json'));
      const bob = json(await run('user', 'create', '--username', 'bob', '--password', 'correct horse battery', '--email', 'bob@example.com', '--given-name', 'Bob', '--json'));
      const updated = json(
        await run('user', 'update', 'bob', '--username', 'Robert', '--email', 'robert@example.com', '--family-name', 'Smith', '--organization', org.id as string, '--attribute', 'dept=sales', '--attribute', 'dept=hr', '--attribute', 'badge=7', '--json'),
      );
      const { updated_at, ...rest } = updated;
      assert.deepEqual(rest, {
        id: bob.id,
        username: 'Robert',
        status: 'enabled',
        email: 'robert@example.com',
        email_verified: false,
        given_name: 'Bob',
        family_name: 'Smith',
        organization_id: org.id,
        groups: [],
        attributes: { dept: ['sales', 'hr'], badge: ['7'] },
        created_at: bob.created_at,
      });
      assert.ok((updated_at as string) >= (bob.updated_at as string));
      assert.deepEqual(json(await run('user', 'show', bob.id as string, '--json')), updated);
      // The values given replace, '' and --remove-attribute remove, the others stay.
      const second = json(await run('user', 'update', 'robert', '--email', '', '--organization', '', '--attribute', 'dept=it', '--remove-attribute', 'badge', '--json'));
      assert.deepEqual([second.username, second.email, second.given_name, second.family_name, second.organization_id, second.attributes], ['Robert', undefined, 'Bob', 'Smith', undefined, { dept: ['it'] }]);
      failed(await run('user', 'update', 'robert'), /^gatehouse: nothing to change: give --username, --email/);
      failed(await run('user', 'update', 'robert', '--email', 'not-an-address'), /^gatehouse: email "not-an-address" is not an email address\n$/);
      failed(await run('user', 'update', 'robert', '--attribute', 'novalue'), /^gatehouse: --attribute takes NAME=VALUE, not "novalue"\n$/);
      failed(await run('user', 'update', 'nobody-such', '--email', 'x@example.com'), /^gatehouse: .*nobody-such/);
      const text = (await run('user', 'update', 'robert', '--given-name', 'Rob')).stdout.split('\n');
      assert.deepEqual(text.slice(1, 7), ['username         Robert', 'status           enabled', 'email            -', 'email_verified   no', 'given_name       Rob', 'family_name      Smith'], 'text output shows the user');
      // docs/email-verification.md: the operator's explicit word, and any other change of the address clearing it.
      const verified = async (...flags: string[]) => json(await run('user', 'update', 'robert', ...flags, '--json')).email_verified;
      assert.equal(await verified('--email', 'rob@example.com', '--email-verified'), true);
      assert.equal(await verified('--given-name', 'Robbie'), true, 'another field: kept');
      assert.equal(await verified('--email', 'robbie@example.com'), false, 'a changed address');
      assert.equal(await verified('--email-verified'), true);
      assert.equal(await verified('--no-email-verified'), false);
    });

    test('policy create, list, show, update and delete; a client refers to a policy by --authorization-policy; a policy in use is not deleted (PO-01, PO-02)', async () => {
      const name = `staff-${Date.now()}`;
      const file = join(dir, `${name}.json`);
      const document = { name, access: { groups: ['Staff'] }, claims: [{ claim: 'department', from: 'attribute:department', in: ['id_token', 'userinfo'], scope: 'profile' }, { claim: 'tenant', value: 'acme' }] };
      writeFileSync(file, JSON.stringify(document));
      const created = json(await run('policy', 'create', '--file', file, '--json'));
      assert.deepEqual({ ...created, created_at: undefined, updated_at: undefined }, { ...document, version: 1, created_at: undefined, updated_at: undefined });
      failed(await run('policy', 'create', '--file', file), /^gatehouse: policy already exists\n$/);
      const bad = join(dir, `${name}-bad.json`);
      writeFileSync(bad, JSON.stringify({ name: `${name}-bad`, claims: [{ claim: 'a', value: 'x' }, { claim: 'sub', from: 'user.id' }] }));
      failed(await run('policy', 'create', '--file', bad), /^gatehouse: claims\[1\]\.claim: "sub" is set by the server and cannot be mapped\n$/);
      assert.ok((json(await run('policy', 'list', '--json')) as Record<string, unknown>[]).some((p) => p.name === name));

      failed(await run('client', 'create', '--name', 'Intranet', '--redirect-uri', 'https://intranet.example/cb', '--authorization-policy', `${name}-none`), /^gatehouse: authorization_policy: no policy is named ".*-none" \(gatehouse policy list\)\n$/);
      const client = json(await run('client', 'create', '--name', 'Intranet', '--redirect-uri', 'https://intranet.example/cb', '--authorization-policy', name, '--json'));
      assert.equal(client.authorization_policy, name);
      const shown = json(await run('policy', 'show', name));
      assert.deepEqual(shown.clients, [client.client_id]);

      writeFileSync(file, JSON.stringify({ claims: [{ claim: 'tenant', value: 'other' }] }));
      const updated = json(await run('policy', 'update', name, '--file', file, '--json'));
      assert.deepEqual([updated.version, updated.claims, updated.access], [2, [{ claim: 'tenant', value: 'other' }], undefined]);
      failed(await run('policy', 'delete', name), /^gatehouse: policy .* is used by a client; detach it first/);
      const detached = json(await run('client', 'update', client.client_id as string, '--authorization-policy', '', '--json'));
      assert.equal(detached.authorization_policy, undefined);
      assert.deepEqual(json(await run('policy', 'delete', name, '--json')), { name, deleted: true });
      failed(await run('policy', 'show', name), /^gatehouse: no policy is named ".*"\n$/);
    });

    test('group members lists the members by username; group delete removes the group and its memberships, not the users', async () => {
      const group = `Editors-${Date.now()}`;
      json(await run('group', 'create', group, '--json'));
      const carol = json(await run('user', 'create', '--username', 'carol', '--password', 'correct horse battery', '--email', 'carol@example.com', '--group', group, '--json'));
      const dave = json(await run('user', 'create', '--username', 'dave', '--password', 'correct horse battery', '--group', group, '--json'));
      assert.deepEqual(json(await run('group', 'members', group.toUpperCase(), '--json')), [
        { id: carol.id, username: 'carol', status: 'enabled', email: 'carol@example.com' },
        { id: dave.id, username: 'dave', status: 'enabled' },
      ]);
      const listing = await run('group', 'members', group);
      assert.equal(listing.stdout.split('\n')[0]!.replace(/\s+/g, ' '), 'USERNAME ID STATUS EMAIL');
      const deleted = json(await run('group', 'delete', group, '--json'));
      assert.deepEqual({ ...deleted, id: undefined }, { id: undefined, name: group, deleted: true, members_removed: 2 });
      failed(await run('group', 'members', group), new RegExp(`^gatehouse: no group is named "${group}"\n$`));
      failed(await run('group', 'delete', group), new RegExp(`^gatehouse: no group is named "${group}"\n$`));
      assert.deepEqual(json(await run('user', 'show', 'carol', '--json')).groups, [], 'the user stays, without the group');
      const empty = `Empty-${Date.now()}`;
      json(await run('group', 'create', empty, '--json'));
      assert.equal((await run('group', 'members', empty)).stdout, 'No members.\n');
      assert.equal((await run('group', 'delete', empty)).stdout, `Deleted group ${empty} (0 members removed from it).\n`);
    });

    test('org update changes names, type, place and attributes; org delete refuses an organization in use', async () => {
      const parent = json(await run('org', 'create', '--technical-name', `parent-${Date.now()}`, '--json'));
      const org = json(await run('org', 'create', '--technical-name', 'branch', '--type', 'shop', '--json'));
      const moved = json(await run('org', 'update', org.id as string, '--friendly-name', 'Branch office', '--parent', parent.id as string, '--attribute', 'vat=FI123', '--json'));
      const { updated_at, ...rest } = moved;
      const { updated_at: _created, ...before } = org;
      assert.deepEqual(rest, { ...before, friendly_name: 'Branch office', parent_id: parent.id, attributes: { vat: ['FI123'] } });
      assert.equal(typeof updated_at, 'string');
      const reset = json(await run('org', 'update', org.id as string, '--root', '--friendly-name', '', '--type', '', '--remove-attribute', 'vat', '--virtual', '--json'));
      assert.deepEqual([reset.parent_id, reset.friendly_name, reset.type, reset.attributes, reset.virtual], [undefined, 'branch', undefined, {}, true]);
      failed(await run('org', 'update', org.id as string, '--parent', org.id as string), /^gatehouse: .*(itself|cycle|below)/);
      failed(await run('org', 'update', org.id as string), /^gatehouse: nothing to change/);
      failed(await run('org', 'update', org.id as string, '--root', '--parent', parent.id as string), /^gatehouse: option '--parent <id>' cannot be used with option '--root'\n$/, 'none');
      json(await run('org', 'update', org.id as string, '--parent', parent.id as string, '--json'));
      failed(await run('org', 'delete', parent.id as string), /^gatehouse: organization ".*" has sub-organizations; delete or move them first\n$/);
      assert.deepEqual(json(await run('org', 'delete', org.id as string, '--json')), { id: org.id, technical_name: 'branch', deleted: true });
      assert.equal((await run('org', 'delete', parent.id as string)).stdout, `Deleted organization ${parent.technical_name as string} (${parent.id as string}).\n`);
      failed(await run('org', 'show', parent.id as string), /^gatehouse: no organization has the id/);
    });

    test('keys rotate: the new key is active, the old one still listed', async () => {
      const first = json(await run('keys', 'rotate', '--json'));
      const second = json(await run('keys', 'rotate', '--json'));
      const keys = json(await run('keys', 'list', '--json'));
      assert.equal(keys.length, 2);
      assert.deepEqual(
        keys.map((k) => [k.kid, k.active]),
        [
          [second.kid, true],
          [first.kid, false],
        ],
      );
      assert.ok(keys[1]!.published_until, 'a retired key stays published for a while');
      assert.equal(JSON.stringify(keys).includes('"d"'), false, 'no private key material');

      // Per algorithm (AL-03): an EdDSA rotation leaves the RS256 key active.
      const eddsa = json(await run('keys', 'rotate', '--alg', 'EdDSA', '--json'));
      assert.equal(eddsa.alg, 'EdDSA');
      const after = json(await run('keys', 'list', '--json'));
      assert.deepEqual(
        after.filter((k) => k.active).map((k) => [k.kid, k.alg]).sort(),
        [
          [second.kid, 'RS256'],
          [eddsa.kid, 'EdDSA'],
        ].sort(),
      );
      failed(await run('keys', 'rotate', '--alg', 'none'), /^gatehouse: .*none.* Allowed choices are RS256, PS256, ES256, EdDSA/, 'none');
    });

    test('client create --id-token-signed-response-alg / --userinfo-signed-response-alg, and in the metadata file; none and unknown algorithms refused (AL-05)', async () => {
      const out = json(await run('client', 'create', '--name', 'EC app', '--redirect-uri', 'https://ec.example/cb', '--id-token-signed-response-alg', 'ES256', '--userinfo-signed-response-alg', 'EdDSA', '--json'));
      assert.equal(out.id_token_signed_response_alg, 'ES256');
      assert.equal(out.userinfo_signed_response_alg, 'EdDSA');
      const file = join(dir, 'ps256.json');
      writeFileSync(file, JSON.stringify({ client_name: 'PS app', redirect_uris: ['https://ps.example/cb'], id_token_signed_response_alg: 'PS256' }));
      const fromFile = json(await run('client', 'create', '--metadata-file', file, '--json'));
      assert.equal(fromFile.id_token_signed_response_alg, 'PS256');
      assert.equal(fromFile.userinfo_signed_response_alg, undefined);
      failed(await run('client', 'create', '--metadata-file', file, '--id-token-signed-response-alg', 'none'), /^gatehouse: id_token_signed_response_alg: "none" is refused: gatehouse signs every token; use one of RS256, PS256, ES256, EdDSA\n$/);
      failed(await run('client', 'create', '--metadata-file', file, '--userinfo-signed-response-alg', 'HS256'), /^gatehouse: userinfo_signed_response_alg: "HS256" is not an algorithm gatehouse signs with; use one of RS256, PS256, ES256, EdDSA\n$/);
      const updated = json(await run('client', 'update', out.client_id as string, '--id-token-signed-response-alg', 'RS256', '--json'));
      assert.equal(updated.id_token_signed_response_alg, 'RS256');
      assert.equal(updated.userinfo_signed_response_alg, 'EdDSA');
    });

    test('client create --resource-server --access-token-format jwt --access-token-signed-response-alg ES256; update; a bad format or none refused (JA-01)', async () => {
      const out = json(await run('client', 'create', '--name', 'Orders API', '--resource-server', '--access-token-format', 'jwt', '--access-token-signed-response-alg', 'ES256', '--json'));
      assert.deepEqual([out.access_token_format, out.access_token_signed_response_alg], ['jwt', 'ES256']);
      const updated = json(await run('client', 'update', out.client_id as string, '--access-token-format', 'opaque', '--json'));
      assert.deepEqual([updated.access_token_format, updated.access_token_signed_response_alg], ['opaque', 'ES256']);
      failed(await run('client', 'create', '--name', 'x', '--resource-server', '--access-token-format', 'paseto'), /^gatehouse: .*paseto.* Allowed choices are opaque, jwt/, 'none');
      failed(await run('client', 'create', '--name', 'x', '--resource-server', '--access-token-signed-response-alg', 'none'), /^gatehouse: access_token_signed_response_alg: "none" is refused: gatehouse signs every token; use one of RS256, PS256, ES256, EdDSA\n$/);
    });
  });

  describe(`gatehouse keys seal on ${kind.name} (security test finding 11)`, () => {
    test('seals the clear keys once; a wrong key-encryption key, or none, is refused, and serve stops with one line', async () => {
      // A database of its own: the keys of the shared one belong to the rotation test.
      const database = await kind.create();
      try {
        const env = { GATEHOUSE_DATABASE_URL: database.url };
        const kek = { ...env, GATEHOUSE_KEY_ENCRYPTION_KEY: 'k'.repeat(40) };
        const wrong = { ...env, GATEHOUSE_KEY_ENCRYPTION_KEY: 'w'.repeat(40) };
        json(await gatehouse(['migrate', '--json'], env));
        json(await gatehouse(['keys', 'rotate', '--json'], env));
        json(await gatehouse(['keys', 'rotate', '--json'], env));
        const rows = async () => {
          const store = await openSqlStore(database.url);
          try {
            const { rows } = await sql<{ kid: string; private_jwk: string; encrypted: number }>`select kid, private_jwk, encrypted from signing_keys order by kid`.execute(store.database.db);
            return rows.map((r) => ({ ...r, encrypted: Number(r.encrypted) }));
          } finally {
            await store.close();
          }
        };
        const clear = await rows();
        assert.deepEqual(clear.map((r) => r.encrypted), [0, 0]);

        failed(await gatehouse(['keys', 'seal'], env), /^gatehouse: set GATEHOUSE_KEY_ENCRYPTION_KEY to the key-encryption key to seal the signing keys with\n$/);
        assert.deepEqual(json(await gatehouse(['keys', 'seal', '--json'], kek)), { sealed: 2 });
        const sealed = await rows();
        assert.deepEqual(sealed.map((r) => [r.kid, r.encrypted]), clear.map((r) => [r.kid, 1]));
        for (const [i, row] of sealed.entries()) assert.equal(decryptPrivateKey(row.private_jwk, 'k'.repeat(40)), clear[i]!.private_jwk);
        assert.equal((await gatehouse(['keys', 'seal'], kek)).stdout, 'Every private key was sealed already.\n');
        assert.deepEqual(json(await gatehouse(['keys', 'list', '--json'], kek)).map((k) => k.encrypted), [true, true]);

        failed(await gatehouse(['keys', 'seal'], wrong), /^gatehouse: signing key [\w-]{43} cannot be decrypted with GATEHOUSE_KEY_ENCRYPTION_KEY: it is not the key-encryption key the signing keys were sealed with\n$/);
        for (const [without, message] of [
          [wrong, /^gatehouse: signing key [\w-]{43} cannot be decrypted with GATEHOUSE_KEY_ENCRYPTION_KEY: it is not the key-encryption key the signing keys were sealed with\n$/],
          [env, /^gatehouse: the signing keys in the store are sealed \(kid [\w-]{43}\): set GATEHOUSE_KEY_ENCRYPTION_KEY to the key-encryption key they were sealed with\n$/],
        ] as const) {
          // The server names its store in its log (stdout), not on stderr.
          failed(await gatehouse(['serve'], { ...without, GATEHOUSE_PORT: '0', GATEHOUSE_CLEANUP_INTERVAL: '0' }), message, 'none');
        }
        assert.deepEqual(await rows(), sealed, 'nothing changed');
      } finally {
        await database.drop();
      }
    });
  });

  describe(`gatehouse CLI on a ${kind.name} store that does not exist yet`, () => {
    test('every command but migrate refuses it, naming it and how to create it, and creates nothing; migrate creates it', async () => {
      const database = await kind.create();
      try {
        const env = { GATEHOUSE_DATABASE_URL: database.url };
        const storeLine = storeLineOf(env).slice('store: '.length, -1);
        const missing =
          kind.name === 'sqlite'
            ? `gatehouse: no store at ${database.url.slice('sqlite:'.length)}: create it with \`gatehouse migrate\` (or by starting the server), or set GATEHOUSE_HOME or GATEHOUSE_DATABASE_URL to the store you meant\n`
            : `gatehouse: ${storeLine} holds no gatehouse store: create it with \`gatehouse migrate\` (or by starting the server), or set GATEHOUSE_DATABASE_URL to the store you meant\n`;
        for (const args of [['user', 'list'], ['client', 'create', '--name', 'x', '--redirect-uri', 'https://x.example/cb'], ['keys', 'rotate'], ['cleanup']]) {
          const result = await gatehouse(args, env);
          assert.deepEqual([result.code, result.stdout, result.stderr], [2, '', `${result.storeLine}${missing}`], args.join(' '));
        }
        if (kind.name === 'sqlite') assert.equal(existsSync(database.url.slice('sqlite:'.length)), false, 'no file was created');
        assert.match((await gatehouse(['migrate'], env)).stdout, /^Ran \d+ migrations: 001-initial, /);
        assert.deepEqual(json(await gatehouse(['user', 'list', '--json'], env)), []);
      } finally {
        await database.drop();
      }
    });
  });
}

describe('gatehouse CLI: version and where the store is', () => {
  test('--version prints package.json\'s version', async () => {
    const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    for (const flag of ['--version', '-V']) {
      const result = await gatehouse([flag], {});
      assert.deepEqual([result.code, result.stdout, result.stderr], [0, `${version}\n`, '']);
    }
  });

  test('the default store is $GATEHOUSE_HOME/gatehouse.db, GATEHOUSE_HOME defaulting to data/ of the installation, wherever the command runs', async () => {
    const home = mkdtempSync(join(tmpdir(), 'gatehouse-home-'));
    try {
      for (const cwd of ['/', tmpdir()]) {
        // Not GATEHOUSE_HOME: the first line names the installation's store, whether or not it exists yet.
        const installed = await gatehouse(['user', 'list', '--json'], {}, undefined, cwd);
        assert.equal(installed.stderr.split('\n')[0], `store: SQLite ${join(DEFAULT_HOME, 'gatehouse.db')}`);
        assert.equal(DEFAULT_HOME, fileURLToPath(new URL('../../data', import.meta.url)));
        json(await gatehouse(['migrate', '--json'], { GATEHOUSE_HOME: home }, undefined, cwd));
        assert.deepEqual(json(await gatehouse(['user', 'list', '--json'], { GATEHOUSE_HOME: home }, undefined, cwd)), []);
      }
      assert.equal(existsSync(join(home, 'gatehouse.db')), true);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });
});

describe('gatehouse CLI without a database', () => {
  test('an invalid environment variable is named, exit 2', async () => {
    failed(await gatehouse(['client', 'list'], { GATEHOUSE_PORT: 'abc' }), /GATEHOUSE_PORT/, 'none');
  });

  test('an unknown option is one line, exit 2', async () => {
    failed(await gatehouse(['client', 'list', '--bogus'], {}), /unknown option '--bogus'/, 'none');
  });

  test('client create and update offer the authentication methods and algorithms discovery lists: client_secret_jwt and HS256 only with GATEHOUSE_KEY_ENCRYPTION_KEY (issue 22 item 6)', async () => {
    const choices = (help: string, option: string) => new RegExp(`${option} <\\w+>[^\\n]*\\(choices: ([^)]*)\\)`).exec(help)?.[1];
    const without = await gatehouse(['client', 'update', '--help'], {});
    assert.equal(without.code, 0);
    assert.equal(choices(without.stdout, '--token-endpoint-auth-method'), '"client_secret_basic", "client_secret_post", "private_key_jwt", "none"');
    assert.equal(choices(without.stdout, '--token-endpoint-auth-signing-alg'), '"RS256", "PS256", "ES256", "EdDSA", "Ed25519"');
    const withKey = await gatehouse(['client', 'create', '--help'], { GATEHOUSE_KEY_ENCRYPTION_KEY: 'k'.repeat(40) });
    assert.equal(withKey.code, 0);
    assert.equal(choices(withKey.stdout, '--token-endpoint-auth-method'), '"client_secret_basic", "client_secret_post", "client_secret_jwt", "private_key_jwt", "none"');
    assert.equal(choices(withKey.stdout, '--token-endpoint-auth-signing-alg'), '"HS256", "RS256", "PS256", "ES256", "EdDSA", "Ed25519"');
    failed(await gatehouse(['client', 'update', 'some-client', '--token-endpoint-auth-signing-alg', 'HS256'], {}), /^gatehouse: option '--token-endpoint-auth-signing-alg <alg>' argument 'HS256' is invalid\. Allowed choices are RS256, PS256, ES256, EdDSA, Ed25519\.\n$/, 'none');
    // A configuration that cannot be read offers every method; the command names the setting at fault.
    failed(await gatehouse(['client', 'create', '--token-endpoint-auth-method', 'client_secret_jwt'], { GATEHOUSE_PORT: 'abc' }), /^gatehouse: invalid configuration: GATEHOUSE_PORT/, 'none');
  });

  test('--help works through the real binary', async () => {
    const result = await gatehouse(['client', 'create', '--help'], {});
    assert.equal(result.code, 0);
    assert.match(result.stdout, /Usage: gatehouse client create \[options\]/);
    assert.match(result.stdout, /--redirect-uri <uri>/);
  });

  test('org create: --name is known, a near miss is told the flag, and --name with --friendly-name is refused (issue 22 item 11)', async () => {
    const usage = async (...args: string[]) => {
      let err = '';
      const program = buildProgram({ writeOut: () => undefined, writeErr: (text) => (err += text) });
      await assert.rejects(program.parseAsync(args, { from: 'user' }));
      return err;
    };
    assert.equal(await usage('org', 'create', '--nam', 'x'), "gatehouse: unknown option '--nam' (Did you mean --name?)\n");
    assert.equal(await usage('org', 'create', '--name', 'x', '--friendly-name', 'y'), "gatehouse: option '--name <name>' cannot be used with option '--friendly-name <name>'\n");
  });

  test('every command and subcommand has --help', async () => {
    const paths: string[][] = [];
    const walk = (command: Command, path: string[]) => {
      paths.push(path);
      for (const sub of command.commands) walk(sub, [...path, sub.name()]);
    };
    walk(buildProgram(), []);
    assert.ok(paths.length >= 30, `only ${paths.length} commands`);
    for (const path of paths) {
      let out = '';
      const program = buildProgram({ writeOut: (text) => (out += text), writeErr: (text) => (out += text) });
      await assert.rejects(program.parseAsync([...path, '--help'], { from: 'user' }), { code: 'commander.helpDisplayed', exitCode: 0 });
      assert.match(out, new RegExp(`^Usage: gatehouse ${path.join(' ')}`.trimEnd()), path.join(' '));
    }
  });
});
