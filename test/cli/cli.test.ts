/**
 * The real `gatehouse` command, run as child processes against a fresh database of every kind.
 * Independent scenarios run concurrently (the CLI shares the store with other processes, so this
 * also exercises that), keeping the suite to a few seconds.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import { sql } from 'kysely';
import { buildProgram } from '../../src/cli/program.ts';
import { decryptPrivateKey } from '../../src/crypto/key-encryption.ts';
import { openSqlStore } from '../../src/storage/sql/store.ts';
import { DATABASES, type TestDatabase } from '../helpers/databases.ts';

const BIN = fileURLToPath(new URL('../../bin/gatehouse.js', import.meta.url));
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

interface Result {
  code: number | null;
  stdout: string;
  stderr: string;
}

function gatehouse(args: string[], env: Record<string, string>, input?: string): Promise<Result> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
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
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(input ?? '');
  });
}

/** Success: exit 0, nothing on stderr, and (with --json) one JSON document on stdout. */
function json(result: Result): Record<string, unknown> & Record<string, unknown>[] {
  assert.equal(result.stderr, '', result.stderr);
  assert.equal(result.code, 0);
  return JSON.parse(result.stdout) as Record<string, unknown> & Record<string, unknown>[];
}

/** Failure: exit 2, nothing on stdout, exactly one line "gatehouse: …" on stderr. */
function failed(result: Result, pattern: RegExp): void {
  assert.equal(result.code, 2, result.stderr);
  assert.equal(result.stdout, '');
  assert.match(result.stderr, /^gatehouse: [^\n]+\n$/);
  assert.match(result.stderr, pattern);
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
      const shown = json(await run('client', 'show', out.client_id as string, '--json'));
      assert.equal(shown.client_secret, undefined);
      assert.deepEqual({ ...shown }, Object.fromEntries(Object.entries(out).filter(([key]) => key !== 'client_secret')));
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

    test('a private-use redirect scheme without a dot is registered with a warning on stderr (RFC 8252 §7.1: SHOULD); --json stays one document', async () => {
      const created = await run('client', 'create', '--name', 'Native', '--redirect-uri', 'myapp://cb', '--token-endpoint-auth-method', 'none', '--json');
      assert.equal(created.code, 0, created.stderr);
      assert.equal(
        created.stderr,
        'gatehouse: warning: redirect_uris: "myapp://cb" uses the private-use scheme "myapp:" without a dot; RFC 8252 §7.1 says it SHOULD be a reverse domain name you control, such as com.example.app:, so that no other app can claim it\n',
      );
      const client = JSON.parse(created.stdout) as Record<string, unknown>;
      assert.deepEqual(client.redirect_uris, ['myapp://cb']);
      const updated = await run('client', 'update', client.client_id as string, '--redirect-uri', 'com.example.app:/cb', '--json');
      assert.equal(updated.stderr, '', 'a reverse-domain scheme draws no warning');
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
          failed(await gatehouse(['serve'], { ...without, GATEHOUSE_PORT: '0', GATEHOUSE_CLEANUP_INTERVAL: '0' }), message);
        }
        assert.deepEqual(await rows(), sealed, 'nothing changed');
      } finally {
        await database.drop();
      }
    });
  });
}

describe('gatehouse CLI without a database', () => {
  test('an invalid environment variable is named, exit 2', async () => {
    failed(await gatehouse(['client', 'list'], { GATEHOUSE_PORT: 'abc' }), /GATEHOUSE_PORT/);
  });

  test('an unknown option is one line, exit 2', async () => {
    failed(await gatehouse(['client', 'list', '--bogus'], {}), /unknown option '--bogus'/);
  });

  test('--help works through the real binary', async () => {
    const result = await gatehouse(['client', 'create', '--help'], {});
    assert.equal(result.code, 0);
    assert.match(result.stdout, /Usage: gatehouse client create \[options\]/);
    assert.match(result.stdout, /--redirect-uri <uri>/);
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
