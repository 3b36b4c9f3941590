/**
 * Invitations (InvitationStore, migration 032; docs/invitations.md) on every database: found by
 * the link's hash while pending and live; accepted, renewed and revoked each by one conditional
 * UPDATE, so of concurrent calls on two instances exactly one changes it; at most one pending
 * invitation per address, case-insensitively, also when two instances invite at once; an expired
 * one retired so the address can be invited again; paged newest first, by status at a time.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { Invitation } from '../../src/domain/invitation.ts';
import { ConflictError, type InvitationStore, type Store } from '../../src/storage/ports.ts';
import { DATABASES } from '../helpers/databases.ts';
import { aHash, aStoredUser, openTestStore, T0, warmUp, type TestStore } from '../helpers/store.ts';

const RACERS = 20;
const DAY = 86_400_000;

for (const kind of DATABASES) {
  describe(`invitation store on ${kind.name}`, () => {
    let harness: TestStore;
    let store: Store;
    let invitations: InvitationStore;
    /** Another instance's store on the same database. */
    let other: Store;
    before(async () => {
      harness = await openTestStore(kind, { poolSize: RACERS / 2 });
      store = harness.store;
      invitations = store.invitations;
      other = await harness.open({ poolSize: RACERS / 2 });
      await Promise.all([warmUp(store, RACERS / 2), warmUp(other, RACERS / 2)]);
    });
    after(async () => harness.close());

    function anInvitation(overrides: Partial<Invitation> = {}): Invitation {
      return {
        id: randomUUID(),
        tokenHash: aHash(),
        email: `Invitee-${randomUUID()}@Example.com`,
        givenName: 'Ilona',
        familyName: undefined,
        organizationId: undefined,
        invitedBy: 'user:admin',
        locale: 'fi',
        status: 'pending',
        createdAt: T0,
        expiresAt: T0 + 7 * DAY,
        endedAt: undefined,
        userId: undefined,
        ...overrides,
      };
    }

    test('the cleanup deletes invitations that ended before the cut (accepted, revoked, expired, or pending past expiry) and keeps the rest', async () => {
      // A cut far ahead of every other test's rows would delete theirs too: these rows are far in the past.
      const past = T0 - 400 * DAY;
      const cut = past + 100 * DAY;
      const rows = {
        accepted: anInvitation({ status: 'accepted', createdAt: past, expiresAt: past + 7 * DAY, endedAt: past + DAY }),
        revoked: anInvitation({ status: 'revoked', createdAt: past, expiresAt: past + 7 * DAY, endedAt: past + DAY }),
        expired: anInvitation({ status: 'expired', createdAt: past, expiresAt: past + 7 * DAY, endedAt: past + 8 * DAY }),
        lapsed: anInvitation({ createdAt: past, expiresAt: past + 7 * DAY }),
        live: anInvitation({ createdAt: past, expiresAt: cut + DAY }),
        acceptedLate: anInvitation({ status: 'accepted', createdAt: past, expiresAt: cut + DAY, endedAt: cut + 1 }),
      };
      for (const row of Object.values(rows)) await store.invitations.insert(row);
      assert.equal(await store.invitations.deleteEnded(cut, 1000), 4);
      const left = await Promise.all(Object.entries(rows).map(async ([name, row]) => [name, (await store.invitations.get(row.id)) !== undefined] as const));
      assert.deepEqual(left, [['accepted', false], ['revoked', false], ['expired', false], ['lapsed', false], ['live', true], ['acceptedLate', true]]);
    });

    test('found by its link while pending and live, on every instance; accepted once; the account recorded', async () => {
      const row = anInvitation();
      await invitations.insert(row);
      assert.deepEqual(await invitations.get(row.id), row);
      assert.deepEqual(await other.invitations.findLive(row.tokenHash, row.expiresAt - 1), row);
      assert.equal(await invitations.findLive(row.tokenHash, row.expiresAt), undefined, 'expired at expiresAt');
      assert.equal(await invitations.accept(row.tokenHash, row.expiresAt), undefined, 'an expired one cannot be accepted');
      assert.deepEqual(await other.invitations.accept(row.tokenHash, T0 + 5), { ...row, status: 'accepted', endedAt: T0 + 5 });
      assert.equal(await invitations.accept(row.tokenHash, T0 + 6), undefined, 'accepted once');
      assert.equal(await invitations.findLive(row.tokenHash, T0 + 6), undefined);
      const user = await aStoredUser(store);
      await invitations.recordUser(row.id, user.id);
      assert.equal((await invitations.get(row.id))?.userId, user.id);
      assert.ok(await store.users.delete(user.id));
      assert.equal((await invitations.get(row.id))?.userId, undefined, "a deleted account leaves the invitation's history");
      assert.equal(await invitations.accept(aHash(), T0), undefined, 'an unknown one');
    });

    test(`${RACERS} accepts of one link at once, on two instances: exactly one`, async () => {
      const row = anInvitation();
      await invitations.insert(row);
      const accepted = await Promise.all(Array.from({ length: RACERS }, (_, i) => (i % 2 === 0 ? invitations : other.invitations).accept(row.tokenHash, T0 + 1)));
      assert.equal(accepted.filter((a) => a !== undefined).length, 1);
    });

    test('renewed: the old link dies, the new one lives until the new expiry; a revoked one is neither renewed nor accepted', async () => {
      const row = anInvitation();
      await invitations.insert(row);
      const renewed = await other.invitations.renew(row.id, { tokenHash: aHash(), expiresAt: T0 + 8 * DAY, invitedBy: 'client:ops' });
      assert.deepEqual(renewed, { ...row, tokenHash: renewed!.tokenHash, expiresAt: T0 + 8 * DAY, invitedBy: 'client:ops' });
      assert.equal(await invitations.findLive(row.tokenHash, T0), undefined, 'the old link is dead');
      assert.equal(await invitations.accept(row.tokenHash, T0), undefined);
      assert.deepEqual(await invitations.revoke(row.id, T0 + 2), { ...renewed, status: 'revoked', endedAt: T0 + 2 });
      assert.equal(await invitations.revoke(row.id, T0 + 3), undefined, 'revoked once');
      assert.equal(await invitations.renew(row.id, { tokenHash: aHash(), expiresAt: T0 + 9 * DAY, invitedBy: 'x' }), undefined);
      assert.equal(await invitations.accept(renewed!.tokenHash, T0 + 4), undefined);
    });

    test('revokes and accepts racing on two instances: exactly one wins', async () => {
      const row = anInvitation();
      await invitations.insert(row);
      const results = await Promise.all(Array.from({ length: RACERS }, (_, i) => (i % 2 === 0 ? invitations.revoke(row.id, T0 + 1) : other.invitations.accept(row.tokenHash, T0 + 1))));
      assert.equal(results.filter((r) => r !== undefined).length, 1);
    });

    test('one pending invitation per address, case-insensitively, also from two instances at once; an expired one is retired first', async () => {
      const first = anInvitation();
      await invitations.insert(first);
      await assert.rejects(other.invitations.insert(anInvitation({ email: first.email.toUpperCase() })), ConflictError);
      const email = `racer-${randomUUID()}@example.com`;
      const inserted = await Promise.allSettled(Array.from({ length: RACERS }, (_, i) => (i % 2 === 0 ? invitations : other.invitations).insert(anInvitation({ email }))));
      assert.equal(inserted.filter((r) => r.status === 'fulfilled').length, 1);
      assert.ok(inserted.every((r) => r.status === 'fulfilled' || r.reason instanceof ConflictError));
      // Retiring: nothing while the pending one is live, then it becomes `expired` and the address is free.
      assert.equal(await invitations.retireExpired(first.email, first.expiresAt - 1), 0);
      assert.equal(await invitations.retireExpired(first.email.toLowerCase(), first.expiresAt), 1);
      assert.deepEqual(await invitations.get(first.id), { ...first, status: 'expired', endedAt: first.expiresAt });
      await invitations.insert(anInvitation({ email: first.email }));
      // An accepted or revoked one does not hold the address either.
      const revoked = anInvitation();
      await invitations.insert(revoked);
      await invitations.revoke(revoked.id, T0);
      await invitations.insert(anInvitation({ email: revoked.email }));
    });

    test('paged newest first by (createdAt, id), with the status at a time', async () => {
      const later = T0 + 100 * DAY;
      const rows = [0, 1, 2, 3].map((i) => anInvitation({ createdAt: later + i, expiresAt: later + i + DAY }));
      for (const row of rows) await invitations.insert(row);
      await invitations.revoke(rows[1]!.id, later + 10);
      const newest = await invitations.page({ now: later, limit: 2 });
      assert.deepEqual(newest.map((r) => r.id), [rows[3]!.id, rows[2]!.id]);
      const next = await invitations.page({ now: later, limit: 2, after: { createdAt: newest[1]!.createdAt, id: newest[1]!.id } });
      assert.deepEqual(next.map((r) => r.id), [rows[1]!.id, rows[0]!.id]);
      const at = later + DAY + 1; // rows 0 and 1's expiry passed, 2 and 3 live
      assert.deepEqual((await invitations.page({ now: at, limit: 10, status: 'pending' })).filter((r) => r.createdAt >= later).map((r) => r.id), [rows[3]!.id, rows[2]!.id]);
      assert.deepEqual((await invitations.page({ now: at, limit: 10, status: 'expired' })).filter((r) => r.createdAt >= later).map((r) => r.id), [rows[0]!.id]);
      assert.deepEqual((await invitations.page({ now: at, limit: 10, status: 'revoked' })).filter((r) => r.createdAt >= later).map((r) => r.id), [rows[1]!.id]);
    });
  });
}
