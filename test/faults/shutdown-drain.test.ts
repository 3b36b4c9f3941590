/**
 * The drain on SIGTERM is bounded (security test, issue 10, finding 6): a client that never
 * finishes its request cannot keep the process from exiting — after GATEHOUSE_SHUTDOWN_TIMEOUT
 * its connection is cut and the process exits 0, in one process and in cluster mode. Idle
 * keep-alive connections, and one whose request finished during the drain, do not hold the exit
 * back at all. Real processes (`node src/main.ts`), on every database.
 */
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { DATABASES, type TestDatabase } from '../helpers/databases.ts';
import { parseResponse, type RawResponse } from '../helpers/raw-http.ts';
import { startGatehouse, type GatehouseProcess } from './processes.ts';

/** A loaded machine's delay between the drain time and the exit (process teardown, store close). */
const SLACK_MS = 4000;

interface Connection {
  socket: Socket;
  /** Resolves when the server has closed the connection. */
  closed: Promise<void>;
  /** Resolves with the first whole answer received. */
  answer(): Promise<RawResponse>;
  /** Resolves with the first `count` answers (pipelined requests), once all have arrived. */
  answers(count: number): Promise<RawResponse[]>;
}

/** The whole answers at the start of `bytes` (each with a content-length, as all of ours have). */
function splitAnswers(bytes: Buffer): RawResponse[] {
  const out: RawResponse[] = [];
  for (;;) {
    const end = bytes.indexOf('\r\n\r\n');
    if (end === -1) return out;
    const length = Number(/\r\ncontent-length: *(\d+)/i.exec(bytes.subarray(0, end).toString('latin1'))?.[1] ?? 0);
    if (bytes.length < end + 4 + length) return out;
    out.push(parseResponse(bytes.subarray(0, end + 4 + length), 'POST'));
    bytes = bytes.subarray(end + 4 + length);
  }
}

function open(port: number, first: string): Connection {
  const socket = connect(port, '127.0.0.1');
  socket.on('error', () => {
    // A reset when the server cuts the connection; `closed` is what is checked.
  });
  let received = Buffer.alloc(0);
  const waiting: (() => void)[] = [];
  socket.on('data', (chunk: Buffer) => {
    received = Buffer.concat([received, chunk]);
    for (const wake of waiting.splice(0)) wake();
  });
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  socket.write(first);
  return {
    socket,
    closed,
    async answers(count) {
      while (splitAnswers(received).length < count && !socket.destroyed) await Promise.race([new Promise<void>((resolve) => waiting.push(resolve)), closed]);
      return splitAnswers(received).slice(0, count);
    },
    async answer() {
      for (;;) {
        try {
          return parseResponse(received, 'POST');
        } catch {
          await Promise.race([new Promise<void>((resolve) => waiting.push(resolve)), closed]);
          if (socket.destroyed) return parseResponse(received, 'POST');
        }
      }
    },
  };
}

const tokenRequest = (port: number, body: string, contentLength = body.length, connection = 'keep-alive') =>
  `POST /uas/oauth2/token HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\nconnection: ${connection}\r\ncontent-type: application/x-www-form-urlencoded\r\ncontent-length: ${contentLength}\r\n\r\n${body}`;

const UNSUPPORTED = { error: 'unsupported_grant_type', error_description: 'The grant_type urn:ietf:params:oauth:grant-type:saml2-bearer is not supported.' };

/** SIGTERM, then how long until the process exited and how (or that it had not after `withinMs`). */
async function sigterm(server: GatehouseProcess, withinMs: number): Promise<{ exit: number | string; afterMs: number }> {
  const sent = Date.now();
  server.child.kill('SIGTERM');
  const exit = await Promise.race([server.exited, new Promise<string>((resolve) => setTimeout(resolve, withinMs, `still running ${withinMs} ms after SIGTERM`))]);
  return { exit, afterMs: Date.now() - sent };
}

/** Lets the server read what was written before the signal is sent. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 200));

for (const kind of DATABASES) {
  describe(`bounded drain on ${kind.name}`, () => {
    let database: TestDatabase;
    let server: GatehouseProcess | undefined;

    before(async () => {
      database = await kind.create();
    });
    after(async () => {
      await server?.kill();
      await database?.drop();
    });

    test('a request that never finishes is cut after GATEHOUSE_SHUTDOWN_TIMEOUT, and the process exits 0', async () => {
      const drainS = 1;
      server = await startGatehouse({ databaseUrl: database.url, env: { GATEHOUSE_SHUTDOWN_TIMEOUT: String(drainS) } });
      // Headers and part of the body; the rest never comes (the request timeout is 300 s).
      const stalled = open(server.port, tokenRequest(server.port, 'grant_type=', 100));
      await settle();
      const { exit, afterMs } = await sigterm(server, 15_000);
      assert.equal(exit, 0, server.output());
      assert.ok(afterMs >= drainS * 1000 - 100, `exited ${afterMs} ms after SIGTERM: the stalled request was given its drain time`);
      assert.ok(afterMs <= drainS * 1000 + SLACK_MS, `exited ${afterMs} ms after SIGTERM, drain time ${drainS} s`);
      await stalled.closed;
      assert.match(server.output(), /drain time over: closing the connections still open/);
    });

    test('in cluster mode too: the primary exits 0 once its workers have cut their stalled requests', async () => {
      const drainS = 1;
      server = await startGatehouse({ databaseUrl: database.url, env: { GATEHOUSE_WORKERS: '2', GATEHOUSE_SHUTDOWN_TIMEOUT: String(drainS) } });
      // Connections are handed to the workers in turn: one stalled request on each.
      const stalled = [open(server.port, tokenRequest(server.port, 'grant_type=', 100)), open(server.port, tokenRequest(server.port, 'grant_type=', 100))];
      await settle();
      const { exit, afterMs } = await sigterm(server, 15_000);
      assert.equal(exit, 0, server.output());
      assert.ok(afterMs >= drainS * 1000 - 100, `exited ${afterMs} ms after SIGTERM: the stalled requests were given their drain time`);
      assert.ok(afterMs <= drainS * 1000 + SLACK_MS, `exited ${afterMs} ms after SIGTERM, drain time ${drainS} s`);
      await Promise.all(stalled.map((connection) => connection.closed));
    });

    test('idle keep-alive connections, and one whose requests finish during the drain, do not hold the exit back', async () => {
      // A drain time far longer than the test waits: the exit must not come from cutting connections.
      server = await startGatehouse({ databaseUrl: database.url, env: { GATEHOUSE_SHUTDOWN_TIMEOUT: '60' } });
      const { port } = server;
      const body = 'grant_type=urn:ietf:params:oauth:grant-type:saml2-bearer';
      // Idle: its request was answered and the connection kept alive.
      const idle = open(port, tokenRequest(port, body));
      const idleAnswer = await idle.answer();
      assert.equal(idleAnswer.headers.connection, 'keep-alive');
      // In flight: its body is completed only after SIGTERM; then it is idle as well.
      const inFlight = open(port, tokenRequest(port, body.slice(0, 10), body.length));
      await settle();

      const sent = Date.now();
      server.child.kill('SIGTERM');
      await settle();
      // The rest of its body, and a second request right behind it on the same connection: it
      // arrives during the drain and is answered as usual, with Connection: close (not Fastify's
      // bare 503, return503OnClosing: false).
      inFlight.socket.write(body.slice(10) + tokenRequest(port, body));
      const answers = await inFlight.answers(2);
      assert.deepEqual(
        answers.map((a) => [a.status, JSON.parse(a.body) as unknown]),
        [
          [400, UNSUPPORTED],
          [400, UNSUPPORTED],
        ],
        'the request in flight and the one that arrived during the drain were both answered',
      );
      assert.equal(answers[1]!.headers.connection, 'close');
      assert.equal(answers[1]!.headers['x-frame-options'], 'DENY');
      const exit = await Promise.race([server.exited, new Promise((resolve) => setTimeout(resolve, 10_000, 'still running 10 s after SIGTERM'))]);
      const afterMs = Date.now() - sent;
      assert.equal(exit, 0, server.output());
      assert.ok(afterMs < 5000, `exited ${afterMs} ms after SIGTERM`);
      await Promise.all([idle.closed, inFlight.closed]);
      assert.doesNotMatch(server.output(), /drain time over/);
    });
  });
}
