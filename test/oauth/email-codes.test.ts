/**
 * The e-mail code use cases in the protocol core (src/oauth/factors/email-code.ts), on every
 * database, with the real outbox sender and a real SMTP server: a verification code (purpose
 * `verify_email`, for the e-mail verification feature) sent and checked once, refused for another
 * purpose or user, throttled with the second factor's counters; the hash is keyed; an e-mail factor
 * never raises a sign-in to a phishing-resistant level.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { outboxFor, type Outbox } from '../../src/app.ts';
import { loadConfig, type Config } from '../../src/config.ts';
import { ManualClock } from '../../src/lib/clock.ts';
import { cryptoRandom } from '../../src/lib/random.ts';
import { checkEmailCode, emailCodeHash, sendEmailCode, type EmailCodeDeps } from '../../src/oauth/factors/email-code.ts';
import { raisingKinds } from '../../src/oauth/levels.ts';
import { noAudit, type AuditEvent } from '../../src/observability/audit.ts';
import { AUDIT_EVENTS } from '../../src/observability/audit-catalog.ts';
import { Metrics } from '../../src/observability/metrics.ts';
import { AuditCapture } from '../helpers/audit.ts';
import { DATABASES } from '../helpers/databases.ts';
import { codeIn } from '../helpers/email-codes.ts';
import { aStoredUser, openTestStore, T0, type TestStore } from '../helpers/store.ts';
import { startSmtpServer, type TestSmtpServer } from '../helpers/smtp.ts';

describe('e-mail code metrics', () => {
  test('each email_code.* event of the audit catalogue counts once in gatehouse_second_factor_events_total, with kind email_otp', async () => {
    const samples: Record<string, AuditEvent> = {
      'email_code.sent': { event: 'email_code.sent', userId: 'u', purpose: 'sign_in', messageId: 'm', factorId: 'f' },
      'email_code.refused': { event: 'email_code.refused', userId: 'u', purpose: 'enrol', reason: 'throttled' },
      'email_code.used': { event: 'email_code.used', userId: 'u', purpose: 'verify_email' },
      'email_code.failed': { event: 'email_code.failed', userId: 'u', purpose: 'enrol' },
    };
    assert.deepEqual(Object.keys(samples).sort(), Object.keys(AUDIT_EVENTS).filter((name) => name.startsWith('email_code.')).sort());
    for (const [name, event] of Object.entries(samples)) {
      const metrics = new Metrics();
      metrics.countingSink(noAudit).emit(event);
      const lines = (await metrics.registry.metrics()).split('\n').filter((line) => line.startsWith('gatehouse_second_factor_events_total{'));
      assert.deepEqual(lines, [`gatehouse_second_factor_events_total{event="email_code_${name.slice('email_code.'.length)}",kind="email_otp"} 1`]);
    }
  });
});

describe('e-mail codes and levels', () => {
  test('an e-mail factor raises a password sign-in to multi, never to phr or phrh', () => {
    const factor = { id: 'f', userId: 'u', kind: 'email_otp' as const, name: 'E-mail codes', createdAt: T0, lastUsedAt: undefined, email: 'a@example.com' };
    assert.deepEqual(raisingKinds('multi', ['pwd'], [factor]), ['email_otp']);
    assert.deepEqual(raisingKinds('phr', ['pwd'], [factor]), []);
    assert.deepEqual(raisingKinds('phrh', ['pwd'], [factor]), []);
  });

  test('the stored hash is keyed by GATEHOUSE_KEY_ENCRYPTION_KEY and bound to user and purpose', () => {
    const plain = emailCodeHash({ keyEncryptionKey: undefined }, 'u', 'sign_in', 'ABCDEFGH');
    assert.notEqual(emailCodeHash({ keyEncryptionKey: 'k'.repeat(32) }, 'u', 'sign_in', 'ABCDEFGH'), plain);
    assert.notEqual(emailCodeHash({ keyEncryptionKey: undefined }, 'v', 'sign_in', 'ABCDEFGH'), plain);
    assert.notEqual(emailCodeHash({ keyEncryptionKey: undefined }, 'u', 'enrol', 'ABCDEFGH'), plain);
  });
});

for (const kind of DATABASES) {
  describe(`verification codes by e-mail on ${kind.name}`, () => {
    let harness: TestStore;
    let smtp: TestSmtpServer;
    let outbox: Outbox;
    let config: Config;
    let clock: ManualClock;
    let audit: AuditCapture;
    const deps = (): EmailCodeDeps => ({ config, store: harness.store, clock, random: cryptoRandom, audit, mail: outbox.mail });
    before(async () => {
      harness = await openTestStore(kind);
      smtp = await startSmtpServer();
      config = loadConfig({ GATEHOUSE_ISSUER: 'https://sso.example.com/uas', GATEHOUSE_SMTP_URL: smtp.url, GATEHOUSE_SMTP_STARTTLS: 'off', GATEHOUSE_MAIL_FROM: 'sso@mail.example', GATEHOUSE_KEY_ENCRYPTION_KEY: 'k'.repeat(32) });
      outbox = outboxFor(config, harness.store, { clock: new ManualClock(T0), random: cryptoRandom, audit: new AuditCapture(), theme: undefined });
    });
    after(async () => {
      outbox.close();
      await smtp.stop();
      await harness.close();
    });
    beforeEach(() => {
      clock = new ManualClock(T0);
      audit = new AuditCapture();
    });

    test('a code of purpose verify_email: mailed to the address asked, checked once, not for another purpose or user; its row names the address', async () => {
      const user = await aStoredUser(harness.store);
      const other = await aStoredUser(harness.store);
      const sent = await sendEmailCode(deps(), { user, purpose: 'verify_email', address: 'new.address@mail.example', locale: 'fi', ip: '192.0.2.7' });
      assert.equal(sent.type, 'sent');
      const mail = smtp.received.at(-1)!;
      assert.deepEqual([mail.to, mail.subject], [['new.address@mail.example'], 'Palvelun gatehouse vahvistuskoodi']);
      const code = codeIn(mail);
      assert.deepEqual(await checkEmailCode(deps(), { user: other, purpose: 'verify_email', code }), { type: 'refused' }, "another user's");
      assert.deepEqual(await checkEmailCode(deps(), { user, purpose: 'enrol', code }), { type: 'refused' }, 'another purpose');
      const checked = await checkEmailCode(deps(), { user, purpose: 'verify_email', code, ip: '192.0.2.7' });
      assert.equal(checked.type, 'ok');
      assert.deepEqual(checked.type === 'ok' ? [checked.value.address, checked.value.purpose, checked.value.userId] : [], ['new.address@mail.example', 'verify_email', user.id]);
      assert.deepEqual(await checkEmailCode(deps(), { user, purpose: 'verify_email', code }), { type: 'refused' }, 'used once');
      assert.deepEqual(audit.all().map((e) => e.event).filter((e) => e.startsWith('email_code.')), ['email_code.sent', 'email_code.failed', 'email_code.failed', 'email_code.used', 'email_code.failed']);
    });

    test('wrong verification codes are throttled with the second factor counters: the fifth failure waits', async () => {
      const user = await aStoredUser(harness.store);
      const results = [];
      for (const code of ['AAAA-AAAA', 'BBBB-BBBB', 'CCCC-CCCC', 'DDDD-DDDD', 'EEEE-EEEE']) results.push((await checkEmailCode(deps(), { user, purpose: 'verify_email', code, ip: '192.0.2.8' })).type);
      assert.deepEqual(results, ['refused', 'refused', 'refused', 'refused', 'throttled']);
    });

    test('without mail nothing is sent: off, and an email_code.refused event', async () => {
      const user = await aStoredUser(harness.store);
      assert.deepEqual(await sendEmailCode({ ...deps(), mail: undefined }, { user, purpose: 'verify_email', address: 'x@mail.example', locale: 'en' }), { type: 'off' });
      assert.deepEqual(audit.of('email_code.refused').map((e) => e.reason), ['off']);
    });
  });
}
