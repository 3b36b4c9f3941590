/**
 * The passkey method in the factors registry (issue 24; decisions SA63, SA65): a ceremony method,
 * not a code method; the amr a use of each passkey adds (hwk device-bound, swk synced); the relying
 * party of an issuer; and its events counted by the second-factor metric with kind `passkey`.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Factor } from '../../src/domain/factor.ts';
import { noAudit } from '../../src/observability/audit.ts';
import { Metrics } from '../../src/observability/metrics.ts';
import { relyingParty } from '../../src/oauth/factors/passkey.ts';
import { amrOfFactor, CODE_METHODS, FACTOR_METHODS } from '../../src/oauth/factors/registry.ts';

const factor = (overrides: Partial<Factor>): Factor => ({ id: 'f', userId: 'u', kind: 'passkey', name: 'key', createdAt: 0, lastUsedAt: undefined, ...overrides });

describe('the passkey method', () => {
  test('registered as a ceremony method: every kind has a method, and only code methods read typed codes', () => {
    assert.deepEqual(FACTOR_METHODS.map((m) => [m.kind, m.style]), [
      ['totp', 'code'],
      ['recovery_codes', 'code'],
      ['passkey', 'ceremony'],
      ['email_otp', 'code'],
    ]);
    assert.deepEqual(CODE_METHODS.map((m) => m.kind), ['totp', 'recovery_codes', 'email_otp']);
  });

  test('amrOfFactor: hwk for a device-bound passkey, swk for a backup-eligible one; the code methods\' own', () => {
    assert.deepEqual(amrOfFactor(factor({ backupEligible: false })), ['hwk']);
    assert.deepEqual(amrOfFactor(factor({ backupEligible: true })), ['swk']);
    assert.deepEqual(amrOfFactor(factor({ kind: 'totp' })), ['otp']);
    assert.deepEqual(amrOfFactor(factor({ kind: 'recovery_codes' })), ['otp']);
  });

  test('the relying party is the issuer: its host name without the port as RP ID, its origin', () => {
    assert.deepEqual(relyingParty({ issuer: 'https://sso.example.com:8443/uas' }), { rpID: 'sso.example.com', origin: 'https://sso.example.com:8443', name: 'sso.example.com:8443' });
    assert.deepEqual(relyingParty({ issuer: 'http://localhost:8080/uas' }), { rpID: 'localhost', origin: 'http://localhost:8080', name: 'localhost:8080' });
  });

  test('passkey events are counted by the second-factor metric with kind passkey', async () => {
    const metrics = new Metrics();
    const sink = metrics.countingSink(noAudit);
    sink.emit({ event: 'factor.enrolled', userId: 'u', kind: 'passkey', factorId: 'p', name: 'laptop' });
    sink.emit({ event: 'factor.verified', userId: 'u', username: 'alice', kind: 'passkey', factorId: 'p' });
    sink.emit({ event: 'factor.removed', userId: 'u', kind: 'passkey', factorId: 'p' });
    const text = await metrics.registry.metrics();
    for (const line of [
      'gatehouse_second_factor_events_total{event="enrolled",kind="passkey"} 1',
      'gatehouse_second_factor_events_total{event="verified",kind="passkey"} 1',
      'gatehouse_second_factor_events_total{event="removed",kind="passkey"} 1',
    ]) assert.ok(text.includes(`${line}\n`), line);
  });
});
