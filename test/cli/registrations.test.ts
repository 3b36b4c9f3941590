/**
 * `gatehouse registrations list|approve|reject` as child processes against a fresh database of
 * every kind (docs/registration.md, "Approval"): the pending accounts listed; an approval enables
 * the account, queues the "ready" mail (sent by a server on the same store to a real SMTP server)
 * and writes its audit event; a rejection deletes it, without mail when asked; a second decision
 * is refused clearly.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { runGatehouse as gatehouse, storeLineOf } from '../helpers/cli.ts';
import { DATABASES } from '../helpers/databases.ts';
import { createTestUser } from '../helpers/fixtures.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';
import { startSmtpServer, type TestSmtpServer } from '../helpers/smtp.ts';

for (const kind of DATABASES) {
  describe(`gatehouse registrations on ${kind.name}`, () => {
    let smtp: TestSmtpServer;
    let server: RunningServer;
    let dir: string;
    let env: Record<string, string>;
    const run = (...args: string[]) => gatehouse(args, env);

    before(async () => {
      smtp = await startSmtpServer();
      const mail = { GATEHOUSE_SMTP_URL: smtp.url, GATEHOUSE_SMTP_STARTTLS: 'off', GATEHOUSE_MAIL_FROM: 'sso@mail.example', GATEHOUSE_OUTBOX_INTERVAL: '0' };
      server = await startServer(kind, { env: { ...mail, GATEHOUSE_REGISTRATION: 'open', GATEHOUSE_REGISTRATION_APPROVAL: 'on' } });
      dir = mkdtempSync(join(tmpdir(), 'gatehouse-registrations-cli-'));
      env = { ...mail, GATEHOUSE_DATABASE_URL: server.database.url, GATEHOUSE_ISSUER: server.issuer, GATEHOUSE_AUDIT_LOG: join(dir, 'audit.log') };
    });
    after(async () => {
      await server.close();
      await smtp.stop();
      rmSync(dir, { recursive: true, force: true });
    });

    test('list, approve (the mail arrives), reject without mail; a second decision is refused', async () => {
      const store = server.gatehouse.store;
      const alice = await createTestUser(store, { password: 'a fine long passphrase', username: 'alice@example.com', email: 'alice@example.com', status: 'pending', givenName: 'Alice' });
      const bob = await createTestUser(store, { password: 'a fine long passphrase', username: 'bob@example.com', email: 'bob@example.com', status: 'pending' });
      await createTestUser(store, { password: 'a fine long passphrase', username: 'carol@example.com', email: 'carol@example.com' });

      const listed = await run('registrations', 'list', '--json');
      assert.equal(listed.stderr, storeLineOf(env), listed.stderr);
      assert.deepEqual((JSON.parse(listed.stdout) as { username: string; given_name: string | null }[]).map((u) => [u.username, u.given_name]), [['alice@example.com', 'Alice'], ['bob@example.com', null]]);
      const table = await run('registrations', 'list');
      assert.deepEqual(table.stdout.split('\n').map((line) => line.split(/\s+/)[0]), ['USERNAME', 'alice@example.com', 'bob@example.com', '']);

      const approved = await run('registrations', 'approve', 'alice@example.com', '--locale', 'sv', '--json');
      assert.equal(approved.code, 0, approved.stderr);
      const result = JSON.parse(approved.stdout) as Record<string, unknown>;
      assert.deepEqual([result.id, result.status, typeof result.message_id], [alice.id, 'enabled', 'string']);
      assert.equal((await store.users.getProfile(alice.id))?.status, 'enabled');

      const rejected = await run('registrations', 'reject', bob.id, '--no-mail', '--json');
      assert.equal(rejected.code, 0, rejected.stderr);
      assert.deepEqual(JSON.parse(rejected.stdout), { id: bob.id, username: 'bob@example.com', status: 'deleted', message_id: null });
      assert.equal(await store.users.getProfile(bob.id), undefined);

      const again = await run('registrations', 'approve', 'alice@example.com');
      assert.notEqual(again.code, 0);
      assert.match(again.stderr, /gatehouse: alice@example\.com is not a pending registration: it is enabled\n$/);
      const carol = await run('registrations', 'reject', 'carol@example.com');
      assert.match(carol.stderr, /carol@example\.com is not a pending registration: it is enabled/);

      await server.gatehouse.outbox.sender.tick();
      assert.deepEqual(smtp.received.map((m) => [m.to, m.subject]), [[['alice@example.com'], 'Ditt konto hos gatehouse är klart']]);
      const events = readFileSync(join(dir, 'audit.log'), 'utf8').trim().split('\n').map((line) => JSON.parse(line) as { event: string; userId?: string; actor?: { via: string } });
      assert.deepEqual(events.filter((e) => e.event.startsWith('registration.')).map((e) => [e.event, e.userId, e.actor?.via]), [['registration.approved', alice.id, 'cli'], ['registration.rejected', bob.id, 'cli']]);
    });
  });
}
