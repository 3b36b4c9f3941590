/**
 * `gatehouse admin bootstrap`, run as the real command against a fresh database of every kind:
 * its output (text and --json), idempotence, the password from stdin or generated, the audit
 * events naming the CLI, and — the "Getting started" path of docs/management-api.md — that the
 * administrator it creates can then call the management API; and that the CLI, too, keeps an
 * enabled administrator (src/identity/administrators.ts).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { runGatehouse as gatehouse, storeLineOf } from '../helpers/cli.ts';
import { DATABASES, type TestDatabase } from '../helpers/databases.ts';
import { issueManageToken, manageCall } from '../helpers/manage.ts';
import { startServer } from '../helpers/server.ts';

for (const kind of DATABASES) {
  describe(`gatehouse admin bootstrap on ${kind.name}`, () => {
    let database: TestDatabase;
    let dir: string;
    let env: Record<string, string>;
    before(async () => {
      database = await kind.create();
      dir = mkdtempSync(join(tmpdir(), 'gatehouse-admin-'));
      env = { GATEHOUSE_DATABASE_URL: database.url, GATEHOUSE_ISSUER: 'http://127.0.0.1:8080/uas', GATEHOUSE_AUDIT_LOG: join(dir, 'audit.log') };
      assert.equal((await gatehouse(['migrate'], env)).code, 0);
    });
    after(async () => {
      await database.drop();
      rmSync(dir, { recursive: true, force: true });
    });

    test('creates everything with --json and the password from stdin; the second run creates nothing and says so', async () => {
      const first = await gatehouse(['admin', 'bootstrap', '--username', 'root', '--password-stdin', '--email', 'root@example.com', '--json'], env, 'correct horse battery\n');
      assert.equal(first.stderr, storeLineOf(env), first.stderr);
      assert.equal(first.code, 0);
      const out = JSON.parse(first.stdout) as { changed: boolean; created: { clients: string[]; groups: string[]; user?: { id: string; username: string } }; password?: string; api: string; console: string };
      assert.equal(out.changed, true);
      assert.deepEqual(out.created.clients, ['gatehouse-manage-api', 'gatehouse-console']);
      assert.deepEqual(out.created.groups, ['Administrators', 'Administrators (read-only)']);
      assert.equal(out.created.user?.username, 'root');
      assert.equal(out.password, undefined, 'the password came from stdin');
      assert.equal(out.api, 'http://127.0.0.1:8080/manage/api/v1');
      assert.equal(out.console, 'http://127.0.0.1:8080/manage/');
      // docs/cli.md names every member --json prints, `?` marking those that may be absent (issue 22 item 11).
      const documented = /`--json` prints `\{(.*?)\}`/s.exec(readFileSync(new URL('../../docs/cli.md', import.meta.url), 'utf8'))?.[1]?.replace(/\{[^}]*\}/g, '').replace(/\s+/g, ' ') ?? '';
      const members = documented.split(', ').map((member) => member.replace(/:.*$/, '').trim());
      assert.deepEqual(Object.keys(out).sort(), members.filter((m) => !m.endsWith('?') || m.slice(0, -1) in out).map((m) => m.replace(/\?$/, '')).sort());

      const events = readFileSync(env.GATEHOUSE_AUDIT_LOG!, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as { event: string; actor: { via: string } });
      assert.deepEqual(events.map((e) => e.event), ['client.created', 'client.created', 'user.created', 'user.group_added']);
      assert.ok(events.every((e) => e.actor.via === 'cli'));

      const second = await gatehouse(['admin', 'bootstrap', '--username', 'root'], env);
      assert.equal(second.code, 0, second.stderr);
      assert.match(second.stdout, /^Nothing to do: the management API is set up already\.\n/);
      assert.match(second.stdout, /User root exists already: left unchanged/);
      assert.doesNotMatch(second.stdout, /Password:/);
      assert.equal(readFileSync(env.GATEHOUSE_AUDIT_LOG!, 'utf8').trim().split('\n').length, 4, 'no new audit events');

      // Getting started: the administrator it made calls the API on a server over the same store.
      const server = await startServer(kind, { database, env: { GATEHOUSE_ISSUER: env.GATEHOUSE_ISSUER! } });
      try {
        const token = await issueManageToken(server, { userId: out.created.user!.id });
        const me = await manageCall(server, 'GET', '/me', { token });
        assert.equal(me.status, 200, me.text);
        assert.equal(me.json.role, 'admin');
        assert.equal(me.json.username, 'root');
      } finally {
        await server.close();
      }
    });

    test('without --password-stdin a password is generated and printed once', async () => {
      const result = await gatehouse(['admin', 'bootstrap', '--username', 'second'], env);
      assert.equal(result.code, 0, result.stderr);
      assert.match(result.stdout, /Created administrator second \([0-9a-f-]{36}\) in Administrators\.\nPassword: \S{20,} {2}\(shown once: store it now\)\n/);
      const bad = await gatehouse(['admin', 'bootstrap', '--username', 'third', '--password-stdin'], env, 'short\n');
      assert.equal(bad.code, 2);
      assert.match(bad.stderr, /password must be at least 8 characters/);
    });

    test('the CLI keeps the last enabled administrator too (exit 2, the rule said in one line); the operator reaches the group', async () => {
      assert.equal((await gatehouse(['user', 'delete', 'second'], env)).code, 0, 'root remains');
      const rule = 'would leave the administrators group "Administrators" without an enabled member; make someone else an administrator first';
      for (const [args, change] of [
        [['user', 'disable', 'root'], 'disabling root'],
        [['user', 'delete', 'root'], 'deleting root'],
        [['group', 'remove-member', 'administrators', 'root'], 'removing root'],
      ] as const) {
        const refused = await gatehouse([...args], env);
        assert.equal(refused.code, 2, refused.stdout);
        assert.equal(refused.stdout, '');
        assert.equal(refused.stderr, `${storeLineOf(env)}gatehouse: ${change} ${rule}\n`);
      }
      const deleteGroup = await gatehouse(['group', 'delete', 'Administrators'], env);
      assert.equal(deleteGroup.code, 2);
      assert.equal(deleteGroup.stderr, `${storeLineOf(env)}gatehouse: group "Administrators" is the administrators group (GATEHOUSE_ADMIN_GROUP); deleting it would leave nobody to manage gatehouse\n`);
      const root = JSON.parse((await gatehouse(['user', 'show', 'root', '--json'], env)).stdout) as { status: string; groups: string[] };
      assert.equal(root.status, 'enabled');
      assert.deepEqual(root.groups, ['Administrators']);
      // The operator acts as an administrator: another one made, the first may be disabled and enabled again.
      assert.equal((await gatehouse(['user', 'create', '--username', 'helper', '--password-stdin', '--group', 'Administrators'], env, 'correct horse battery\n')).code, 0);
      assert.equal((await gatehouse(['user', 'disable', 'root'], env)).code, 0);
      assert.equal((await gatehouse(['user', 'enable', 'root'], env)).code, 0);
    });

    test('groups marked as administrator groups: listed, created marked under a configured name, unmarked by the operator only when no setting names them (AD4)', async () => {
      const listed = JSON.parse((await gatehouse(['group', 'list', '--json'], env)).stdout) as { name: string; administrator: boolean }[];
      assert.deepEqual(listed.map((g) => [g.name, g.administrator]), [['Administrators', true], ['Administrators (read-only)', true]]);
      const configured = await gatehouse(['group', 'unmark-administrator', 'administrators'], env);
      assert.equal(configured.code, 2, configured.stdout);
      assert.equal(configured.stderr, `${storeLineOf(env)}gatehouse: unmarking the administrator group "Administrators" is refused: GATEHOUSE_ADMIN_GROUP or GATEHOUSE_ADMIN_READONLY_GROUP names it, and it stays marked while a setting does\n`);
      const created = await gatehouse(['group', 'create', 'Admins2', '--json'], { ...env, GATEHOUSE_ADMIN_GROUP: 'Admins2' });
      assert.equal((JSON.parse(created.stdout) as { administrator: boolean }).administrator, true);
      const table = await gatehouse(['group', 'list'], env);
      assert.match(table.stdout, /^NAME +MEMBERS +ADMINISTRATOR +DESCRIPTION\nAdministrators +\d+ +yes +Administrators of gatehouse/);
      const unmarked = await gatehouse(['group', 'unmark-administrator', 'admins2'], env);
      assert.equal(unmarked.code, 0, unmarked.stderr);
      assert.equal(unmarked.stdout, 'Unmarked Admins2: it is an ordinary group now.\n');
      const again = JSON.parse((await gatehouse(['group', 'unmark-administrator', 'Admins2', '--json'], env)).stdout) as Record<string, unknown>;
      assert.deepEqual({ ...again, id: undefined }, { id: undefined, name: 'Admins2', administrator: false, changed: false });
      assert.equal((await gatehouse(['group', 'delete', 'Admins2'], env)).code, 0);
    });
  });
}
