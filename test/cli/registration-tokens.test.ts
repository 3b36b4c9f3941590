/**
 * `gatehouse registration-token create|list|revoke` as child processes against a fresh database
 * of every kind, and the minted token used at a real server on the same store (RFC 7591 §3).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { hashSecret } from '../../src/lib/hash.ts';
import { runGatehouse as gatehouse, storeLineOf, type CliResult as Result } from '../helpers/cli.ts';
import { DATABASES, type TestDatabase } from '../helpers/databases.ts';
import { startServer } from '../helpers/server.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

for (const kind of DATABASES) {
  describe(`gatehouse registration-token on ${kind.name}`, () => {
    let database: TestDatabase;
    let dir: string;
    let env: Record<string, string>;
    const run = (...args: string[]) => gatehouse(args, env);
    const json = (result: Result) => {
      assert.equal(result.stderr, storeLineOf(env), result.stderr);
      assert.equal(result.code, 0);
      return JSON.parse(result.stdout) as Record<string, unknown> & Record<string, unknown>[];
    };
    const failed = (result: Result, pattern: RegExp) => {
      assert.equal(result.code, 2, result.stderr);
      assert.equal(result.stdout, '');
      assert.match(result.stderr, /gatehouse: [^\n]+\n$/);
      assert.match(result.stderr, pattern);
    };

    before(async () => {
      database = await kind.create();
      dir = mkdtempSync(join(tmpdir(), 'gatehouse-dcr-cli-'));
      env = { GATEHOUSE_DATABASE_URL: database.url, GATEHOUSE_AUDIT_LOG: join(dir, 'audit.log') };
      assert.equal((await run('migrate')).code, 0);
    });
    after(async () => {
      await database.drop();
      rmSync(dir, { recursive: true, force: true });
    });

    test('create prints the token once; list shows it without its value; the token registers a client at the server until revoked (DR-12)', async () => {
      const before = Date.now();
      const created = json(await run('registration-token', 'create', '--expires-in', '1h', '--uses', '2', '--description', 'CI pipeline', '--json'));
      assert.match(created.id as string, UUID);
      assert.match(created.token as string, /^[A-Za-z0-9_-]{43}$/);
      assert.equal(created.uses_left, 2);
      assert.equal(created.description, 'CI pipeline');
      assert.match(created.created_by as string, /^cli/);
      const expiresAt = Date.parse(created.expires_at as string);
      assert.ok(expiresAt >= before + 3600_000 && expiresAt <= Date.now() + 3600_000, created.expires_at as string);

      const listed = json(await run('registration-token', 'list', '--json'));
      const { token, ...shown } = created;
      assert.deepEqual(listed.find((t) => t.id === created.id), shown);
      const text = await run('registration-token', 'list');
      assert.match(text.stdout, new RegExp(`${created.id as string}\\s+2\\s+\\S+\\s+usable\\s+cli`));
      assert.ok(!text.stdout.includes(token as string) && !text.stdout.includes(hashSecret(token as string)));

      const server = await startServer(kind, { database, env: { GATEHOUSE_DYNAMIC_REGISTRATION: 'initial_access_token' } });
      try {
        const register = () => fetch(`${server.url}/uas/oauth2/register`, { method: 'POST', headers: { authorization: `Bearer ${token as string}`, 'content-type': 'application/json' }, body: JSON.stringify({ client_name: 'From CI', grant_types: ['client_credentials'] }) });
        assert.equal((await register()).status, 201);
        assert.equal(json(await run('registration-token', 'list', '--json')).find((t) => t.id === created.id)?.uses_left, 1);
        assert.deepEqual(json(await run('registration-token', 'revoke', created.id as string, '--json')), { id: created.id, revoked: true });
        assert.equal((await register()).status, 401);
      } finally {
        await server.close();
      }
      assert.equal(json(await run('registration-token', 'list', '--json')).find((t) => t.id === created.id), undefined);

      const audit = readFileSync(env.GATEHOUSE_AUDIT_LOG!, 'utf8');
      const events = audit.trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
      assert.deepEqual(events.filter((e) => e.id === created.id).map((e) => [e.event, (e.actor as { via: string }).via]), [['initial_access_token.created', 'cli'], ['initial_access_token.revoked', 'cli']]);
      assert.ok(!audit.includes(token as string), 'the audit trail never holds the token');
    });

    test('bad --expires-in, --uses or description, and an unknown id to revoke, are one-line errors (DR-12)', async () => {
      failed(await run('registration-token', 'create', '--expires-in', 'soon'), /--expires-in must be seconds or a number with s, m, h or d/);
      failed(await run('registration-token', 'create', '--expires-in', '400d'), /expires_in: must be a whole number of seconds from 1 to 31536000/);
      failed(await run('registration-token', 'create', '--expires-in', '0'), /expires_in/);
      failed(await run('registration-token', 'create', '--expires-in', '1h', '--uses', '0'), /uses: must be a whole number from 1 to 10000/);
      failed(await run('registration-token', 'create', '--expires-in', '1h', '--uses', 'many'), /--uses must be a whole number/);
      failed(await run('registration-token', 'create', '--expires-in', '1h', '--description', 'x'.repeat(201)), /description: must be at most 200 characters/);
      failed(await run('registration-token', 'revoke', 'no-such-id'), /no initial access token has the id "no-such-id"/);
      const empty = await gatehouse(['registration-token', 'create'], env);
      assert.equal(empty.code, 2);
      assert.match(empty.stderr, /--expires-in/);
    });
  });
}
