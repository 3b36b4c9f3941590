/**
 * `gatehouse user factors|import-totp|remove-factor|reset-factors`, run as the real command on a
 * fresh database of every kind: the secret comes from stdin only and is never printed or logged,
 * bad input is one clear line and exit 2, every change is an audit event naming the CLI.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { runGatehouse as gatehouse, storeLineOf } from '../helpers/cli.ts';
import { DATABASES, type TestDatabase } from '../helpers/databases.ts';

const SECRET = 'JBSWY3DPEHPK3PXPJBSWY3DP';

for (const kind of DATABASES) {
  describe(`gatehouse user second factors on ${kind.name}`, () => {
    let database: TestDatabase;
    let dir: string;
    let env: Record<string, string>;
    before(async () => {
      database = await kind.create();
      dir = mkdtempSync(join(tmpdir(), 'gatehouse-factors-'));
      env = { GATEHOUSE_DATABASE_URL: database.url, GATEHOUSE_ISSUER: 'http://127.0.0.1:8080/uas', GATEHOUSE_AUDIT_LOG: join(dir, 'audit.log') };
      assert.equal((await gatehouse(['migrate'], env)).code, 0);
      assert.equal((await gatehouse(['user', 'create', '--username', 'alice', '--password-stdin'], env, 'correct horse battery\n')).code, 0);
    });
    after(async () => {
      await database.drop();
      rmSync(dir, { recursive: true, force: true });
    });

    test('import-totp reads the secret from stdin, prints and logs no secret; factors lists it; remove-factor and reset-factors remove', async () => {
      const imported = await gatehouse(['user', 'import-totp', 'alice', '--secret-stdin', '--name', 'old server', '--digits', '8', '--json'], env, `${SECRET}\n`);
      assert.equal(imported.code, 0, imported.stderr);
      assert.equal(imported.stderr, storeLineOf(env));
      const factor = JSON.parse(imported.stdout) as { id: string; kind: string; name: string; last_used_at: string | null };
      assert.deepEqual([factor.kind, factor.name, factor.last_used_at], ['totp', 'old server', null]);
      assert.ok(!imported.stdout.includes(SECRET));

      const text = await gatehouse(['user', 'factors', 'alice'], env);
      assert.equal(text.code, 0, text.stderr);
      assert.match(text.stdout, /^NAME\s+KIND\s+ID\s+CREATED\s+LAST USED\s+CODES LEFT\n/);
      assert.match(text.stdout, new RegExp(`old server\\s+totp\\s+${factor.id}`));
      const second = await gatehouse(['user', 'import-totp', 'alice', '--secret-stdin'], env, SECRET);
      assert.match(second.stdout, /^Imported TOTP factor "Authenticator app" \([0-9a-f-]{36}\)\.\n$/);
      assert.equal((JSON.parse((await gatehouse(['user', 'factors', 'alice', '--json'], env)).stdout) as unknown[]).length, 2);

      const removed = await gatehouse(['user', 'remove-factor', 'alice', factor.id], env);
      assert.equal(removed.stdout, 'Removed totp factor "old server".\n');
      const again = await gatehouse(['user', 'remove-factor', 'alice', factor.id], env);
      assert.equal(again.code, 2);
      assert.match(again.stderr, /alice has no second factor/);
      const reset = await gatehouse(['user', 'reset-factors', 'alice', '--json'], env);
      assert.deepEqual(JSON.parse(reset.stdout), { removed: 1 });
      assert.equal((await gatehouse(['user', 'factors', 'alice'], env)).stdout, 'No second factors.\n');

      const log = readFileSync(join(dir, 'audit.log'), 'utf8');
      assert.ok(!log.includes(SECRET), 'no secret in the audit log');
      const events = log.trim().split('\n').map((line) => JSON.parse(line) as { event: string; actor?: { via: string } }).filter((e) => e.event.startsWith('factor.'));
      assert.deepEqual(events.map((e) => [e.event, e.actor?.via]), [['factor.enrolled', 'cli'], ['factor.enrolled', 'cli'], ['factor.removed', 'cli'], ['factor.reset', 'cli']]);
    });

    test('rename-factor renames (one clear line for a bad name, exit 2); factors seal seals the clear secrets once, refused without a key; both audited naming the CLI', async () => {
      const imported = await gatehouse(['user', 'import-totp', 'alice', '--secret-stdin', '--json'], env, SECRET);
      assert.equal(imported.code, 0, imported.stderr);
      const { id } = JSON.parse(imported.stdout) as { id: string };
      const renamed = await gatehouse(['user', 'rename-factor', 'alice', id, 'work phone'], env);
      assert.equal(renamed.stdout, `Renamed totp factor ${id} to "work phone".\n`);
      const bad = await gatehouse(['user', 'rename-factor', 'alice', id, 'x'.repeat(65)], env);
      assert.equal(bad.code, 2);
      assert.match(bad.stderr, /the name must be 1 to 64 characters, without control characters/);
      assert.deepEqual((JSON.parse((await gatehouse(['user', 'factors', 'alice', '--json'], env)).stdout) as { name: string }[]).map((f) => f.name), ['work phone']);

      const unkeyed = await gatehouse(['factors', 'seal'], env);
      assert.equal(unkeyed.code, 2);
      assert.match(unkeyed.stderr, /GATEHOUSE_KEY_ENCRYPTION_KEY is not set/);
      const keyed = { ...env, GATEHOUSE_KEY_ENCRYPTION_KEY: 'k'.repeat(32) };
      const sealed = await gatehouse(['factors', 'seal'], keyed);
      assert.equal(sealed.stdout, 'Sealed 1 TOTP secret.\n', sealed.stderr);
      assert.equal((await gatehouse(['factors', 'seal', '--json'], keyed)).stdout, '{\n  "sealed": 0\n}\n');
      assert.equal((await gatehouse(['user', 'reset-factors', 'alice'], env)).code, 0);

      const events = readFileSync(join(dir, 'audit.log'), 'utf8').trim().split('\n').map((line) => JSON.parse(line) as { event: string; sealed?: number; actor?: { via: string } });
      assert.deepEqual(events.filter((e) => e.event === 'factor.renamed' || e.event === 'factor.secrets_sealed').map((e) => [e.event, e.sealed, e.actor?.via]), [['factor.renamed', undefined, 'cli'], ['factor.secrets_sealed', 1, 'cli'], ['factor.secrets_sealed', 0, 'cli']]);
    });

    test('without --secret-stdin, with a bad secret or digits, or for an unknown user: one clear line and exit 2, nothing stored', async () => {
      for (const [args, input, message] of [
        [['user', 'import-totp', 'alice'], SECRET, /give --secret-stdin/],
        [['user', 'import-totp', 'alice', '--secret-stdin'], 'not base32!', /secret is not base32/],
        [['user', 'import-totp', 'alice', '--secret-stdin', '--digits', 'six'], SECRET, /digits must be 6, 7 or 8/],
        [['user', 'import-totp', 'alice', '--secret-stdin', '--algorithm', 'MD5'], SECRET, /algorithm must be SHA1, SHA256 or SHA512/],
        [['user', 'import-totp', 'nobody', '--secret-stdin'], SECRET, /no user has the id or username "nobody"/],
      ] as const) {
        const result = await gatehouse([...args], env, input);
        assert.equal(result.code, 2, `${args.join(' ')}: ${result.stderr}`);
        assert.match(result.stderr, message);
        assert.ok(!result.stderr.includes(SECRET));
      }
      assert.equal((await gatehouse(['user', 'factors', 'alice'], env)).stdout, 'No second factors.\n');
    });
  });
}
