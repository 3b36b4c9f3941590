/**
 * `gatehouse mail test|outbox|redeliver` as child processes against a fresh database of every
 * kind and a real SMTP server started here (docs/mail.md): without GATEHOUSE_SMTP_URL mail is off
 * and says so (exit 2, nothing queued); with it the command queues the message with its audit
 * event, sends it from its own process and exits 0 once the SMTP server has accepted it; a server
 * that refuses leaves it queued and the command says so (exit 2).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { runGatehouse as gatehouse, storeLineOf, type CliResult as Result } from '../helpers/cli.ts';
import { DATABASES, type TestDatabase } from '../helpers/databases.ts';
import { startSmtpServer, type TestSmtpServer } from '../helpers/smtp.ts';

for (const kind of DATABASES) {
  describe(`gatehouse mail on ${kind.name}`, () => {
    let database: TestDatabase;
    let dir: string;
    let smtp: TestSmtpServer;
    let env: Record<string, string>;
    let mailEnv: Record<string, string>;
    const failed = (result: Result, message: string) => {
      assert.equal(result.code, 2, result.stderr);
      assert.equal(result.stderr, `${storeLineOf(env)}gatehouse: ${message}\n`);
    };

    before(async () => {
      database = await kind.create();
      dir = mkdtempSync(join(tmpdir(), 'gatehouse-mail-cli-'));
      smtp = await startSmtpServer();
      env = { GATEHOUSE_DATABASE_URL: database.url, GATEHOUSE_AUDIT_LOG: join(dir, 'audit.log') };
      mailEnv = { ...env, GATEHOUSE_SMTP_URL: smtp.url, GATEHOUSE_SMTP_STARTTLS: 'off', GATEHOUSE_MAIL_FROM: 'sso@mail.example', GATEHOUSE_SMTP_TIMEOUT: '5' };
      assert.equal((await gatehouse(['migrate'], env)).code, 0);
    });
    after(async () => {
      await smtp.stop();
      await database.drop();
      rmSync(dir, { recursive: true, force: true });
    });

    test('without GATEHOUSE_SMTP_URL mail is off: mail test says so, exit 2, and queues nothing', async () => {
      const result = await gatehouse(['mail', 'test', 'alice@example.com'], env);
      failed(result, 'mail is not configured: set GATEHOUSE_SMTP_URL and GATEHOUSE_MAIL_FROM (docs/mail.md)');
      assert.equal(result.stdout, '');
      const listed = await gatehouse(['mail', 'outbox', '--json'], env);
      assert.deepEqual([listed.code, JSON.parse(listed.stdout)], [0, []]);
    });

    test('mail test sends the message from its own process and exits 0 once the SMTP server accepted it', async () => {
      smtp.received.length = 0;
      const result = await gatehouse(['mail', 'test', 'bob@example.com', '--locale', 'sv', '--json'], mailEnv);
      assert.equal(result.code, 0, result.stderr);
      assert.equal(result.stderr, storeLineOf(env));
      const message = JSON.parse(result.stdout) as Record<string, unknown>;
      assert.deepEqual([message.status, message.attempts, message.destination, message.kind, 'payload' in message], ['delivered', 1, 'bob@example.com', 'mail.test', false]);
      assert.deepEqual(smtp.received.map((m) => [m.messageId, m.subject, m.to]), [[`<${String(message.id)}@mail.example>`, 'Testmeddelande från gatehouse', ['bob@example.com']]]);
      const audit = readFileSync(join(dir, 'audit.log'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
      assert.deepEqual(audit.filter((e) => e.event === 'mail.queued').map((e) => [e.messageId, e.to]), [[message.id, 'bob@example.com']]);
    });

    test('a refused message stays queued and the command says so (exit 2); --no-wait only queues', async () => {
      smtp.received.length = 0;
      smtp.refuseWith = 451;
      try {
        const result = await gatehouse(['mail', 'test', 'carol@example.com', '--timeout', '5'], mailEnv);
        assert.equal(result.code, 2);
        assert.match(result.stderr, /^gatehouse: the test message to carol@example.com is not delivered yet \(SMTP 451: [^)]*\): it stays in the outbox, and a running server retries it\n$/m);
        const queued = await gatehouse(['mail', 'test', 'dave@example.com', '--no-wait', '--json'], mailEnv);
        assert.equal(queued.code, 0, queued.stderr);
        assert.deepEqual([(JSON.parse(queued.stdout) as Record<string, unknown>).status, (JSON.parse(queued.stdout) as Record<string, unknown>).attempts], ['pending', 0]);
        const pending = JSON.parse((await gatehouse(['mail', 'outbox', '--status', 'pending', '--json'], env)).stdout) as Record<string, unknown>[];
        assert.deepEqual(pending.map((m) => [m.destination, m.attempts]).sort(), [['carol@example.com', 1], ['dave@example.com', 0]]);
        assert.deepEqual(smtp.received, []);
      } finally {
        smtp.refuseWith = undefined;
      }
    });

    test('gatehouse cleanup --max-batches N takes its value (and reports the outbox)', async () => {
      const result = await gatehouse(['cleanup', '--max-batches', '1', '--json'], env);
      assert.equal(result.code, 0, result.stderr);
      const report = JSON.parse(result.stdout) as Record<string, unknown>;
      assert.deepEqual([typeof report.outbox, report.more], ['number', false]);
    });

    test('bad input is one line and exit 2', async () => {
      failed(await gatehouse(['mail', 'test', 'not an address'], mailEnv), '"not an address" is not a mail address (local@domain)');
      failed(await gatehouse(['mail', 'test', 'a@example.com', '--locale', 'de'], mailEnv), 'locale must be one of en, fi, sv');
      failed(await gatehouse(['mail', 'outbox', '--status', 'lost'], env), '--status must be one of pending, delivered, dead');
      failed(await gatehouse(['mail', 'redeliver', '00000000-0000-4000-8000-000000000000'], env), 'no outbox message 00000000-0000-4000-8000-000000000000');
    });
  });
}
