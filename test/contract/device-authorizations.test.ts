import assert from 'node:assert/strict';
import { randomInt } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { DeviceApproval, DeviceAuthorization } from '../../src/domain/device-authorization.ts';
import type { DeviceAuthorizationStore, DevicePoll } from '../../src/storage/ports.ts';
import { DATABASES } from '../helpers/databases.ts';
import { aHash, aSessionIndex, openTestStore, T0, warmUp, type TestStore } from '../helpers/store.ts';

const RACERS = 20;
const ALPHABET = 'BCDFGHJKLMNPQRSTVWXZ';
const TTL = 600_000;

function aUserCode(): string {
  return Array.from({ length: 8 }, () => ALPHABET[randomInt(ALPHABET.length)]).join('');
}

function anAuthorization(overrides: Partial<DeviceAuthorization> = {}): DeviceAuthorization {
  return {
    deviceCodeHash: aHash(),
    userCode: aUserCode(),
    clientId: 'tv-app',
    scope: 'openid profile',
    status: 'pending',
    createdAt: T0,
    expiresAt: T0 + TTL,
    interval: 5,
    lastPolledAt: undefined,
    approval: undefined,
    decidedAt: undefined,
    consumedAt: undefined,
    ...overrides,
  };
}

function anApproval(): DeviceApproval {
  return { userId: 'user-1', sessionIndex: aSessionIndex(), authTime: T0 - 1000, amr: ['pwd'], acr: undefined };
}

function outcomes(polls: DevicePoll[]): Record<DevicePoll['outcome'], number> {
  const counts = { redeemed: 0, pending: 0, other: 0, unknown: 0 };
  for (const p of polls) counts[p.outcome] += 1;
  return counts;
}

for (const kind of DATABASES) {
  describe(`device authorization store on ${kind.name}`, () => {
    let harness: TestStore;
    let devices: DeviceAuthorizationStore;
    let otherDevices: DeviceAuthorizationStore;
    let warm: () => Promise<void>;
    before(async () => {
      harness = await openTestStore(kind, { poolSize: RACERS });
      devices = harness.store.deviceAuthorizations;
      const other = await harness.open({ poolSize: 10 });
      otherDevices = other.deviceAuthorizations;
      warm = async () => {
        await Promise.all([warmUp(harness.store, RACERS), warmUp(other, 10)]);
      };
    });
    after(async () => harness.close());

    async function stored(overrides: Partial<DeviceAuthorization> = {}): Promise<DeviceAuthorization> {
      const authorization = anAuthorization(overrides);
      assert.equal(await devices.insert(authorization), true);
      return authorization;
    }

    test('an inserted authorization is found pending by its user code until it expires', async () => {
      const a = await stored();
      assert.deepEqual(await devices.findPending(a.userCode, T0 + 1), a);
      assert.equal(await devices.findPending(a.userCode, a.expiresAt), undefined);
      assert.equal(await devices.findPending(aUserCode(), T0 + 1), undefined);
    });

    test('a taken user code is refused and nothing is stored', async () => {
      const a = await stored();
      const clash = anAuthorization({ userCode: a.userCode });
      assert.equal(await devices.insert(clash), false);
      assert.deepEqual(await devices.poll(clash.deviceCodeHash, clash.clientId, T0 + 1), { outcome: 'unknown' });
    });

    test('approving stores who approved; a second decision changes nothing', async () => {
      const a = await stored();
      const approval = anApproval();
      const approved = await devices.decide(a.userCode, { approve: approval }, T0 + 10);
      assert.deepEqual(approved, { ...a, status: 'approved', approval, decidedAt: T0 + 10 });
      assert.equal(await devices.decide(a.userCode, 'deny', T0 + 11), undefined);
      assert.equal(await devices.decide(a.userCode, { approve: anApproval() }, T0 + 12), undefined);
      assert.equal(await devices.findPending(a.userCode, T0 + 13), undefined);
    });

    test('denying is final: polls see it denied, approving afterwards changes nothing', async () => {
      const a = await stored();
      assert.equal((await devices.decide(a.userCode, 'deny', T0 + 10))?.status, 'denied');
      assert.equal(await devices.decide(a.userCode, { approve: anApproval() }, T0 + 11), undefined);
      const poll = await devices.poll(a.deviceCodeHash, a.clientId, T0 + 12);
      assert.equal(poll.outcome, 'other');
      assert.equal(poll.outcome === 'other' && poll.authorization.status, 'denied');
    });

    test('an expired authorization cannot be decided, and its polls see it expired, unchanged', async () => {
      const a = await stored();
      assert.equal(await devices.decide(a.userCode, { approve: anApproval() }, a.expiresAt), undefined);
      assert.deepEqual(await devices.poll(a.deviceCodeHash, a.clientId, a.expiresAt), { outcome: 'other', authorization: a });
    });

    test('an approval that expired before the poll is not redeemed', async () => {
      const a = await stored();
      await devices.decide(a.userCode, { approve: anApproval() }, T0 + 10);
      const poll = await devices.poll(a.deviceCodeHash, a.clientId, a.expiresAt);
      assert.equal(poll.outcome, 'other');
      assert.equal(poll.outcome === 'other' && poll.authorization.status, 'approved');
    });

    test('polls: on time is pending, too soon is too fast and adds 5 s to the interval, each time', async () => {
      const a = await stored({ interval: 5 });
      const first = await devices.poll(a.deviceCodeHash, a.clientId, T0 + 1000);
      assert.deepEqual(first, { outcome: 'pending', tooFast: false, authorization: { ...a, lastPolledAt: T0 + 1000 } });
      const onTime = await devices.poll(a.deviceCodeHash, a.clientId, T0 + 6000);
      assert.deepEqual(onTime, { outcome: 'pending', tooFast: false, authorization: { ...a, lastPolledAt: T0 + 6000 } });
      const soon = await devices.poll(a.deviceCodeHash, a.clientId, T0 + 10_999);
      assert.deepEqual(soon, { outcome: 'pending', tooFast: true, authorization: { ...a, interval: 10, lastPolledAt: T0 + 10_999 } });
      const stillSoon = await devices.poll(a.deviceCodeHash, a.clientId, T0 + 20_998);
      assert.deepEqual(stillSoon, { outcome: 'pending', tooFast: true, authorization: { ...a, interval: 15, lastPolledAt: T0 + 20_998 } });
      const late = await devices.poll(a.deviceCodeHash, a.clientId, T0 + 35_998);
      assert.deepEqual(late, { outcome: 'pending', tooFast: false, authorization: { ...a, interval: 15, lastPolledAt: T0 + 35_998 } });
    });

    test('another client\'s poll changes nothing and is told the row as it is', async () => {
      const a = await stored();
      await devices.decide(a.userCode, { approve: anApproval() }, T0 + 10);
      const poll = await devices.poll(a.deviceCodeHash, 'someone-else', T0 + 11);
      assert.equal(poll.outcome, 'other');
      assert.equal((await devices.poll(a.deviceCodeHash, a.clientId, T0 + 12)).outcome, 'redeemed');
    });

    test('a redeemed authorization is consumed: later polls see it consumed', async () => {
      const a = await stored();
      const approval = anApproval();
      await devices.decide(a.userCode, { approve: approval }, T0 + 10);
      assert.deepEqual(await devices.poll(a.deviceCodeHash, a.clientId, T0 + 20), { outcome: 'redeemed', authorization: { ...a, status: 'consumed', approval, decidedAt: T0 + 10, consumedAt: T0 + 20 } });
      const again = await otherDevices.poll(a.deviceCodeHash, a.clientId, T0 + 30);
      assert.equal(again.outcome === 'other' && again.authorization.status, 'consumed');
    });

    test(`${RACERS} concurrent polls after approval, on two instances: exactly one redeems`, async () => {
      await warm();
      const a = await stored();
      await devices.decide(a.userCode, { approve: anApproval() }, T0 + 10);
      const polls = await Promise.all(Array.from({ length: RACERS }, (_, i) => (i % 2 === 0 ? devices : otherDevices).poll(a.deviceCodeHash, a.clientId, T0 + 20)));
      assert.deepEqual(outcomes(polls), { redeemed: 1, pending: 0, other: RACERS - 1, unknown: 0 });
    });

    test(`${RACERS} concurrent decisions, approvals and denials on two instances: exactly one changes the row`, async () => {
      await warm();
      const a = await stored();
      const decisions = await Promise.all(
        Array.from({ length: RACERS }, (_, i) => (i % 2 === 0 ? devices : otherDevices).decide(a.userCode, i % 3 === 0 ? 'deny' : { approve: anApproval() }, T0 + 10)),
      );
      const won = decisions.filter((d) => d !== undefined);
      assert.equal(won.length, 1);
      const poll = await devices.poll(a.deviceCodeHash, a.clientId, T0 + 20);
      assert.equal(poll.outcome, won[0]!.status === 'approved' ? 'redeemed' : 'other');
    });

    test(`${RACERS} concurrent polls of a pending authorization: one on time, the rest too fast`, async () => {
      await warm();
      const a = await stored({ interval: 5 });
      await devices.poll(a.deviceCodeHash, a.clientId, T0);
      const polls = await Promise.all(Array.from({ length: RACERS }, (_, i) => (i % 2 === 0 ? devices : otherDevices).poll(a.deviceCodeHash, a.clientId, T0 + 5000)));
      const onTime = polls.filter((p) => p.outcome === 'pending' && !p.tooFast).length;
      assert.equal(onTime, 1);
      const last = await devices.poll(a.deviceCodeHash, a.clientId, T0 + 5001);
      assert.equal(last.outcome === 'pending' && last.authorization.interval, 5 + 5 * RACERS);
    });

    test('approve racing expiry: approvals at the expiry instant never win, just before they do', async () => {
      const late = await stored();
      const early = await stored();
      const [atExpiry, beforeExpiry] = await Promise.all([
        otherDevices.decide(late.userCode, { approve: anApproval() }, late.expiresAt),
        devices.decide(early.userCode, { approve: anApproval() }, early.expiresAt - 1),
      ]);
      assert.equal(atExpiry, undefined);
      assert.equal(beforeExpiry?.status, 'approved');
    });

    test('deleteExpired deletes only what expired before the cut-off, up to the limit', async () => {
      const old = await stored({ expiresAt: T0 - 5 * TTL });
      const older = await stored({ expiresAt: T0 - 6 * TTL });
      const live = await stored();
      assert.equal(await devices.deleteExpired(T0 - 4 * TTL, 1), 1);
      assert.equal(await devices.deleteExpired(T0 - 4 * TTL, 10), 1);
      assert.equal(await devices.deleteExpired(T0 - 4 * TTL, 10), 0);
      assert.deepEqual(await devices.poll(old.deviceCodeHash, old.clientId, T0), { outcome: 'unknown' });
      assert.deepEqual(await devices.poll(older.deviceCodeHash, older.clientId, T0), { outcome: 'unknown' });
      assert.equal((await devices.poll(live.deviceCodeHash, live.clientId, T0)).outcome, 'pending');
    });
  });
}
