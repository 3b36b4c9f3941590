/**
 * `gatehouse invitation create|list|resend|revoke` as child processes against a fresh database of
 * every kind (docs/invitations.md, docs/cli.md): without GATEHOUSE_SMTP_URL inviting is refused
 * (exit 2, nothing written); with it the invitation and its mail are written together (the mail
 * in the outbox, for a server to send), listed, resent (a second mail) and revoked, each audited;
 * refusals are one line and exit 2.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { runGatehouse as gatehouse, storeLineOf, type CliResult as Result } from '../helpers/cli.ts';
import { DATABASES, type TestDatabase } from '../helpers/databases.ts';

for (const kind of DATABASES) {
  describe(`gatehouse invitation on ${kind.name}`, () => {
    let database: TestDatabase;
    let dir: string;
    let env: Record<string, string>;
    let mailEnv: Record<string, string>;
    const failed = (result: Result, message: string) => {
      assert.equal(result.code, 2, result.stderr);
      assert.equal(result.stderr, `${storeLineOf(env)}gatehouse: ${message}\n`);
    };

    before(async () => {
      database = await kind.create();
      dir = mkdtempSync(join(tmpdir(), 'gatehouse-invitation-cli-'));
      env = { GATEHOUSE_DATABASE_URL: database.url, GATEHOUSE_AUDIT_LOG: join(dir, 'audit.log'), GATEHOUSE_ISSUER: 'https://sso.example/uas' };
      // A relay that is never reached: the CLI only queues invitation mail; a server sends it.
      mailEnv = { ...env, GATEHOUSE_SMTP_URL: 'smtp://127.0.0.1:9', GATEHOUSE_SMTP_STARTTLS: 'off', GATEHOUSE_MAIL_FROM: 'sso@mail.example' };
      assert.equal((await gatehouse(['migrate'], env)).code, 0);
    });
    after(async () => {
      await database.drop();
      rmSync(dir, { recursive: true, force: true });
    });

    test('without mail, inviting is refused and nothing is written', async () => {
      failed(await gatehouse(['invitation', 'create', 'nomail@example.com'], env), 'mail is not configured, so no invitation can be sent: set GATEHOUSE_SMTP_URL and GATEHOUSE_MAIL_FROM (docs/mail.md)');
      const listed = await gatehouse(['invitation', 'list', '--json'], env);
      assert.deepEqual([listed.code, JSON.parse(listed.stdout)], [0, []]);
    });

    test('create, list, resend, revoke: the mail queued each time, audited; refusals exit 2', async () => {
      const created = await gatehouse(['invitation', 'create', 'paavo@example.com', '--given-name', 'Paavo', '--locale', 'fi', '--json'], mailEnv);
      assert.equal(created.code, 0, created.stderr);
      const invitation = JSON.parse(created.stdout) as Record<string, unknown>;
      assert.deepEqual([invitation.email, invitation.givenName, invitation.status, invitation.locale], ['paavo@example.com', 'Paavo', 'pending', 'fi']);
      assert.match(String(invitation.invitedBy), /^cli:/, 'the operator who ran the command');
      const messages = JSON.parse((await gatehouse(['mail', 'outbox', '--json'], mailEnv)).stdout) as { id: string; kind: string; destination: string; status: string }[];
      assert.deepEqual(messages.map((m) => [m.id, m.kind, m.destination, m.status]), [[invitation.messageId, 'mail.invitation', 'paavo@example.com', 'pending']]);

      failed(await gatehouse(['invitation', 'create', 'PAAVO@example.com'], mailEnv), 'a pending invitation to PAAVO@example.com exists already: resend it, or revoke it first');

      const list = await gatehouse(['invitation', 'list', '--status', 'pending'], mailEnv);
      assert.equal(list.code, 0, list.stderr);
      assert.match(list.stdout, new RegExp(`^${String(invitation.id)}\\s+paavo@example\\.com\\s+pending\\s`, 'm'));

      const resent = await gatehouse(['invitation', 'resend', String(invitation.id), '--json'], mailEnv);
      assert.equal(resent.code, 0, resent.stderr);
      assert.equal((JSON.parse((await gatehouse(['mail', 'outbox', '--json'], mailEnv)).stdout) as unknown[]).length, 2, 'a second mail');

      const revoked = await gatehouse(['invitation', 'revoke', String(invitation.id), '--json'], env);
      assert.deepEqual([revoked.code, (JSON.parse(revoked.stdout) as { status: string }).status], [0, 'revoked']);
      failed(await gatehouse(['invitation', 'revoke', String(invitation.id)], env), 'the invitation to paavo@example.com is revoked: only a pending invitation can be revoked');
      failed(await gatehouse(['invitation', 'resend', String(invitation.id)], mailEnv), 'the invitation to paavo@example.com is revoked: only a pending invitation can be resent; invite the address again instead');
      failed(await gatehouse(['invitation', 'list', '--status', 'lost'], env), '--status must be one of pending, accepted, revoked, expired');

      const events = readFileSync(join(dir, 'audit.log'), 'utf8').trim().split('\n').map((line) => JSON.parse(line) as { event: string; invitationId?: string }).filter((e) => e.event.startsWith('invitation.'));
      assert.deepEqual(events.map((e) => [e.event, e.invitationId]), [['invitation.created', invitation.id], ['invitation.resent', invitation.id], ['invitation.revoked', invitation.id]]);
    });
  });
}
