/**
 * Group commit on SQLite (src/storage/sql/sqlite-group-commit.ts, docs/decisions.md PR36): units
 * of work and writes that arrive together share one transaction, and still nothing is answered
 * before it is durable, a failed unit leaves no trace, and a group stays bounded. SQLite only:
 * PostgreSQL commits each unit itself and groups the WAL flushes of concurrent commits on its own.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { DatabaseSync } from 'node:sqlite';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { openSqlStore, type SqlStore } from '../../src/storage/sql/store.ts';
import { MAX_UNITS } from '../../src/storage/sql/sqlite-group-commit.ts';
import { aStoredUser, aToken } from '../helpers/store.ts';

describe('group commit on sqlite', () => {
  let folder: string;
  let store: SqlStore;
  /** Every statement the driver ran, transaction control included. */
  let ran: string[] = [];
  /** The turns of each COMMIT. */
  let commits: number[] = [];

  before(async () => {
    folder = mkdtempSync(join(tmpdir(), 'gatehouse-group-commit-'));
    store = await openSqlStore(`sqlite:${join(folder, 'store.db')}`, {
      onQuery: (_seconds, _failed, text) => ran.push(text),
      onCommit: (turns) => commits.push(turns),
    });
    // A parent and a child whose reference SQLite checks only at COMMIT: a way to make a COMMIT fail.
    await sql`create table gc_parents (id integer primary key)`.execute(store.database.db);
    await sql`create table gc_children (id integer primary key, parent integer references gc_parents (id) deferrable initially deferred)`.execute(store.database.db);
  });
  after(async () => {
    await store.close();
    rmSync(folder, { recursive: true, force: true });
  });

  function counting(): void {
    ran = [];
    commits = [];
  }
  const statementsLike = (pattern: RegExp) => ran.filter((text) => pattern.test(text)).length;
  const parents = async () => (await sql<{ n: number }>`select count(*) as n from gc_parents`.execute(store.database.db)).rows[0]!.n;

  test('units of work that arrive together share one BEGIN and one COMMIT, each under its savepoint', async () => {
    const user = await aStoredUser(store);
    const tokens = Array.from({ length: 10 }, () => aToken({ userId: user.id }));
    counting();
    const results = await Promise.all(tokens.map((token, i) => store.transaction(async (tx) => (await tx.tokens.insert(token), i))));
    assert.deepEqual(results, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    // The first opens the transaction itself; the nine waiting behind it run under savepoints.
    assert.equal(statementsLike(/^begin immediate$/), 1);
    assert.equal(statementsLike(/^savepoint unit$/), 9);
    assert.equal(statementsLike(/^release unit$/), 9);
    assert.equal(statementsLike(/^commit$/), 1);
    assert.deepEqual(commits, [10]);
    for (const token of tokens) assert.deepEqual(await store.tokens.find(token.tokenHash), token);
  });

  test('a lone unit of work runs as before: BEGIN IMMEDIATE, its statements, COMMIT', async () => {
    const user = await aStoredUser(store);
    const token = aToken({ userId: user.id });
    counting();
    await store.transaction((tx) => tx.tokens.insert(token));
    assert.deepEqual(ran.map((text) => text.split(' ')[0]), ['begin', 'insert', 'commit']);
    assert.deepEqual(commits, [1]);
  });

  test('lone writes that arrive together share a group too; reads alone open none', async () => {
    const user = await aStoredUser(store);
    const tokens = Array.from({ length: 5 }, () => aToken({ userId: user.id }));
    counting();
    await Promise.all(tokens.map((token) => store.tokens.insert(token)));
    assert.equal(statementsLike(/^begin immediate$/), 1);
    assert.deepEqual(commits, [5]);
    counting();
    await Promise.all(tokens.map((token) => store.tokens.find(token.tokenHash)));
    assert.deepEqual(ran.filter((text) => !/^select/.test(text)), []);
    assert.deepEqual(commits, []);
  });

  test('a unit that fails in a group is undone alone; the others commit', async () => {
    const user = await aStoredUser(store);
    const tokens = Array.from({ length: 5 }, () => aToken({ userId: user.id }));
    const failure = new Error('the third changes its mind');
    counting();
    const outcomes = await Promise.allSettled(
      tokens.map((token, i) =>
        store.transaction(async (tx) => {
          await tx.tokens.insert(token);
          if (i === 2) throw failure;
        }),
      ),
    );
    assert.deepEqual(
      outcomes.map((o) => o.status),
      ['fulfilled', 'fulfilled', 'rejected', 'fulfilled', 'fulfilled'],
    );
    assert.equal((outcomes[2] as PromiseRejectedResult).reason, failure);
    assert.equal(statementsLike(/^rollback to unit$/), 1);
    assert.deepEqual(commits, [5]);
    const found = await Promise.all(tokens.map((token) => store.tokens.find(token.tokenHash)));
    assert.deepEqual(
      found.map((token) => token !== undefined),
      [true, true, false, true, true],
    );
  });

  test('the first unit of a group that fails is undone by rolling the transaction back, and the group goes on', async () => {
    const user = await aStoredUser(store);
    const [first, second] = [aToken({ userId: user.id }), aToken({ userId: user.id })];
    const failure = new Error('the opener changes its mind');
    counting();
    const outcomes = await Promise.allSettled([
      store.transaction(async (tx) => {
        await tx.tokens.insert(first);
        throw failure;
      }),
      store.transaction((tx) => tx.tokens.insert(second)),
    ]);
    assert.deepEqual(
      outcomes.map((o) => o.status),
      ['rejected', 'fulfilled'],
    );
    assert.equal(await store.tokens.find(first.tokenHash), undefined);
    assert.deepEqual(await store.tokens.find(second.tokenHash), second);
  });

  test('nothing is answered before the COMMIT: when it fails, every unit of the group fails and nothing of it is kept', async () => {
    const db = store.database.db;
    counting();
    const outcomes = await Promise.allSettled([
      db.transaction().execute((trx) => sql`insert into gc_parents (id) values (1)`.execute(trx)),
      // Fine when written; its missing parent fails the COMMIT that carries it.
      db.transaction().execute((trx) => sql`insert into gc_children (id, parent) values (1, 999)`.execute(trx)),
      db.transaction().execute((trx) => sql`insert into gc_parents (id) values (2)`.execute(trx)),
    ]);
    assert.deepEqual(
      outcomes.map((o) => o.status),
      ['rejected', 'rejected', 'rejected'],
    );
    for (const outcome of outcomes) assert.match(String((outcome as PromiseRejectedResult).reason), /FOREIGN KEY constraint failed/);
    assert.equal(await parents(), 0);
    assert.deepEqual(commits, [], 'no group was reported committed');
    // The store goes on: the same write alone commits.
    await db.transaction().execute((trx) => sql`insert into gc_parents (id) values (1)`.execute(trx));
    assert.equal(await parents(), 1);
  });

  test(`a group holds at most ${MAX_UNITS} turns`, async () => {
    const user = await aStoredUser(store);
    const tokens = Array.from({ length: MAX_UNITS * 2 + 5 }, () => aToken({ userId: user.id }));
    counting();
    await Promise.all(tokens.map((token) => store.transaction((tx) => tx.tokens.insert(token))));
    assert.equal(
      commits.reduce((sum, turns) => sum + turns, 0),
      tokens.length,
    );
    assert.ok(
      commits.every((turns) => turns <= MAX_UNITS),
      `commits of ${commits.join(', ')} turns`,
    );
    assert.ok(commits.length >= 3, `${tokens.length} turns need at least three groups, not ${commits.length}`);
  });

  test('the one server process on a file lets a group span the event loop\'s round; a cluster worker commits as soon as none of its turns waits', async () => {
    // B is started from a callback of the round in which A ran (after A's turn has ended, before
    // the round's end), as a request read in the same round would be.
    const run = async (groupAcrossRounds: boolean): Promise<{ commits: number[]; ran: string[] }> => {
      const commits: number[] = [];
      const ran: string[] = [];
      let armed = false;
      let startSecond!: (second: Promise<unknown>) => void;
      const second = new Promise<Promise<unknown>>((resolve) => (startSecond = resolve));
      const own = await openSqlStore(`sqlite:${join(folder, `rounds-${groupAcrossRounds}.db`)}`, {
        groupAcrossRounds,
        onCommit: (turns) => armed && commits.push(turns),
        onQuery: (_seconds, _failed, text) => {
          if (!armed) return;
          ran.push(text.split(' ')[0]!);
          if (text.startsWith('insert') && ran.filter((word) => word === 'insert').length === 1) setImmediate(() => startSecond(own.tokens.insert(aToken({ userId: user.id }))));
        },
      });
      const user = await aStoredUser(own);
      try {
        armed = true;
        await own.tokens.insert(aToken({ userId: user.id }));
        await (await second);
        return { commits, ran };
      } finally {
        await own.close();
      }
    };
    assert.deepEqual(await run(true), { commits: [2], ran: ['begin', 'insert', 'insert', 'commit'] });
    // Each write in a group of its own, committed at the end of its turn.
    assert.deepEqual(await run(false), { commits: [1, 1], ran: ['begin', 'insert', 'commit', 'begin', 'insert', 'commit'] });
  });

  test('a write waits for another process\'s write lock on a timer, not in SQLite\'s busy handler: the thread goes on meanwhile', async () => {
    const user = await aStoredUser(store);
    const token = aToken({ userId: user.id });
    // Another connection to the file outside this process's turns, as another process is.
    const other = new DatabaseSync(join(folder, 'store.db'));
    other.exec('begin immediate');
    let ticks = 0;
    const ticker = setInterval(() => ticks++, 1);
    try {
      const write = store.tokens.insert(token);
      // Busy-waiting in SQLite would hold the thread, so neither this timer nor the ticker would run.
      await new Promise((resolve) => setTimeout(resolve, 50));
      assert.ok(ticks > 0, 'the thread ran timers while the write waited');
      assert.equal(await other.prepare('select count(*) as n from tokens where token_hash = ?').get(token.tokenHash)!.n, 0);
      other.exec('commit');
      await write;
    } finally {
      clearInterval(ticker);
      if (other.isTransaction) other.exec('rollback');
      other.close();
    }
    assert.deepEqual(await store.tokens.find(token.tokenHash), token);
  });

  test('two stores on one file in one process take turns without waiting on each other: a group ends where the other store is next', async () => {
    const other = await openSqlStore(`sqlite:${join(folder, 'store.db')}`);
    try {
      const user = await aStoredUser(store);
      const tokens = Array.from({ length: 20 }, () => aToken({ userId: user.id }));
      await Promise.all(tokens.map((token, i) => (i % 2 === 0 ? store : other).transaction((tx) => tx.tokens.insert(token))));
      for (const token of tokens) assert.deepEqual(await other.tokens.find(token.tokenHash), token);
    } finally {
      await other.close();
    }
  });
});
