import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ManualClock } from '../lib/clock.ts';
import { scheduleCleanup, type CleanupDeps } from './cleanup.ts';

/** A store whose deletes count calls, delete nothing, and may fail. */
function fakeStore(behaviour: { fail?: () => boolean; slowMs?: number } = {}) {
  const calls = { passes: 0 };
  const maybeFail = async () => {
    if (behaviour.slowMs) await new Promise((resolve) => setTimeout(resolve, behaviour.slowMs));
    if (behaviour.fail?.()) throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    return 0;
  };
  const store: CleanupDeps['store'] = {
    sessions: {
      deleteExpired: async () => {
        calls.passes++;
        return maybeFail();
      },
    } as unknown as CleanupDeps['store']['sessions'],
    tokens: { deleteExpired: maybeFail } as unknown as CleanupDeps['store']['tokens'],
    codes: { deleteSpent: async () => ({ deleted: await maybeFail(), next: undefined }) } as unknown as CleanupDeps['store']['codes'],
  };
  return { store, calls };
}

function recordingLog() {
  const lines: { level: string; message: string }[] = [];
  return { lines, log: { info: (_: object, message: string) => lines.push({ level: 'info', message }), warn: (_: object, message: string) => lines.push({ level: 'warn', message }) } };
}

const until = async (condition: () => boolean, ms = 2000) => {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
};

test('the scheduler runs a pass every interval, starting at a random point of the first one', async () => {
  const { store, calls } = fakeStore();
  const { log } = recordingLog();
  const schedule = scheduleCleanup({ store, clock: new ManualClock() }, { intervalMs: 20, log, random: () => 0.5 });
  await until(() => calls.passes >= 3);
  await schedule.stop();
  const passes = calls.passes;
  await new Promise((resolve) => setTimeout(resolve, 60));
  assert.equal(calls.passes, passes, 'no pass after stop()');
});

test('a failing pass is logged as a warning and the next one still comes; nothing is thrown', async () => {
  let failures = 2;
  const { store, calls } = fakeStore({ fail: () => failures-- > 0 });
  const { log, lines } = recordingLog();
  const schedule = scheduleCleanup({ store, clock: new ManualClock() }, { intervalMs: 10, log, random: () => 0 });
  await until(() => calls.passes >= 3);
  await schedule.stop();
  assert.deepEqual(
    lines.filter((l) => l.level === 'warn').map((l) => l.message),
    ['cleanup failed; it will run again at the next interval', 'cleanup failed; it will run again at the next interval'],
  );
});

test('stop() waits for the pass in progress, so the store is not closed under it', async () => {
  const { store, calls } = fakeStore({ slowMs: 50 });
  const { log } = recordingLog();
  const schedule = scheduleCleanup({ store, clock: new ManualClock() }, { intervalMs: 1000, log, random: () => 0 });
  await until(() => calls.passes === 1);
  const started = Date.now();
  await schedule.stop();
  assert.ok(Date.now() - started >= 40, 'stop() returned before the pass finished');
});

test('stop() ends a long pass after the batch in progress, not after the whole backlog', async () => {
  let batches = 0;
  const full = async () => {
    batches++;
    await new Promise((resolve) => setTimeout(resolve, 10));
    return 10; // A full batch every time: an endless backlog.
  };
  const store = {
    sessions: { deleteExpired: full },
    tokens: { deleteExpired: full },
    codes: { deleteSpent: async () => ({ deleted: 0, next: undefined }) },
  } as unknown as CleanupDeps['store'];
  const { log, lines } = recordingLog();
  const schedule = scheduleCleanup({ store, clock: new ManualClock() }, { intervalMs: 1000, log, random: () => 0, batchSize: 10, maxBatches: 100 });
  await until(() => batches >= 3);
  await schedule.stop();
  assert.ok(batches < 10, `${batches} batches ran after stop()`);
  assert.match(lines.at(-1)?.message ?? '', /cleanup deleted/);
});

test('the log line counts the rows of every table: a pass that deleted only device authorizations and initial access tokens is logged', async () => {
  const { store } = fakeStore();
  let deleted = false;
  const once = (n: number) => async () => (deleted ? 0 : n);
  const withMore = {
    ...store,
    deviceAuthorizations: { deleteExpired: once(2) } as unknown as NonNullable<CleanupDeps['store']['deviceAuthorizations']>,
    registrations: {
      deleteExpiredInitialAccessTokens: async () => {
        const n = deleted ? 0 : 3;
        deleted = true;
        return n;
      },
    } as unknown as NonNullable<CleanupDeps['store']['registrations']>,
  };
  const { log, lines } = recordingLog();
  const schedule = scheduleCleanup({ store: withMore, clock: new ManualClock() }, { intervalMs: 1000, log, random: () => 0 });
  await until(() => lines.length >= 1);
  await schedule.stop();
  assert.deepEqual(lines, [{ level: 'info', message: 'cleanup deleted 5 expired row(s)' }]);
});
