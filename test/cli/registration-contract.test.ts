/**
 * The registration contract of issue 12, item 9, through the real `gatehouse` command: every client
 * metadata key the new grants and methods read is accepted under its RFC 7591 / OpenID
 * Registration name in one `client create --metadata-file` document, is given back as registered,
 * and the same client can be made with flags; each refused combination gets one line naming the
 * field and the reason. The rules themselves are tested where they live (client-registration,
 * cors, jwt-client-auth, signing-algs tests); this file pins the contract as a user meets it.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { storeLineOf } from '../helpers/cli.ts';

const BIN = fileURLToPath(new URL('../../bin/gatehouse.js', import.meta.url));
const DEVICE = 'urn:ietf:params:oauth:grant-type:device_code';

interface Result {
  code: number | null;
  stdout: string;
  stderr: string;
}

describe('client registration contract (issue 12, item 9)', () => {
  let dir: string;
  let env: Record<string, string>;
  let apiClientId: string;

  const run = (...args: string[]): Promise<Result> =>
    new Promise((resolve, reject) => {
      const child = spawn(process.execPath, [BIN, ...args], { env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      child.on('error', reject);
      child.on('close', (code) => resolve({ code, stdout, stderr: stderr.replace(storeLineOf(env), '') }));
    });
  const created = async (...args: string[]): Promise<Record<string, unknown>> => {
    const result = await run('client', 'create', ...args, '--json');
    assert.equal(result.stderr, '');
    assert.equal(result.code, 0);
    return JSON.parse(result.stdout) as Record<string, unknown>;
  };
  const document = (name: string, metadata: Record<string, unknown>): string => {
    const file = join(dir, `${name}.json`);
    writeFileSync(file, JSON.stringify(metadata));
    return file;
  };
  /** What the registration kept of the keys (client_id, secrets and times left out). */
  const kept = (client: Record<string, unknown>) => {
    const keys = ['grant_types', 'token_endpoint_auth_method', 'jwks_uri', 'jwks', 'token_endpoint_auth_signing_alg', 'id_token_signed_response_alg', 'userinfo_signed_response_alg', 'allowed_cors_origins', 'aud', 'redirect_uris'];
    return Object.fromEntries(keys.filter((key) => key in client).map((key) => [key, client[key]]));
  };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'gatehouse-registration-'));
    env = { GATEHOUSE_HOME: dir, GATEHOUSE_LOG_LEVEL: 'silent' };
    const migrated = await run('migrate');
    assert.equal(migrated.code, 0, migrated.stderr);
    apiClientId = (await created('--name', 'API', '--resource-server')).client_id as string;
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  test('one metadata document with every key of the issue is registered as written, and flags register the same client', async () => {
    const metadata = {
      redirect_uris: ['https://app.example/cb'],
      grant_types: ['authorization_code', 'refresh_token', 'client_credentials', DEVICE],
      token_endpoint_auth_method: 'private_key_jwt',
      jwks_uri: 'https://app.example/jwks.json',
      token_endpoint_auth_signing_alg: 'ES256',
      id_token_signed_response_alg: 'ES256',
      userinfo_signed_response_alg: 'PS256',
      allowed_cors_origins: ['https://app.example'],
      aud: [apiClientId],
    };
    const fromFile = await created('--metadata-file', document('everything', { client_name: 'Everything', ...metadata }));
    assert.deepEqual(kept(fromFile), metadata);
    assert.equal('client_secret' in fromFile, false, 'a private_key_jwt client holds no secret');

    const fromFlags = await created(
      '--name', 'Everything by flags',
      '--redirect-uri', 'https://app.example/cb',
      ...metadata.grant_types.flatMap((grant) => ['--grant-type', grant]),
      '--token-endpoint-auth-method', 'private_key_jwt',
      '--jwks-uri', 'https://app.example/jwks.json',
      '--token-endpoint-auth-signing-alg', 'ES256',
      '--id-token-signed-response-alg', 'ES256',
      '--userinfo-signed-response-alg', 'PS256',
      '--allowed-cors-origin', 'https://app.example',
      '--aud', apiClientId,
    ); // prettier-ignore
    assert.deepEqual(kept(fromFlags), metadata);

    // An inline key set, and the password grant, by document.
    const jwks = { keys: [{ kty: 'EC', crv: 'P-256', x: 'f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU', y: 'x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0', kid: 'k1' }] };
    const inline = await created('--metadata-file', document('inline', { client_name: 'Script', grant_types: ['password'], token_endpoint_auth_method: 'private_key_jwt', jwks }));
    assert.deepEqual(kept(inline), { grant_types: ['password'], token_endpoint_auth_method: 'private_key_jwt', jwks, id_token_signed_response_alg: 'RS256', redirect_uris: [] }, 'RS256 when none is named (OIDC Registration §2)');
  });

  const REFUSED: [string, Record<string, unknown>, string][] = [
    ['a public client with client_credentials', { grant_types: ['client_credentials'], token_endpoint_auth_method: 'none' }, 'grant_types: "client_credentials" is for confidential clients only; a public client (token_endpoint_auth_method "none") cannot register it'],
    ['a public client with the password grant', { grant_types: ['password'], token_endpoint_auth_method: 'none' }, 'grant_types: "password" is for confidential clients only; a public client (token_endpoint_auth_method "none") cannot register it'],
    ['both jwks and jwks_uri', { redirect_uris: ['https://a.example/cb'], token_endpoint_auth_method: 'private_key_jwt', jwks_uri: 'https://a.example/j', jwks: { keys: [] } }, 'jwks: jwks and jwks_uri cannot both be registered (RFC 7591 §2): give one'],
    ['private_key_jwt without keys', { redirect_uris: ['https://a.example/cb'], token_endpoint_auth_method: 'private_key_jwt' }, "token_endpoint_auth_method: private_key_jwt needs the client's public keys: register jwks or jwks_uri"],
    ['a jwks_uri over plain http', { redirect_uris: ['https://a.example/cb'], token_endpoint_auth_method: 'private_key_jwt', jwks_uri: 'http://a.example/j' }, 'jwks_uri: must be an https URL (http only on a loopback host)'],
    ['jwks_uri with a secret method', { redirect_uris: ['https://a.example/cb'], token_endpoint_auth_method: 'client_secret_basic', jwks_uri: 'https://a.example/j' }, 'jwks_uri: is used only by token_endpoint_auth_method private_key_jwt'],
    ['HS256 for private_key_jwt', { redirect_uris: ['https://a.example/cb'], token_endpoint_auth_method: 'private_key_jwt', jwks_uri: 'https://a.example/j', token_endpoint_auth_signing_alg: 'HS256' }, 'token_endpoint_auth_signing_alg: must be one of RS256, PS256, ES256, EdDSA, Ed25519 for private_key_jwt'],
    ['client_secret_jwt without a key-encryption key', { redirect_uris: ['https://a.example/cb'], token_endpoint_auth_method: 'client_secret_jwt' }, 'token_endpoint_auth_method: client_secret_jwt needs GATEHOUSE_KEY_ENCRYPTION_KEY set: its secret is kept encrypted with it, since an HMAC cannot be checked against a hash of its key'],
    ['ID tokens signed with none', { redirect_uris: ['https://a.example/cb'], id_token_signed_response_alg: 'none' }, 'id_token_signed_response_alg: "none" is refused: gatehouse signs every token; use one of RS256, PS256, ES256, EdDSA'],
    ['userinfo signed with an algorithm gatehouse has no key for', { redirect_uris: ['https://a.example/cb'], userinfo_signed_response_alg: 'HS256' }, 'userinfo_signed_response_alg: "HS256" is not an algorithm gatehouse signs with; use one of RS256, PS256, ES256, EdDSA'],
    ['a CORS origin with a path', { redirect_uris: ['https://a.example/cb'], allowed_cors_origins: ['https://a.example/path'] }, 'allowed_cors_origins: "https://a.example/path" is not an origin: write it as https://a.example (scheme://host[:port], no path, no trailing slash, no default port)'],
    ['the device grant beside authorization_code without a redirect URI', { grant_types: [DEVICE, 'authorization_code'] }, 'redirect_uris: at least one redirect URI is required for the authorization_code grant'],
  ];
  for (const [what, metadata, message] of REFUSED) {
    test(`refused with one line naming the field: ${what}`, async () => {
      const result = await run('client', 'create', '--metadata-file', document('refused', { client_name: 'Refused', ...metadata }));
      assert.deepEqual([result.code, result.stdout, result.stderr], [2, '', `gatehouse: ${message}\n`]);
    });
  }
});
