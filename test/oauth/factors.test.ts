/**
 * Second factors in the protocol core (src/oauth/factors): the TOTP arithmetic against RFC 6238's
 * own vectors, the recovery codes' shape, enrolment, and verifySecondFactor's rules (each code
 * once, the throttle before the check, audit events without secrets), on every database.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, beforeEach, describe, test } from 'node:test';
import { loadConfig, type Config } from '../../src/config.ts';
import { ManualClock } from '../../src/lib/clock.ts';
import { cryptoRandom } from '../../src/lib/random.ts';
import { noAudit, type AuditEvent } from '../../src/observability/audit.ts';
import { AUDIT_EVENTS } from '../../src/observability/audit-catalog.ts';
import { Metrics } from '../../src/observability/metrics.ts';
import { confirmTotpEnrolment, FactorInputError, importTotpFactor, regenerateRecoveryCodes, startTotpEnrolment } from '../../src/oauth/factors/enrolment.ts';
import { normalizeRecoveryCode, recoveryCodesMethod } from '../../src/oauth/factors/recovery-codes.ts';
import { emailCodeMethod, newEmailCode } from '../../src/oauth/factors/email-code.ts';
import { CODE_METHODS, methodRecognising } from '../../src/oauth/factors/registry.ts';
import { DEFAULT_TOTP, matchingStep, totpCode, totpMethod } from '../../src/oauth/factors/totp.ts';
import { factorsOf, verifySecondFactor, type SecondFactorDeps } from '../../src/oauth/factors/verify.ts';
import { AuditCapture } from '../helpers/audit.ts';
import { DATABASES } from '../helpers/databases.ts';
import { aStoredUser, openTestStore, T0, type TestStore } from '../helpers/store.ts';

/** RFC 6238 Appendix B: the SHA-1 seed "12345678901234567890" (ASCII), 8 digits, X = 30. */
const RFC_SECRET = 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ';
const RFC_VECTORS: [seconds: number, code: string][] = [
  [59, '94287082'],
  [1111111109, '07081804'],
  [1111111111, '14050471'],
  [1234567890, '89005924'],
  [2000000000, '69279037'],
  [20000000000, '65353130'],
];

const KEK = 'k'.repeat(32);

describe('TOTP arithmetic', () => {
  test('RFC 6238 Appendix B (SHA-1): every vector is the code of its time, and is recognised as that step', () => {
    const rfc = { ...DEFAULT_TOTP, digits: 8 };
    for (const [seconds, code] of RFC_VECTORS) {
      assert.equal(totpCode(rfc, RFC_SECRET, seconds * 1000), code, `T = ${seconds}`);
      assert.equal(matchingStep(rfc, RFC_SECRET, code, seconds * 1000), Math.floor(seconds / 30));
    }
  });

  test('one step of drift each side is accepted, two are not', () => {
    const now = 1111111111 * 1000;
    const at = (offset: number) => totpCode(DEFAULT_TOTP, RFC_SECRET, now + offset * 30_000);
    const step = Math.floor(now / 30_000);
    assert.equal(matchingStep(DEFAULT_TOTP, RFC_SECRET, at(-1), now), step - 1);
    assert.equal(matchingStep(DEFAULT_TOTP, RFC_SECRET, at(1), now), step + 1);
    assert.equal(matchingStep(DEFAULT_TOTP, RFC_SECRET, at(-2), now), undefined);
    assert.equal(matchingStep(DEFAULT_TOTP, RFC_SECRET, at(2), now), undefined);
  });
});

describe('code shapes', () => {
  test('a TOTP code and a recovery code are told apart by shape; the methods\' shapes never overlap', () => {
    const codes = ['123456', '123 456', '12345678', 'abcd-efgh-jkmn-pqrs', 'ABCD EFGH JKMN PQRS', 'abcdefghjkmnpqrs', 'ABCD-EFGH', 'abcd efgh', 'WXYZWXYZ'];
    for (const code of codes) assert.equal(CODE_METHODS.filter((m) => m.recognises(code)).length, 1, code);
    assert.equal(methodRecognising('123456'), totpMethod);
    assert.equal(methodRecognising('ABCD-EFGH-JKMN-PQRS'), recoveryCodesMethod);
    assert.equal(methodRecognising('abcd-efgh'), emailCodeMethod);
    // 8 digits is an imported TOTP's code, never an e-mail code; I, L, O, U are not in the e-mail alphabet.
    for (const junk of ['', '12345', '123456789', 'abcd-efgh-jkmn-pqr', 'abcd-efgh-jkmn-pqrsu', 'x'.repeat(1000), 'ABCD-EFG', 'ABCD-EFGHJ', 'ABCD-EFG1', 'ABCD-EFGI', 'LOUD-LOUD']) assert.equal(methodRecognising(junk), undefined, junk);
    // Every code the generator makes is recognised by the e-mail method alone.
    for (let i = 0; i < 200; i++) {
      const code = newEmailCode((bytes) => randomBytes(bytes).toString('hex'));
      assert.match(code, /^[A-Z]{4}-[A-Z]{4}$/);
      assert.deepEqual(CODE_METHODS.filter((m) => m.recognises(code)), [emailCodeMethod], code);
    }
  });

  test('recovery codes: typing is forgiving (case, separators, o/i/l for 0/1)', () => {
    assert.equal(normalizeRecoveryCode('0O1I-L111-aaaa-bbbb'), '00111111aaaabbbb');
    assert.equal(normalizeRecoveryCode(' 0011 1111 AAAA BBBB '), '00111111aaaabbbb');
  });

  test('the methods declare their RFC 8176 amr values', () => {
    assert.deepEqual(totpMethod.amr, ['otp']);
    assert.deepEqual(recoveryCodesMethod.amr, ['otp']);
    assert.deepEqual(emailCodeMethod.amr, ['otp']);
  });
});

for (const kind of DATABASES) {
  describe(`second factors on ${kind.name}`, () => {
    let harness: TestStore;
    let clock: ManualClock;
    let audit: AuditCapture;
    let config: Config;
    const deps = () => ({ config, store: harness.store, clock, audit, random: cryptoRandom }) satisfies SecondFactorDeps & Record<string, unknown>;
    before(async () => {
      harness = await openTestStore(kind);
    });
    after(async () => harness.close());
    beforeEach(() => {
      clock = new ManualClock(T0);
      audit = new AuditCapture();
      config = loadConfig({ GATEHOUSE_ISSUER: 'https://sso.example.com/uas' });
    });

    async function enrolled(options: { key?: string } = {}) {
      if (options.key !== undefined) config = loadConfig({ GATEHOUSE_ISSUER: 'https://sso.example.com/uas', GATEHOUSE_KEY_ENCRYPTION_KEY: options.key });
      const user = await aStoredUser(harness.store);
      const { secret } = await startTotpEnrolment(deps(), user.username);
      const result = await confirmTotpEnrolment(deps(), user.id, { secret, code: totpCode(DEFAULT_TOTP, secret, clock.now()), name: 'phone' });
      assert.equal(result.type, 'enrolled');
      return { user, secret, attempt: (code: string, ip = '192.0.2.1') => verifySecondFactor(deps(), { userId: user.id, username: user.username, code, ip, clientId: 'rp' }) };
    }

    test('enrolment: the URI follows the Key Uri Format, the QR code is SVG; a wrong code stores nothing; the right one stores the factor and emits factor.enrolled', async () => {
      const user = await aStoredUser(harness.store);
      const started = await startTotpEnrolment(deps(), user.username);
      const uri = new URL(started.uri);
      assert.equal(uri.protocol, 'otpauth:');
      assert.equal(uri.host, 'totp');
      assert.equal(decodeURIComponent(uri.pathname), `/sso.example.com:${user.username}`);
      assert.equal(uri.searchParams.get('secret'), started.secret);
      assert.equal(uri.searchParams.get('issuer'), 'sso.example.com');
      assert.match(started.qrSvg, /^<svg [^>]*xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
      assert.doesNotMatch(started.qrSvg, /<script|href=/);
      assert.deepEqual(await factorsOf(deps(), user.id), []);

      const wrong = totpCode(DEFAULT_TOTP, started.secret, clock.now() + 5 * 30_000);
      assert.deepEqual(await confirmTotpEnrolment(deps(), user.id, { secret: started.secret, code: wrong }), { type: 'wrong_code' });
      assert.deepEqual(await factorsOf(deps(), user.id), []);
      const result = await confirmTotpEnrolment(deps(), user.id, { secret: started.secret, code: totpCode(DEFAULT_TOTP, started.secret, clock.now()), name: ' phone ' });
      assert.equal(result.type, 'enrolled');
      const factors = await factorsOf(deps(), user.id);
      assert.deepEqual(factors.map((f) => [f.kind, f.name]), [['totp', 'phone']]);
      assert.deepEqual(audit.of('factor.enrolled').map((e) => [e.userId, e.kind, e.factorId, e.name]), [[user.id, 'totp', factors[0]!.id, 'phone']]);
      await assert.rejects(confirmTotpEnrolment(deps(), user.id, { secret: 'not base32!', code: '123456' }), FactorInputError);
      await assert.rejects(confirmTotpEnrolment(deps(), user.id, { secret: started.secret, code: '123456', name: '' }), FactorInputError);
    });

    test('GATEHOUSE_TOTP_ISSUER names the issuer instead of the host', async () => {
      config = loadConfig({ GATEHOUSE_ISSUER: 'https://sso.example.com/uas', GATEHOUSE_TOTP_ISSUER: 'Example Corp' });
      const started = await startTotpEnrolment(deps(), 'alice');
      assert.equal(new URL(started.uri).searchParams.get('issuer'), 'Example Corp');
    });

    test('a TOTP code is accepted once: the enrolment code is spent, a later code works once, its replay and an older step are refused', async () => {
      const { secret, attempt } = await enrolled();
      assert.deepEqual(await attempt(totpCode(DEFAULT_TOTP, secret, clock.now())), { type: 'refused' });
      clock.advance(30_000);
      const code = totpCode(DEFAULT_TOTP, secret, clock.now());
      assert.deepEqual(await attempt(code), { type: 'ok', kind: 'totp', amr: ['otp', 'mfa'] });
      assert.deepEqual(await attempt(code), { type: 'refused' });
      assert.deepEqual(await attempt(totpCode(DEFAULT_TOTP, secret, clock.now() - 30_000)), { type: 'refused' });
      clock.advance(30_000);
      assert.deepEqual(await attempt(totpCode(DEFAULT_TOTP, secret, clock.now() + 30_000)), { type: 'ok', kind: 'totp', amr: ['otp', 'mfa'] });
    });

    test('a sealed secret (GATEHOUSE_KEY_ENCRYPTION_KEY set) is stored sealed and verifies', async () => {
      const { user, secret, attempt } = await enrolled({ key: KEK });
      const [stored] = await harness.store.factors.totpFactors(user.id);
      assert.equal(stored?.secret.form, 'sealed');
      assert.ok(!stored?.secret.value.includes(secret));
      clock.advance(30_000);
      assert.equal((await attempt(totpCode(DEFAULT_TOTP, secret, clock.now()))).type, 'ok');
    });

    test('recovery codes: 10 of 80 bits each, shown once, each accepted once; a new set voids the old', async () => {
      const user = await aStoredUser(harness.store);
      const { codes, factor } = await regenerateRecoveryCodes(deps(), user.id);
      assert.equal(codes.length, 10);
      assert.equal(new Set(codes).size, 10);
      for (const code of codes) assert.match(code, /^[0-9a-hjkmnp-tv-z]{4}(-[0-9a-hjkmnp-tv-z]{4}){3}$/);
      const attempt = (code: string) => verifySecondFactor(deps(), { userId: user.id, username: user.username, code, ip: '192.0.2.9' });
      assert.deepEqual(await attempt(codes[3]!.toUpperCase()), { type: 'ok', kind: 'recovery_codes', amr: ['otp', 'mfa'] });
      assert.deepEqual(await attempt(codes[3]!), { type: 'refused' });
      assert.equal(await harness.store.factors.recoveryCodesLeft(factor.id), 9);
      const fresh = await regenerateRecoveryCodes(deps(), user.id);
      assert.deepEqual(await attempt(codes[4]!), { type: 'refused' });
      assert.equal((await attempt(fresh.codes[0]!)).type, 'ok');
      assert.deepEqual((await factorsOf(deps(), user.id)).map((f) => f.id), [fresh.factor.id]);
    });

    test('a secret enrolled twice (two factors of one secret) still takes each code once', async () => {
      const user = await aStoredUser(harness.store);
      await importTotpFactor(deps(), user.id, { secret: RFC_SECRET, name: 'first' });
      await importTotpFactor(deps(), user.id, { secret: RFC_SECRET, name: 'again' });
      const attempt = (code: string) => verifySecondFactor(deps(), { userId: user.id, username: user.username, code, ip: '192.0.2.4' });
      const code = totpCode(DEFAULT_TOTP, RFC_SECRET, clock.now());
      assert.equal((await attempt(code)).type, 'ok');
      assert.deepEqual(await attempt(code), { type: 'refused' });
    });

    test('a code of a kind the user has not, or of another user, is refused', async () => {
      const { secret } = await enrolled();
      const other = await aStoredUser(harness.store);
      clock.advance(30_000);
      const code = totpCode(DEFAULT_TOTP, secret, clock.now());
      assert.deepEqual(await verifySecondFactor(deps(), { userId: other.id, username: other.username, code, ip: '192.0.2.1' }), { type: 'refused' });
      assert.deepEqual(await verifySecondFactor(deps(), { userId: other.id, username: other.username, code: 'abcd-efgh-jkmn-pqrs', ip: '192.0.2.1' }), { type: 'refused' });
    });

    test('audit: verified, failed and throttled events name the user, never the code or the secret', async () => {
      const { user, secret, attempt } = await enrolled();
      clock.advance(30_000);
      const right = totpCode(DEFAULT_TOTP, secret, clock.now());
      const wrongs = ['000000', '111111', '222222', '333333', '444444', '555555'].filter((c) => c !== right);
      for (const wrong of wrongs.slice(0, config.throttleUserFailures - 1)) assert.deepEqual(await attempt(wrong), { type: 'refused' });
      // The failure that starts the wait says so, as a password's does (SA26).
      assert.deepEqual(await attempt(wrongs[config.throttleUserFailures - 1]!), { type: 'throttled', retryAfter: 1 });
      const throttled = await attempt(right);
      assert.equal(throttled.type, 'throttled');
      assert.deepEqual(audit.of('factor.failed').length, config.throttleUserFailures);
      assert.deepEqual(audit.of('factor.throttled').map((e) => [e.userId, e.username, e.by, e.ip]), [[user.id, user.username, 'username', '192.0.2.1']]);
      assert.equal(audit.of('lockout').filter((e) => e.kind === 'second_factor').length, 1);
      // Another address has not failed on the user: the right code works from there (SA6).
      assert.deepEqual(await attempt(right, '198.51.100.7'), { type: 'ok', kind: 'totp', amr: ['otp', 'mfa'] });
      assert.deepEqual(audit.of('factor.verified').map((e) => [e.userId, e.kind, e.ip, e.clientId]), [[user.id, 'totp', '198.51.100.7', 'rp']]);
      for (const line of audit.lines) {
        assert.ok(!line.includes(secret), 'no secret in the audit log');
        assert.ok(!line.includes(right), 'no code in the audit log');
      }
    });

    test('importTotpFactor stores a checked secret with its parameters; its codes verify; bad input is a FactorInputError', async () => {
      const user = await aStoredUser(harness.store);
      const factor = await importTotpFactor(deps(), user.id, { secret: 'jbsw y3dp ehpk 3pxp', name: 'imported', digits: 8, period: 60, algorithm: 'sha-256' });
      const [stored] = await harness.store.factors.totpFactors(user.id);
      assert.deepEqual([stored?.factor.id, stored?.algorithm, stored?.digits, stored?.period, stored?.lastStep], [factor.id, 'SHA256', 8, 60, undefined]);
      const code = totpCode({ algorithm: 'SHA256', digits: 8, period: 60 }, 'JBSWY3DPEHPK3PXP', clock.now());
      assert.equal((await verifySecondFactor(deps(), { userId: user.id, username: user.username, code, ip: '192.0.2.3' })).type, 'ok');
      for (const bad of [{ secret: 'short' }, { secret: 'JBSWY3DPEHPK3PX1' }, { secret: 'JBSWY3DPEHPK3PXP', digits: 5 }, { secret: 'JBSWY3DPEHPK3PXP', period: 1 }, { secret: 'JBSWY3DPEHPK3PXP', algorithm: 'MD5' }]) {
        await assert.rejects(importTotpFactor(deps(), user.id, bad), FactorInputError, JSON.stringify(bad));
      }
    });
  });
}

describe('second-factor metrics', () => {
  test('each factor event is counted by event and kind; a throttled code is also a throttle refusal of kind second_factor', async () => {
    const metrics = new Metrics();
    const sink = metrics.countingSink(noAudit);
    const actor = { via: 'cli' as const, caller: 'root' };
    const who = { userId: 'u', username: 'alice' };
    sink.emit({ event: 'factor.verified', ...who, kind: 'totp', factorId: 'f' });
    sink.emit({ event: 'factor.verified', ...who, kind: 'recovery_codes', factorId: 'r' });
    sink.emit({ event: 'factor.failed', ...who });
    sink.emit({ event: 'factor.throttled', ...who, by: 'ip', retryAfter: 2 });
    sink.emit({ event: 'factor.enrolled', userId: 'u', kind: 'totp', factorId: 'f', name: 'phone', actor });
    sink.emit({ event: 'factor.removed', userId: 'u', kind: 'totp', factorId: 'f', actor });
    sink.emit({ event: 'factor.reset', userId: 'u', removed: 2, actor });
    sink.emit({ event: 'factor.renamed', userId: 'u', kind: 'recovery_codes', factorId: 'r', name: 'printed', actor });
    sink.emit({ event: 'factor.secrets_sealed', sealed: 3, actor });
    sink.emit({ event: 'factor.secrets_sealed', sealed: 0, actor });
    const text = await metrics.registry.metrics();
    for (const line of [
      'gatehouse_second_factor_events_total{event="verified",kind="totp"} 1',
      'gatehouse_second_factor_events_total{event="verified",kind="recovery_codes"} 1',
      'gatehouse_second_factor_events_total{event="failed"} 1',
      'gatehouse_second_factor_events_total{event="throttled"} 1',
      'gatehouse_second_factor_events_total{event="enrolled",kind="totp"} 1',
      'gatehouse_second_factor_events_total{event="removed",kind="totp"} 1',
      'gatehouse_second_factor_events_total{event="reset"} 1',
      'gatehouse_second_factor_events_total{event="renamed",kind="recovery_codes"} 1',
      'gatehouse_second_factor_events_total{event="secrets_sealed"} 3',
      'gatehouse_throttle_events_total{kind="second_factor",event="refused"} 1',
    ]) assert.ok(text.includes(`${line}\n`), line);
  });
});

describe('every factor event is counted', () => {
  test('each `factor.*` event of the audit catalogue adds to gatehouse_second_factor_events_total: a new factor event without a count fails here (issue 24, item 6)', async () => {
    const actor = { via: 'cli' as const, caller: 'root' };
    const who = { userId: 'u', username: 'alice' };
    // One event of each kind the catalogue names; the table must name them all.
    const samples: Record<string, AuditEvent> = {
      'factor.verified': { event: 'factor.verified', ...who, kind: 'totp', factorId: 'f' },
      'factor.failed': { event: 'factor.failed', ...who },
      'factor.throttled': { event: 'factor.throttled', ...who, by: 'ip', retryAfter: 1 },
      'factor.enrolled': { event: 'factor.enrolled', userId: 'u', kind: 'totp', factorId: 'f', name: 'phone' },
      'factor.removed': { event: 'factor.removed', userId: 'u', kind: 'totp', factorId: 'f' },
      'factor.reset': { event: 'factor.reset', userId: 'u', removed: 1, actor },
      'factor.renamed': { event: 'factor.renamed', userId: 'u', kind: 'totp', factorId: 'f', name: 'work' },
      'factor.secrets_sealed': { event: 'factor.secrets_sealed', sealed: 1, actor },
    };
    assert.deepEqual(Object.keys(samples).sort(), Object.keys(AUDIT_EVENTS).filter((name) => name.startsWith('factor.')).sort());
    for (const [name, event] of Object.entries(samples)) {
      const metrics = new Metrics();
      metrics.countingSink(noAudit).emit(event);
      const text = await metrics.registry.metrics();
      const counted = text.split('\n').filter((line) => line.startsWith('gatehouse_second_factor_events_total{')).map((line) => Number(line.split(' ').at(-1)));
      assert.deepEqual(counted, [1], `${name} counts once`);
    }
  });
});
