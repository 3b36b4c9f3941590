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
