/**
 * Slow and stalled clients (security test, issue 10, finding 6): a request whose headers drip, whose
 * body stalls or whose body never ends is answered 408 and its connection closed within the
 * configured time — GATEHOUSE_HEADERS_TIMEOUT, GATEHOUSE_BODY_TIMEOUT, GATEHOUSE_REQUEST_TIMEOUT —
 * instead of holding the connection for ever. Small timeouts are configured so the test is quick.
 */
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { openSqlStore, type SqlStore } from '../../src/storage/sql/store.ts';
import { basic } from '../helpers/back-channel.ts';
import { DATABASES } from '../helpers/databases.ts';
import { parseResponse, type RawResponse } from '../helpers/raw-http.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';

const HEADERS_TIMEOUT_S = 1;
const BODY_TIMEOUT_S = 1;
const REQUEST_TIMEOUT_S = 3;
/** Node checks its timeouts every tenth of the shorter one; the rest is a loaded machine's delay. */
const SLACK_MS = 1500;
/** A probe that has no answer by then has hung: the old behaviour. */
const GIVE_UP_MS = 10_000;

interface Probe {
  /** The answer, if any came before the server closed the connection. */
  response: RawResponse | undefined;
  /** From the first byte sent to the connection's close. */
  elapsedMs: number;
}

/**
 * Opens a connection, writes `first`, then writes `drip()` every `everyMs` (when given) until the
 * server closes the connection; resolves with what it answered. Gives up after GIVE_UP_MS.
 */
function probe(port: number, first: string, drip?: { everyMs: number; bytes: () => string }): Promise<Probe> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    const started = Date.now();
    const dripper = drip && setInterval(() => socket.writable && socket.write(drip.bytes()), drip.everyMs);
    const giveUp = setTimeout(() => {
      socket.destroy();
      reject(new Error(`the connection was still open ${GIVE_UP_MS} ms after its first byte`));
    }, GIVE_UP_MS);
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', () => {
      // A reset after the answer is fine; what arrived is judged below.
    });
    socket.on('close', () => {
      clearTimeout(giveUp);
      clearInterval(dripper);
      const bytes = Buffer.concat(chunks);
      resolve({ response: bytes.length === 0 ? undefined : parseResponse(bytes, 'POST'), elapsedMs: Date.now() - started });
    });
    socket.write(first);
  });
}

function assertTimedOut(what: string, result: Probe, afterS: number): void {
  const { response, elapsedMs } = result;
  assert.ok(elapsedMs >= afterS * 1000 - 100, `${what}: closed after ${elapsedMs} ms, before its ${afterS} s timeout`);
  assert.ok(elapsedMs <= afterS * 1000 + SLACK_MS, `${what}: closed after ${elapsedMs} ms, long after its ${afterS} s timeout`);
  assert.ok(response, `${what}: answered before the connection was closed`);
  assert.equal(response.status, 408, what);
  assert.deepEqual(JSON.parse(response.body), { error: 'invalid_request', error_description: 'The request took too long to arrive.' }, what);
  assert.equal(response.headers['x-frame-options'], 'DENY', what);
  assert.equal(response.headers.connection, 'close', what);
}

/**
 * Locks every throttle counter for `holdMs` from another PostgreSQL connection (row locks of an
 * open transaction); resolves once the lock is taken, with a promise of its release.
 */
async function holdThrottleLock(store: SqlStore, holdMs: number): Promise<{ released: Promise<unknown> }> {
  let locked: () => void = () => {};
  const lockTaken = new Promise<void>((resolve) => (locked = resolve));
  const released = store.database.db.transaction().execute(async (trx) => {
    await sql`update throttle_counters set failures = failures`.execute(trx);
    locked();
    await new Promise((resolve) => setTimeout(resolve, holdMs));
  });
  await lockTaken;
  return { released };
}

const FORM_HEAD = (port: number, length: number) =>
  `POST /uas/oauth2/token HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\ncontent-type: application/x-www-form-urlencoded\r\ncontent-length: ${length}\r\n\r\n`;

for (const db of DATABASES) {
  describe(`request timeouts on ${db.name}`, () => {
    let server: RunningServer;
    let port: number;

    before(async () => {
      server = await startServer(db, {
        env: { GATEHOUSE_HEADERS_TIMEOUT: String(HEADERS_TIMEOUT_S), GATEHOUSE_BODY_TIMEOUT: String(BODY_TIMEOUT_S), GATEHOUSE_REQUEST_TIMEOUT: String(REQUEST_TIMEOUT_S) },
      });
      port = Number(new URL(server.url).port);
    });
    // Bounded: on the old behaviour the stalled connections held close() for ever.
    after(async () => server.close(), { timeout: 20_000 });

    test('a stalled body, a body that never ends and a header drip (slowloris) are each answered 408 and closed within their timeout', async () => {
      const [stalledBody, endlessBody, headerDrip] = await Promise.all([
        // Headers and part of the body, then nothing: GATEHOUSE_BODY_TIMEOUT.
        probe(port, `${FORM_HEAD(port, 100)}grant_type=authorization_code&code=`),
        // A byte every 200 ms, never silent for the body timeout, never complete: GATEHOUSE_REQUEST_TIMEOUT.
        probe(port, FORM_HEAD(port, 60_000), { everyMs: 200, bytes: () => "a" }),
        // The request line, then one header line every 200 ms: GATEHOUSE_HEADERS_TIMEOUT.
        probe(port, `GET /uas/.well-known/openid-configuration HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\n`, { everyMs: 200, bytes: () => 'x-drip: 1\r\n' }),
      ]);
      assertTimedOut('stalled body', stalledBody, BODY_TIMEOUT_S);
      assertTimedOut('endless body', endlessBody, REQUEST_TIMEOUT_S);
      assertTimedOut('header drip', headerDrip, HEADERS_TIMEOUT_S);
    });

    test('a body whose pauses are each shorter than the body timeout is answered as usual', async () => {
      // The body in three parts, each pause shorter than the body timeout and all of them longer:
      // the body timeout bounds silence, not the time the body takes.
      const body = 'grant_type=urn:ietf:params:oauth:grant-type:saml2-bearer';
      const result = await new Promise<Probe>((resolve, reject) => {
        const socket = connect(port, '127.0.0.1');
        const chunks: Buffer[] = [];
        const started = Date.now();
        socket.on('data', (chunk: Buffer) => {
          chunks.push(chunk);
          // The whole answer is in: the pause did not cut the request.
          try {
            const response = parseResponse(Buffer.concat(chunks), 'POST');
            socket.destroy();
            resolve({ response, elapsedMs: Date.now() - started });
          } catch {
            // Not all of it yet.
          }
        });
        socket.on('error', reject);
        socket.on('close', () => reject(new Error('the connection closed before the answer was complete')));
        const pauseMs = BODY_TIMEOUT_S * 700;
        socket.write(`${FORM_HEAD(port, body.length)}${body.slice(0, 10)}`);
        setTimeout(() => socket.write(body.slice(10, 20)), pauseMs);
        setTimeout(() => socket.write(body.slice(20)), 2 * pauseMs);
      });
      assert.equal(result.response?.status, 400);
      assert.deepEqual(JSON.parse(result.response.body), { error: 'unsupported_grant_type', error_description: 'The grant_type urn:ietf:params:oauth:grant-type:saml2-bearer is not supported.' });
    });

    // PostgreSQL only: node:sqlite waits for a lock synchronously, so on SQLite the whole event
    // loop waits with the request and no timer (the body timeout's included) can fire meanwhile.
    const onPostgres = db.name === 'postgres' ? {} : { skip: 'SQLite waits for a lock synchronously: no timer fires while it does' };
    test('a request received in full is not cut while gatehouse works on it, however long the body timeout has passed', onPostgres, async () => {
      // Another connection holds the throttle counters locked, so the failed client
      // authentication's counter update waits for it: the request is received, then silent for
      // longer than the body timeout, then answered.
      const holdMs = BODY_TIMEOUT_S * 2500;
      const other = await openSqlStore(server.database.url);
      const fail = () => fetch(`${server.url}/uas/oauth2/token`, { method: 'POST', headers: { authorization: basic('no-such-client', 'x'), 'content-type': 'application/x-www-form-urlencoded' }, body: 'grant_type=authorization_code&code=x&redirect_uri=https%3A%2F%2Frp.example%2Fcb' });
      try {
        assert.equal((await fail()).status, 401, 'the first failure creates the counter rows');
        const { released } = await holdThrottleLock(other, holdMs);
        const started = Date.now();
        const response = await fail();
        const tookMs = Date.now() - started;
        await released;
        assert.equal(response.status, 401);
        assert.equal(((await response.json()) as { error: string }).error, 'invalid_client');
        assert.ok(tookMs >= holdMs - 500, `answered after ${tookMs} ms: the counter update did wait for the lock (${holdMs} ms)`);
      } finally {
        await other.close();
      }
    });
  });
}
