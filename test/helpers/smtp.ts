/**
 * A real SMTP server for the mail tests (the smtp-server package), on an ephemeral port of
 * 127.0.0.1, without TLS (the tests' relay: GATEHOUSE_SMTP_STARTTLS=off), that keeps every message
 * it accepted. It can go down and come back on the same port (an outage) and refuse mail with a
 * reply code. It offers no STARTTLS (the test that smtp:// without the opt-out refuses it).
 */
import type { AddressInfo, Socket } from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  from: string | undefined;
  to: string[];
  /** The raw message, headers and body. */
  raw: string;
  messageId: string | undefined;
  /** Decoded (RFC 2047). */
  subject: string | undefined;
}

export interface TestSmtpServer {
  port: number;
  /** `smtp://127.0.0.1:PORT` */
  url: string;
  received: ReceivedMail[];
  /** How many messages arrived with each Message-ID. */
  countsByMessageId(): Map<string, number>;
  /** Refuse each DATA with this reply code (e.g. 451, 550); undefined: accept. */
  refuseWith: number | undefined;
  /** Stops listening and cuts the connections: the server is down. */
  stop(): Promise<void>;
  /** Listens again on the same port (nothing when it is listening). */
  start(): Promise<void>;
}

function header(raw: string, name: string): string | undefined {
  const head = raw.split(/\r?\n\r?\n/, 1)[0] ?? '';
  // Unfold (RFC 5322 §2.2.3), then find the field.
  const unfolded = head.replace(/\r?\n[ \t]+/g, ' ');
  return new RegExp(`^${name}:[ \\t]*(.*)$`, 'im').exec(unfolded)?.[1]?.trim();
}

/** A header value with its RFC 2047 encoded words (UTF-8, Q or B) decoded. */
function decodeWords(value: string | undefined): string | undefined {
  return value
    ?.replace(/\?=\s+=\?/g, '?==?')
    .replace(/=\?UTF-8\?([QB])\?([^?]*)\?=/gi, (_whole, encoding: string, text: string) =>
      encoding.toUpperCase() === 'B'
        ? Buffer.from(text, 'base64').toString('utf8')
        : Buffer.from(text.replace(/_/g, ' ').replace(/=([0-9A-F]{2})/gi, (_h, hex: string) => String.fromCharCode(parseInt(hex, 16))), 'latin1').toString('utf8'),
    );
}

export async function startSmtpServer(): Promise<TestSmtpServer> {
  const received: ReceivedMail[] = [];
  let server: SMTPServer | undefined;
  /** The open client connections, cut when the server stops (an outage cuts them too). */
  const sockets = new Set<Socket>();
  const state: TestSmtpServer = {
    port: 0,
    url: '',
    received,
    refuseWith: undefined,
    countsByMessageId() {
      const counts = new Map<string, number>();
      for (const m of received) if (m.messageId !== undefined) counts.set(m.messageId, (counts.get(m.messageId) ?? 0) + 1);
      return counts;
    },
    async stop() {
      const closing = server;
      server = undefined;
      if (!closing) return;
      const closed = new Promise<void>((resolve) => closing.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      sockets.clear();
      await closed;
    },
    async start() {
      if (server !== undefined) return;
      server = new SMTPServer({
        secure: false,
        authOptional: true,
        logger: false,
        // No STARTTLS offered (nor accepted): a plain relay.
        disabledCommands: ['STARTTLS'],
        // A connection left open never holds stop() for long (its own timer is unref'd).
        closeTimeout: 200,
        onData(stream, session, callback) {
          const chunks: Buffer[] = [];
          stream.on('data', (chunk: Buffer) => chunks.push(chunk));
          stream.on('end', () => {
            if (state.refuseWith !== undefined) {
              const error = Object.assign(new Error(state.refuseWith >= 500 ? 'mailbox unavailable' : 'try again later'), { responseCode: state.refuseWith });
              return callback(error);
            }
            const raw = Buffer.concat(chunks).toString('utf8');
            received.push({
              from: session.envelope.mailFrom === false ? undefined : session.envelope.mailFrom.address,
              to: session.envelope.rcptTo.map((r) => r.address),
              raw,
              messageId: header(raw, 'Message-ID'),
              subject: decodeWords(header(raw, 'Subject')),
            });
            callback();
          });
        },
      });
      const listening = server;
      listening.server.on('connection', (socket: Socket) => {
        sockets.add(socket);
        socket.once('close', () => sockets.delete(socket));
      });
      await new Promise<void>((resolve, reject) => {
        listening.once('error', reject);
        listening.listen(state.port, '127.0.0.1', () => resolve());
      });
      state.port = (listening.server.address() as AddressInfo).port;
      state.url = `smtp://127.0.0.1:${state.port}`;
    },
  };
  await state.start();
  return state;
}
