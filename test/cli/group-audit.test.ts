/**
 * The group commands leave the audit events the management API leaves for the same changes, with
 * the CLI's actor: they call the same use cases (src/manage/groups.ts), which emit them (issue 23
 * item 1; before it the CLI emitted none for groups). A change of nothing leaves none.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { runGatehouse as gatehouse } from '../helpers/cli.ts';
import { DATABASES, type TestDatabase } from '../helpers/databases.ts';

for (const kind of DATABASES) {
  describe(`gatehouse group audit events on ${kind.name}`, () => {
    let database: TestDatabase;
    let dir: string;
    let env: Record<string, string>;
    const run = async (...args: string[]) => {
      const result = await gatehouse(args, env);
      assert.equal(result.code, 0, result.stderr);
      return result.stdout;
    };
    before(async () => {
      database = await kind.create();
      dir = mkdtempSync(join(tmpdir(), 'gatehouse-group-audit-'));
      env = { GATEHOUSE_DATABASE_URL: database.url, GATEHOUSE_AUDIT_LOG: join(dir, 'audit.log'), GATEHOUSE_AUDIT_STORE: 'false' };
      assert.equal((await gatehouse(['migrate'], env)).code, 0);
    });
    after(async () => {
      await database.drop();
      rmSync(dir, { recursive: true, force: true });
    });

    test('create, add-member (twice), remove-member (twice) and delete: one event per change, naming the CLI', async () => {
      const user = JSON.parse(await run('user', 'create', '--username', 'erin', '--password', 'correct horse battery', '--json')) as { id: string };
      await run('group', 'create', 'Testers');
      await run('group', 'add-member', 'Testers', 'erin');
      await run('group', 'add-member', 'Testers', 'erin');
      await run('group', 'remove-member', 'Testers', user.id);
      await run('group', 'remove-member', 'Testers', user.id);
      await run('group', 'add-member', 'Testers', 'erin');
      await run('group', 'delete', 'Testers');
      const events = readFileSync(env.GATEHOUSE_AUDIT_LOG!, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown> & { actor: { via: string } });
      const member = { userId: user.id, username: 'erin', group: 'Testers' };
      assert.deepEqual(
        events.map(({ event, userId, username, group, members }) => ({ event, userId, username, group, members })),
        [
          { event: 'user.created', userId: user.id, username: 'erin', group: undefined, members: undefined },
          { event: 'group.created', userId: undefined, username: undefined, group: 'Testers', members: undefined },
          { event: 'user.group_added', ...member, members: undefined },
          { event: 'user.group_removed', ...member, members: undefined },
          { event: 'user.group_added', ...member, members: undefined },
          { event: 'group.deleted', userId: undefined, username: undefined, group: 'Testers', members: 1 },
        ],
      );
      assert.ok(events.every((e) => e.actor.via === 'cli'), 'every event names the CLI');
    });
  });
}
