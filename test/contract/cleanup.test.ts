/**
 * The janitor on every database: the store's bounded deletes (sessions, tokens, codes) and the
 * cleanup use case over them with an injected clock, including what must survive — a redeemed
 * code while its tokens live (replay detection), rotated refresh tokens until their own expiry,
 * tokens without an expiry unless revoked long ago — and several instances sweeping at once.
 * Each test gets a database of its own, so counts are exact.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import type { AuthorizationCode, Token } from '../../src/domain/grant.ts';
import { ManualClock } from '../../src/lib/clock.ts';
import { cleanUp, GRACE_MS, REVOKED_RETENTION_MS, UNREDEEMED_CODE_GRACE_MS } from '../../src/oauth/cleanup.ts';
import type { CodeCursor, Store } from '../../src/storage/ports.ts';
import type { SqlStore } from '../../src/storage/sql/store.ts';
import { runGatehouse, storeLineOf } from '../helpers/cli.ts';
import { DATABASES } from '../helpers/databases.ts';
import { aCode, aHash, aStoredSession, aStoredUser, aToken, T0, withTestStore } from '../helpers/store.ts';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;


async function codeExists(store: SqlStore, code: AuthorizationCode): Promise<boolean> {
  const row = await store.database.db.selectFrom('authorization_codes').select('code_hash').where('code_hash', '=', code.codeHash).executeTakeFirst();
  return row !== undefined;
}

async function tokenExists(store: Store, token: Token): Promise<boolean> {
  return (await store.tokens.find(token.tokenHash)) !== undefined;
}

/** Runs deleteSpent page by page to the end; the total deleted and how many pages it took. */
async function sweepCodes(store: Store, before: number, tokensLiveAfter: number, limit: number): Promise<{ deleted: number; pages: number }> {
  let after: CodeCursor | undefined;
  let deleted = 0;
  let pages = 0;
  do {
    const page = await store.codes.deleteSpent({ unredeemedBefore: before, redeemedBefore: before, tokensLiveAfter, after, limit });
    deleted += page.deleted;
    after = page.next;
    pages++;
  } while (after);
  return { deleted, pages };
}

for (const kind of DATABASES) {
  describe(`cleanup on ${kind.name}`, () => {
    test('sessions.deleteExpired: past the idle or the absolute deadline goes, live stays, at most `limit` at a time', () =>
      withTestStore(kind, async (store) => {
        const idle = await aStoredSession(store, { expiresAt: T0 + 10 * MINUTE, maxExpiresAt: T0 + 8 * HOUR });
        // An idle deadline past the absolute one (GATEHOUSE_SESSION_TTL > GATEHOUSE_SESSION_MAX_TTL).
        const capped = await aStoredSession(store, { expiresAt: T0 + 9 * HOUR, maxExpiresAt: T0 + 5 * MINUTE });
        const live = await aStoredSession(store, { expiresAt: T0 + 2 * HOUR, maxExpiresAt: T0 + 8 * HOUR });
        assert.equal(await store.sessions.deleteExpired(T0 + 10 * MINUTE, 100), 1, 'a deadline equal to the cut-off is not past it');
        assert.equal(await store.sessions.deleteExpired(T0 + HOUR, 1), 1);
        assert.equal(await store.sessions.deleteExpired(T0 + HOUR, 1), 0);
        assert.equal(await store.sessions.findLive(idle.idHash, T0), undefined);
        assert.equal(await store.sessions.findLive(capped.idHash, T0), undefined);
        assert.ok(await store.sessions.findLive(live.idHash, T0));
      }));

    test('tokens.deleteExpired: expired ones go whatever their state; those without expiry only when revoked before the cut-off', () =>
      withTestStore(kind, async (store) => {
        const cut = T0 + 2 * HOUR;
        const put = async (overrides: Partial<Token>) => {
          const token = aToken(overrides);
          await store.tokens.insert(token);
          return token;
        };
        const expired = await put({ expiresAt: T0 + HOUR });
        const expiredRevoked = await put({ kind: 'refresh_token', expiresAt: T0 + HOUR, revokedAt: T0 + 5 * MINUTE });
        const expiredRotated = await put({ kind: 'refresh_token', expiresAt: T0 + HOUR, rotatedAt: T0 + 5 * MINUTE });
        const live = await put({ expiresAt: cut + 1 });
        const liveRotated = await put({ kind: 'refresh_token', expiresAt: T0 + 30 * DAY, rotatedAt: T0 + MINUTE });
        const liveRevoked = await put({ kind: 'refresh_token', expiresAt: T0 + 30 * DAY, revokedAt: T0 + MINUTE });
        const forever = await put({ kind: 'refresh_token', expiresAt: undefined });
        const foreverRotated = await put({ kind: 'refresh_token', expiresAt: undefined, rotatedAt: T0 + MINUTE });
        const foreverRevokedLongAgo = await put({ kind: 'refresh_token', expiresAt: undefined, revokedAt: T0 + MINUTE });
        const foreverRevokedLately = await put({ kind: 'refresh_token', expiresAt: undefined, revokedAt: T0 + 10 * DAY });

        assert.equal(await store.tokens.deleteExpired(cut, T0 + DAY, 1000), 4);
        for (const gone of [expired, expiredRevoked, expiredRotated, foreverRevokedLongAgo]) assert.equal(await tokenExists(store, gone), false);
        for (const kept of [live, liveRotated, liveRevoked, forever, foreverRotated, foreverRevokedLately]) assert.equal(await tokenExists(store, kept), true);
        // However far in the future: a token without expiry that nobody revoked is never deleted.
        assert.equal(await store.tokens.deleteExpired(T0 + 3650 * DAY, T0, 1000), 3);
        for (const kept of [forever, foreverRotated, foreverRevokedLately]) assert.equal(await tokenExists(store, kept), true);
      }));

    test('tokens.deleteExpired never deletes more than `limit`, across both kinds of spent token', () =>
      withTestStore(kind, async (store) => {
        const familyId = randomUUID();
        await store.tokens.insertMany([
          ...Array.from({ length: 3 }, () => aToken({ familyId, expiresAt: T0 })),
          ...Array.from({ length: 3 }, () => aToken({ familyId, kind: 'refresh_token', expiresAt: undefined, revokedAt: T0 })),
        ]);
        assert.deepEqual([await store.tokens.deleteExpired(T0 + 1, T0 + 1, 4), await store.tokens.deleteExpired(T0 + 1, T0 + 1, 4), await store.tokens.deleteExpired(T0 + 1, T0 + 1, 4)], [4, 2, 0]);
      }));

    test('codes.deleteSpent: unredeemed expired codes go; a redeemed one stays while any token issued from it is usable', () =>
      withTestStore(kind, async (store) => {
        const before = T0 + HOUR;
        const code = async (consumed: boolean, tokens: Partial<Token>[] = [], overrides: Partial<AuthorizationCode> = {}) => {
          const row = aCode({ consumedAt: consumed ? T0 + 1000 : undefined, ...overrides });
          await store.codes.insert(row);
          if (consumed) await store.codes.consumeOnce(row.codeHash, T0 + 1000);
          await store.tokens.insertMany(tokens.map((t) => aToken({ codeHash: row.codeHash, ...t })));
          return row;
        };
        const unredeemed = await code(false);
        const unexpired = await code(false, [], { expiresAt: before + 1 });
        const redeemedNoTokens = await code(true);
        const withLiveAccess = await code(true, [{ expiresAt: before + 1 }]);
        const withLiveRefresh = await code(true, [{ expiresAt: T0 + 1 }, { kind: 'refresh_token', expiresAt: T0 + 30 * DAY }]);
        const withEndlessRefresh = await code(true, [{ kind: 'refresh_token', expiresAt: undefined }]);
        const withRotatedRefresh = await code(true, [{ kind: 'refresh_token', expiresAt: T0 + 30 * DAY, rotatedAt: T0 + MINUTE }]);
        const allRevoked = await code(true, [{ revokedAt: T0 + 5000 }, { kind: 'refresh_token', expiresAt: undefined, revokedAt: T0 + 5000 }]);
        const allExpired = await code(true, [{ expiresAt: before }, { kind: 'refresh_token', expiresAt: before - 1 }]);

        const swept = await sweepCodes(store, before, before, 2);
        assert.equal(swept.deleted, 4);
        assert.ok(swept.pages >= 4, `${swept.pages} pages of at most 2 codes`);
        for (const gone of [unredeemed, redeemedNoTokens, allRevoked, allExpired]) assert.equal(await codeExists(store, gone), false);
        for (const kept of [unexpired, withLiveAccess, withLiveRefresh, withEndlessRefresh, withRotatedRefresh]) assert.equal(await codeExists(store, kept), true);

        // A replay of a kept code still finds it and revokes every token issued from it; then it may go.
        assert.equal((await store.codes.consumeOnce(withLiveRefresh.codeHash, before)).outcome, 'replayed');
        assert.equal(await store.tokens.revokeFamily(withLiveRefresh.codeHash, before), 2);
        assert.equal((await sweepCodes(store, before, before, 2)).deleted, 1);
        assert.equal(await codeExists(store, withLiveRefresh), false);
      }));

    test('codes.deleteSpent pages in (expiresAt, codeHash) order: each code is looked at once, ties included', () =>
      withTestStore(kind, async (store) => {
        // Five codes expiring at the same instant, two kept by a live token: a page boundary inside the tie.
        const rows = Array.from({ length: 5 }, () => aCode({ expiresAt: T0, consumedAt: T0 }));
        for (const row of rows) await store.codes.insert(row);
        for (const row of rows) await store.codes.consumeOnce(row.codeHash, T0);
        for (const row of rows.slice(0, 2)) await store.tokens.insert(aToken({ codeHash: row.codeHash, expiresAt: undefined }));
        const first = await store.codes.deleteSpent({ unredeemedBefore: T0 + 1, redeemedBefore: T0 + 1, tokensLiveAfter: T0, after: undefined, limit: 2 });
        assert.ok(first.next, 'a full page has a next page');
        const seen = [first];
        for (let page = first; page.next; ) seen.push((page = await store.codes.deleteSpent({ unredeemedBefore: T0 + 1, redeemedBefore: T0 + 1, tokensLiveAfter: T0, after: page.next, limit: 2 })));
        assert.equal(seen.length, 3, 'pages of 2, 2 and 1');
        assert.equal(
          seen.reduce((sum, page) => sum + page.deleted, 0),
          3,
        );
        const empty = await store.codes.deleteSpent({ unredeemedBefore: T0 + 1, redeemedBefore: T0 + 1, tokensLiveAfter: T0, after: undefined, limit: 10 });
        assert.deepEqual(empty, { deleted: 0, next: undefined }, 'the kept codes are looked at again only in the next pass');
      }));

    test('cleanUp with an injected clock: each row goes only GRACE_MS after it stopped mattering, an unredeemed code UNREDEEMED_CODE_GRACE_MS', () =>
      withTestStore(kind, async (store) => {
        const clock = new ManualClock(T0);
        const session = await aStoredSession(store, { expiresAt: T0 + 30 * MINUTE, maxExpiresAt: T0 + 8 * HOUR });
        const code = aCode({ expiresAt: T0 + MINUTE, sessionIndex: session.sessionIndex });
        await store.codes.insert(code);
        await store.codes.consumeOnce(code.codeHash, T0 + 1000);
        const access = aToken({ codeHash: code.codeHash, expiresAt: T0 + HOUR });
        const refresh = aToken({ codeHash: code.codeHash, kind: 'refresh_token', expiresAt: T0 + 30 * DAY });
        await store.tokens.insertMany([access, refresh]);
        const abandoned = aCode({ expiresAt: T0 + MINUTE });
        await store.codes.insert(abandoned);
        // Redeemed, no token from it: it keeps the full grace (a replay in flight still finds it).
        const spent = aCode({ expiresAt: T0 + MINUTE });
        await store.codes.insert(spent);
        await store.codes.consumeOnce(spent.codeHash, T0 + 1000);

        const at = async (time: number) => {
          clock.set(time);
          return cleanUp({ store, clock });
        };
        assert.deepEqual(pick(await at(T0 + MINUTE + UNREDEEMED_CODE_GRACE_MS)), { sessions: 0, codes: 0, tokens: 0 }, 'nothing is past its grace yet');
        assert.deepEqual(pick(await at(T0 + MINUTE + UNREDEEMED_CODE_GRACE_MS + 1)), { sessions: 0, codes: 1, tokens: 0 }, 'the abandoned code, minutes after it expired');
        assert.equal(await codeExists(store, abandoned), false);
        assert.deepEqual(pick(await at(T0 + MINUTE + GRACE_MS)), { sessions: 0, codes: 0, tokens: 0 }, 'a redeemed code keeps the full grace');
        assert.deepEqual(pick(await at(T0 + MINUTE + GRACE_MS + 1)), { sessions: 0, codes: 1, tokens: 0 }, 'the redeemed code without tokens');
        assert.equal(await codeExists(store, spent), false);
        assert.deepEqual(pick(await at(T0 + 30 * MINUTE + GRACE_MS + 1)), { sessions: 1, codes: 0, tokens: 0 }, 'the session');
        assert.deepEqual(pick(await at(T0 + HOUR + GRACE_MS + 1)), { sessions: 0, codes: 0, tokens: 1 }, 'the access token; the code stays for its refresh token');
        assert.equal(await codeExists(store, code), true);
        assert.equal(await tokenExists(store, refresh), true);
        assert.deepEqual(pick(await at(T0 + 30 * DAY + GRACE_MS + 1)), { sessions: 0, codes: 1, tokens: 1 }, 'the refresh token, then its code in the same pass');
      }));

    test('cleanUp keeps tokens without expiry and their codes until revoked REVOKED_RETENTION_MS ago', () =>
      withTestStore(kind, async (store) => {
        const clock = new ManualClock(T0);
        const code = aCode({ expiresAt: T0 + MINUTE });
        await store.codes.insert(code);
        await store.codes.consumeOnce(code.codeHash, T0);
        const forever = aToken({ codeHash: code.codeHash, kind: 'refresh_token', expiresAt: undefined });
        await store.tokens.insert(forever);
        clock.set(T0 + 3650 * DAY);
        assert.deepEqual(pick(await cleanUp({ store, clock })), { sessions: 0, codes: 0, tokens: 0 });
        await store.tokens.revokeFamily(forever.familyId, clock.now());
        clock.advance(GRACE_MS + 1);
        assert.deepEqual(pick(await cleanUp({ store, clock })), { sessions: 0, codes: 1, tokens: 0 }, 'a revoked token no longer keeps its code');
        clock.advance(REVOKED_RETENTION_MS);
        assert.deepEqual(pick(await cleanUp({ store, clock })), { sessions: 0, codes: 0, tokens: 1 });
      }));

    test('one pass deletes at most maxBatches × batchSize rows per table and says more is left', () =>
      withTestStore(kind, async (store) => {
        const clock = new ManualClock(T0 + DAY);
        await store.tokens.insertMany(Array.from({ length: 25 }, () => aToken({ expiresAt: T0 })));
        const first = await cleanUp({ store, clock }, { batchSize: 10, maxBatches: 2 });
        assert.equal(first.tokens, 20);
        assert.equal(first.more, true);
        const second = await cleanUp({ store, clock }, { batchSize: 10, maxBatches: 2 });
        assert.equal(second.tokens, 5);
        assert.equal(second.more, false);
      }));

    test('expired throttling counters are deleted, live ones kept', () =>
      withTestStore(kind, async (store) => {
        const clock = new ManualClock(T0 + HOUR);
        await store.throttling.recordFailure(['ip:192.0.2.1', 'user:alice'], T0, T0 + HOUR);
        await store.throttling.recordFailure(['ip:192.0.2.2'], T0, T0 + 2 * HOUR);
        assert.equal((await cleanUp({ store, clock })).throttling, 2);
        assert.deepEqual(
          (await store.throttling.get(['ip:192.0.2.1', 'user:alice', 'ip:192.0.2.2'], T0)).map((c) => c.key),
          ['ip:192.0.2.2'],
        );
      }));

    test('used client-assertion jtis are deleted once their assertion expired, live ones kept (JW-04)', () =>
      withTestStore(kind, async (store) => {
        const clock = new ManualClock(T0 + HOUR);
        assert.equal(await store.assertions.useOnce('jti-expired-1', T0 + HOUR, T0), true);
        assert.equal(await store.assertions.useOnce('jti-expired-2', T0 + HOUR - 1, T0), true);
        assert.equal(await store.assertions.useOnce('jti-live', T0 + HOUR + 1, T0), true);
        assert.equal((await cleanUp({ store, clock })).assertions, 2);
        assert.equal(await store.assertions.useOnce('jti-live', T0 + 2 * HOUR, T0 + HOUR), false, 'the live one is still used');
        assert.equal((await cleanUp({ store, clock })).assertions, 0);
      }));

    test('pending sign-ins (a password waiting for its second factor) are deleted once expired, live ones kept (issue 24)', () =>
      withTestStore(kind, async (store) => {
        const clock = new ManualClock(T0 + HOUR);
        const user = await aStoredUser(store);
        const pending = (expiresAt: number) => ({ idHash: aHash(), userId: user.id, clientId: 'c', binding: aHash(), amr: ['pwd'], createdAt: T0, expiresAt });
        const [gone, live] = [pending(T0 + HOUR), pending(T0 + HOUR + 1)];
        await store.pendingSignIns.insert(gone);
        await store.pendingSignIns.insert(live);
        assert.equal((await cleanUp({ store, clock })).pendingSignIns, 1);
        assert.ok(await store.pendingSignIns.find(live.idHash, T0 + HOUR));
        assert.equal((await cleanUp({ store, clock })).pendingSignIns, 0);
      }));

    test('device authorizations go GRACE_MS after they expired, whatever their state', () =>
      withTestStore(kind, async (store) => {
        const row = (userCode: string, expiresAt: number) => ({
          deviceCodeHash: randomUUID(), userCode, clientId: 'tv', scope: 'openid', status: 'pending' as const, createdAt: T0, expiresAt,
          interval: 5, lastPolledAt: undefined, approval: undefined, decidedAt: undefined, consumedAt: undefined,
        });
        const old = row('BBBBBBBB', T0 + 10 * MINUTE);
        const live = row('CCCCCCCC', T0 + 2 * HOUR);
        await store.deviceAuthorizations.insert(old);
        await store.deviceAuthorizations.insert(live);
        await store.deviceAuthorizations.decide(old.userCode, 'deny', T0 + MINUTE);
        const clock = new ManualClock(T0 + 10 * MINUTE + GRACE_MS);
        assert.equal((await cleanUp({ store, clock })).deviceAuthorizations, 0);
        clock.advance(1);
        assert.equal((await cleanUp({ store, clock })).deviceAuthorizations, 1);
        assert.deepEqual(await store.deviceAuthorizations.poll(old.deviceCodeHash, 'tv', T0), { outcome: 'unknown' });
        assert.equal((await store.deviceAuthorizations.poll(live.deviceCodeHash, 'tv', T0)).outcome, 'pending');
      }));

    test('initial access tokens go GRACE_MS after they expired, used up or not; live ones stay and still authorize', () =>
      withTestStore(kind, async (store) => {
        const token = (id: string, expiresAt: number, usesLeft: number) => ({ id, tokenHash: `hash-${id}`, description: undefined, createdBy: 'cli:test', createdAt: T0, expiresAt, usesLeft });
        await store.registrations.insertInitialAccessToken(token('expired-unused', T0 + 10 * MINUTE, 5));
        await store.registrations.insertInitialAccessToken(token('expired-used-up', T0 + 10 * MINUTE, 0));
        await store.registrations.insertInitialAccessToken(token('live', T0 + 2 * HOUR, 1));
        const clock = new ManualClock(T0 + 10 * MINUTE + GRACE_MS);
        assert.equal((await cleanUp({ store, clock })).initialAccessTokens, 0, 'an expiry exactly GRACE_MS ago is kept');
        clock.advance(1);
        const report = await cleanUp({ store, clock });
        assert.equal(report.initialAccessTokens, 2);
        assert.deepEqual((await store.registrations.listInitialAccessTokens({ limit: 10 })).map((t) => t.id), ['live']);
        assert.equal((await store.registrations.useInitialAccessToken('hash-live', clock.now()))?.usesLeft, 0, 'the live token still authorizes');
        assert.equal((await cleanUp({ store, clock })).initialAccessTokens, 0);
      }));

    test('registrations.deleteExpiredInitialAccessTokens deletes at most `limit` at a time', () =>
      withTestStore(kind, async (store) => {
        for (let i = 0; i < 5; i++) await store.registrations.insertInitialAccessToken({ id: `t${i}`, tokenHash: `h${i}`, description: undefined, createdBy: 'cli:test', createdAt: T0, expiresAt: T0 + i, usesLeft: 1 });
        assert.equal(await store.registrations.deleteExpiredInitialAccessTokens(T0 + 100, 2), 2);
        assert.equal(await store.registrations.deleteExpiredInitialAccessTokens(T0 + 100, 2), 2);
        assert.equal(await store.registrations.deleteExpiredInitialAccessTokens(T0 + 100, 2), 1);
        assert.equal(await store.registrations.deleteExpiredInitialAccessTokens(T0 + 100, 2), 0);
      }));

    test('three instances sweeping at once delete every spent row exactly once, without errors', () =>
      withTestStore(
        kind,
        async (store, harness) => {
          const others = [await harness.open({ poolSize: 4 }), await harness.open({ poolSize: 4 })];
          const clock = new ManualClock(T0 + 90 * DAY);
          const expired = Array.from({ length: 600 }, () => aToken({ expiresAt: T0 }));
          for (let i = 0; i < expired.length; i += 200) await store.tokens.insertMany(expired.slice(i, i + 200));
          const keep = aToken({ kind: 'refresh_token', expiresAt: undefined });
          await store.tokens.insert(keep);
          for (let i = 0; i < 300; i++) await store.codes.insert(aCode({ expiresAt: T0 }));
          const reports = await Promise.all([store, ...others].map((s) => cleanUp({ store: s, clock }, { batchSize: 50 })));
          assert.equal(
            reports.reduce((sum, r) => sum + r.tokens, 0),
            600,
          );
          assert.equal(
            reports.reduce((sum, r) => sum + r.codes, 0),
            300,
          );
          assert.equal(await tokenExists(store, keep), true);
          assert.deepEqual(pick(await cleanUp({ store, clock })), { sessions: 0, codes: 0, tokens: 0 });
        },
        { poolSize: 4 },
      ));

    test('`gatehouse cleanup --json` runs one pass against the configured store', () =>
      withTestStore(kind, async (store, harness) => {
        const longAgo = Date.now() - 2 * DAY;
        await store.tokens.insertMany(Array.from({ length: 3 }, () => aToken({ createdAt: longAgo, expiresAt: longAgo + HOUR })));
        const live = aToken({ createdAt: Date.now(), expiresAt: Date.now() + HOUR });
        await store.tokens.insert(live);
        const result = await runGatehouse(['cleanup', '--json'], { GATEHOUSE_DATABASE_URL: harness.database.url });
        assert.equal(result.stderr, storeLineOf({ GATEHOUSE_DATABASE_URL: harness.database.url }));
        assert.equal(result.code, 0);
        const report = JSON.parse(result.stdout) as Record<string, unknown>;
        assert.equal(report.tokens, 3);
        assert.equal(report.more, false);
        assert.equal(await tokenExists(store, live), true);
      }));
  });
}

function pick(report: { sessions: number; codes: number; tokens: number }): { sessions: number; codes: number; tokens: number } {
  return { sessions: report.sessions, codes: report.codes, tokens: report.tokens };
}
