/**
 * Mail through the outbox, end to end, on every database (issue 25, item 1): gatehouse servers
 * send to a real SMTP server started here (smtp-server on an ephemeral port, no TLS: the local
 * relay opt-out GATEHOUSE_SMTP_STARTTLS=off). Delivery with a stable Message-ID; an SMTP outage
 * in the middle (retried later: nothing lost, nothing twice); a permanent refusal going dead,
 * seen and redelivered through the management API; a restart with messages pending, and a
 * sender that crashed holding a lease; three instances on one store sending one outbox, every
 * message exactly once by Message-ID at the SMTP server; and an smtp:// URL without the opt-out
 * refusing a server that offers no STARTTLS. The clock is injected and the senders' ticks are
 * called: no timers, no sleeps.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ManualClock } from '../../src/lib/clock.ts';
import type { OutboxMessage } from '../../src/domain/outbox.ts';
import { actingAs } from '../helpers/administration.ts';
import { AuditCapture } from '../helpers/audit.ts';
import { DATABASES } from '../helpers/databases.ts';
import { manageCall, manageTokens } from '../helpers/manage.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';
import { startSmtpServer, type TestSmtpServer } from '../helpers/smtp.ts';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const FROM = 'Gatehouse Test <sso@mail.example>';

function mailEnv(smtp: TestSmtpServer, extra: Record<string, string> = {}): Record<string, string> {
  // No timer: the tests call the senders' ticks.
  return { GATEHOUSE_SMTP_URL: smtp.url, GATEHOUSE_SMTP_STARTTLS: 'off', GATEHOUSE_MAIL_FROM: FROM, GATEHOUSE_SMTP_TIMEOUT: '5', GATEHOUSE_OUTBOX_INTERVAL: '0', ...extra };
}

const messageIdOf = (m: Pick<OutboxMessage, 'id'>) => `<${m.id}@mail.example>`;

for (const kind of DATABASES) {
  describe(`mail through the outbox on ${kind.name}`, () => {
    let smtp: TestSmtpServer;
    before(async () => {
      smtp = await startSmtpServer();
    });
    after(async () => smtp.stop());

    async function sendTests(server: RunningServer, count: number, to = 'alice@example.com'): Promise<OutboxMessage[]> {
      const out: OutboxMessage[] = [];
      for (let i = 0; i < count; i++) out.push(await server.gatehouse.deps.admin.mail.sendTest(actingAs(), to, { locale: (['en', 'fi', 'sv'] as const)[i % 3] }));
      return out;
    }
    const statusOf = async (server: RunningServer, id: string) => (await server.gatehouse.store.outbox.get(id))?.status;

    test('a test message is delivered once, with its Message-ID, subject and texts in its language', async () => {
      const clock = new ManualClock();
      const audit = new AuditCapture();
      const server = await startServer(kind, { env: mailEnv(smtp), clock, audit });
      try {
        smtp.received.length = 0;
        const [en, fi] = await sendTests(server, 2, 'bob@example.com');
        assert.deepEqual(await server.gatehouse.outbox.sender.tick(), { delivered: 2, retried: 0, dead: 0, leaseLost: 0 });
        assert.deepEqual(await server.gatehouse.outbox.sender.tick(), { delivered: 0, retried: 0, dead: 0, leaseLost: 0 }, 'nothing is sent twice');
        // Sent in parallel: in either order.
        const arrived = smtp.received.map((m) => [m.messageId, m.subject, m.from, m.to]).sort((a, b) => String(a[1]).localeCompare(String(b[1])));
        assert.deepEqual(arrived, [
          [messageIdOf(en!), 'Test message from gatehouse', 'sso@mail.example', ['bob@example.com']],
          [messageIdOf(fi!), 'Testiviesti palvelusta gatehouse', 'sso@mail.example', ['bob@example.com']],
        ]);
        const english = smtp.received.find((m) => m.messageId === messageIdOf(en!))!.raw;
        assert.match(english, /Content-Language: en/);
        assert.match(english, /multipart\/alternative/, 'text and HTML');
        const row = await server.gatehouse.store.outbox.get(en!.id);
        assert.deepEqual([row?.status, row?.attempts, row?.deliveredAt, row?.lastError], ['delivered', 1, clock.now(), undefined]);
        assert.deepEqual(audit.of('mail.queued').map((e) => [e.messageId, e.kind, e.to]), [[en!.id, 'mail.test', 'bob@example.com'], [fi!.id, 'mail.test', 'bob@example.com']]);
      } finally {
        await server.close();
      }
    });

    test('an SMTP outage in the middle: retried with back-off once it is back, nothing lost, nothing twice', async () => {
      const clock = new ManualClock();
      const server = await startServer(kind, { env: mailEnv(smtp), clock });
      try {
        smtp.received.length = 0;
        const before = await sendTests(server, 2);
        assert.equal((await server.gatehouse.outbox.sender.tick()).delivered, 2);
        await smtp.stop();
        const during = await sendTests(server, 3);
        assert.deepEqual(await server.gatehouse.outbox.sender.tick(), { delivered: 0, retried: 3, dead: 0, leaseLost: 0 });
        for (const m of during) {
          const row = await server.gatehouse.store.outbox.get(m.id);
          assert.equal(row?.status, 'pending');
          assert.equal(row?.attempts, 1);
          assert.match(row?.lastError ?? '', /ECONNECTION|ESOCKET|ECONNREFUSED/);
          // The first retry comes after 15 to 30 s (half to all of 30 s).
          assert.ok(row!.nextAttemptAt >= clock.now() + 15_000 && row!.nextAttemptAt <= clock.now() + 30_000, `retry at +${row!.nextAttemptAt - clock.now()} ms`);
        }
        assert.deepEqual(await server.gatehouse.outbox.sender.tick(), { delivered: 0, retried: 0, dead: 0, leaseLost: 0 }, 'not due yet: not tried');
        clock.advance(30_000);
        assert.deepEqual(await server.gatehouse.outbox.sender.tick(), { delivered: 0, retried: 3, dead: 0, leaseLost: 0 }, 'still down');
        await smtp.start();
        clock.advance(60_000);
        assert.deepEqual(await server.gatehouse.outbox.sender.tick(), { delivered: 3, retried: 0, dead: 0, leaseLost: 0 });
        const expected = new Map([...before, ...during].map((m) => [messageIdOf(m), 1]));
        assert.deepEqual(smtp.countsByMessageId(), expected, 'every message once');
        for (const m of during) assert.deepEqual([await statusOf(server, m.id), (await server.gatehouse.store.outbox.get(m.id))?.attempts], ['delivered', 3]);
      } finally {
        await smtp.start();
        await server.close();
      }
    });

    test('a permanent refusal (5xx) is dead after 3 attempts, visible to administrators, and redelivered once through the management API', async () => {
      const clock = new ManualClock();
      const audit = new AuditCapture();
      const server = await startServer(kind, { env: mailEnv(smtp, { GATEHOUSE_OUTBOX_MAX_ATTEMPTS: '12' }), clock, audit });
      try {
        smtp.received.length = 0;
        smtp.refuseWith = 550;
        const [m] = await sendTests(server, 1, 'nobody@example.com');
        for (let attempt = 1; attempt <= 3; attempt++) {
          const report = await server.gatehouse.outbox.sender.tick();
          assert.deepEqual(report, { delivered: 0, retried: attempt < 3 ? 1 : 0, dead: attempt < 3 ? 0 : 1, leaseLost: 0 }, `attempt ${attempt}`);
          clock.advance(HOUR);
        }
        const tokens = await manageTokens(server);
        const dead = await manageCall(server, 'GET', '/outbox?status=dead', { token: tokens.reader });
        assert.equal(dead.status, 200);
        assert.deepEqual(dead.json.items?.map((i) => [i.id, i.status, i.attempts, i.destination, i.kind, 'payload' in i]), [[m!.id, 'dead', 3, 'nobody@example.com', 'mail.test', false]]);
        assert.match(String(dead.json.items?.[0]?.last_error), /^SMTP 550: /);
        assert.deepEqual(audit.of('outbox.dead').map((e) => [e.messageId, e.attempts]), [[m!.id, 3]]);
        assert.equal((await manageCall(server, 'POST', `/outbox/${m!.id}/redeliver`, { token: tokens.reader })).status, 403, 'a reader cannot redeliver');
        smtp.refuseWith = undefined;
        const redelivered = await manageCall(server, 'POST', `/outbox/${m!.id}/redeliver`, { token: tokens.admin });
        assert.equal(redelivered.status, 200);
        assert.deepEqual([redelivered.json.status, redelivered.json.attempts], ['pending', 0]);
        const again = await manageCall(server, 'POST', `/outbox/${m!.id}/redeliver`, { token: tokens.admin });
        assert.deepEqual([again.status, again.json.detail], [409, `message ${m!.id} is pending: only a dead message can be redelivered`]);
        assert.equal((await manageCall(server, 'POST', '/outbox/00000000-0000-4000-8000-000000000000/redeliver', { token: tokens.admin })).status, 404);
        assert.equal(audit.of('outbox.redelivered').length, 1);
        assert.equal((await server.gatehouse.outbox.sender.tick()).delivered, 1);
        assert.deepEqual(smtp.countsByMessageId(), new Map([[messageIdOf(m!), 1]]));
        const one = await manageCall(server, 'GET', `/outbox/${m!.id}`, { token: tokens.reader });
        assert.deepEqual([one.status, one.json.status, one.json.attempts], [200, 'delivered', 1]);
      } finally {
        smtp.refuseWith = undefined;
        await server.close();
      }
    });

    test('a restart with messages pending: a new instance on the same store delivers them, and takes over a crashed sender\'s lease when it expires', async () => {
      const clock = new ManualClock();
      const first = await startServer(kind, { env: mailEnv(smtp), clock });
      const database = first.database;
      let second: RunningServer | undefined;
      try {
        smtp.received.length = 0;
        const queued = await sendTests(first, 3);
        // A sender that claimed one and died before sending it (or between the SMTP accept and its mark).
        const [crashed] = await first.gatehouse.store.outbox.claim({ owner: 'crashed/1', now: clock.now(), leaseMs: 5 * MINUTE, limit: 1, channels: ['mail'] });
        await first.gatehouse.close();
        second = await startServer(kind, { env: mailEnv(smtp), clock, database });
        assert.deepEqual(await second.gatehouse.outbox.sender.tick(), { delivered: 2, retried: 0, dead: 0, leaseLost: 0 }, 'the leased one waits for its lease');
        clock.advance(5 * MINUTE);
        assert.deepEqual(await second.gatehouse.outbox.sender.tick(), { delivered: 1, retried: 0, dead: 0, leaseLost: 0 });
        assert.deepEqual(smtp.countsByMessageId(), new Map(queued.map((m) => [messageIdOf(m), 1])));
        assert.equal((await second.gatehouse.store.outbox.get(crashed!.id))?.attempts, 2, 'the crashed attempt counts');
      } finally {
        await second?.close();
        await database.drop();
      }
    });

    test('three instances on one store send one outbox: every message delivered exactly once (by Message-ID at the SMTP server)', async () => {
      const clock = new ManualClock();
      const first = await startServer(kind, { env: mailEnv(smtp), clock });
      const servers = [first, await startServer(kind, { env: mailEnv(smtp), clock, database: first.database }), await startServer(kind, { env: mailEnv(smtp), clock, database: first.database })];
      try {
        smtp.received.length = 0;
        // Written by all three, sent by all three at once, a few rounds.
        const queued = (await Promise.all(servers.map((s) => sendTests(s, 15)))).flat();
        const reports = [];
        for (let round = 0; round < 3; round++) reports.push(...(await Promise.all(servers.map((s) => s.gatehouse.outbox.sender.tick()))));
        assert.equal(reports.reduce((n, r) => n + r.delivered, 0), queued.length);
        assert.equal(reports.reduce((n, r) => n + r.retried + r.dead + r.leaseLost, 0), 0);
        assert.deepEqual(smtp.countsByMessageId(), new Map(queued.map((m) => [messageIdOf(m), 1])));
        assert.deepEqual(await first.gatehouse.deps.admin.outbox.counts(), { pending: 0, delivered: 45, dead: 0 });
      } finally {
        for (const s of servers.slice(1).reverse()) await s.close();
        await first.close();
      }
    });

    test('smtp:// without GATEHOUSE_SMTP_STARTTLS=off sends nothing to a server that offers no STARTTLS', async () => {
      const plain = await startSmtpServer();
      const clock = new ManualClock();
      const server = await startServer(kind, { env: mailEnv(plain, { GATEHOUSE_SMTP_STARTTLS: 'required' }), clock });
      try {
        const [m] = await sendTests(server, 1);
        assert.deepEqual(await server.gatehouse.outbox.sender.tick(), { delivered: 0, retried: 1, dead: 0, leaseLost: 0 });
        assert.match((await server.gatehouse.store.outbox.get(m!.id))?.lastError ?? '', /STARTTLS/);
        assert.deepEqual(plain.received, []);
      } finally {
        await server.close();
        await plain.stop();
      }
    });
  });
}
