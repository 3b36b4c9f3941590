/**
 * A webhook receiver for the tests (docs/webhooks.md): a real HTTP server on 127.0.0.1 that keeps
 * every delivery and checks its signature with the Standard Webhooks reference library
 * (`standardwebhooks`, an implementation independent of gatehouse's) against each secret the test
 * gives it. It answers 200, or what `answer` says (a status; `hang` to never answer: a timeout).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

export interface ReceivedWebhook {
  path: string;
  id: string;
  timestamp: string;
  signature: string;
  contentType: string | undefined;
  body: string;
  /** The parsed body: `{type, timestamp, data}`. */
  payload: { type: string; timestamp: string; data: Record<string, unknown> };
  /** Of `secrets` as they were when it arrived, those whose signature the library accepted. */
  verifiedWith: string[];
}

export interface WebhookReceiver {
  url(path: string): string;
  received: ReceivedWebhook[];
  /** The secrets to verify with (whsec_…). */
  secrets: string[];
  /** The answer to each POST: a status, or 'hang'. Default 200. */
  answer: (delivery: ReceivedWebhook) => number | 'hang';
  stop(): Promise<void>;
}

/** `now` is the test's clock: the library checks the timestamp against it (±5 min), as a receiver checks against its own. */
export async function startWebhookReceiver(now: () => number): Promise<WebhookReceiver> {
  let server: Server | undefined = undefined;
  const state: WebhookReceiver = {
    url: (path) => `http://127.0.0.1:${(server!.address() as AddressInfo).port}${path}`,
    received: [],
    secrets: [],
    answer: () => 200,
    async stop() {
      server?.closeAllConnections();
      await new Promise<void>((resolve) => server!.close(() => resolve()));
    },
  };
  server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const headers = { 'webhook-id': String(request.headers['webhook-id']), 'webhook-timestamp': String(request.headers['webhook-timestamp']), 'webhook-signature': String(request.headers['webhook-signature']) };
      const verifiedWith = state.secrets.filter((secret) => verifies(secret, body, headers, now()));
      const delivery: ReceivedWebhook = { path: request.url ?? '', id: headers['webhook-id'], timestamp: headers['webhook-timestamp'], signature: headers['webhook-signature'], contentType: request.headers['content-type'], body, payload: JSON.parse(body) as ReceivedWebhook['payload'], verifiedWith };
      state.received.push(delivery);
      const answer = state.answer(delivery);
      if (answer === 'hang') return;
      response.writeHead(answer, { 'content-type': 'text/plain' }).end(answer < 300 ? 'ok' : 'receiver failed');
    });
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', () => resolve()));
  return state;
}

/** The library's verify, its clock set to `now` for the call (it reads Date.now(); the call is synchronous). */
function verifies(secret: string, body: string, headers: Record<string, string>, now: number): boolean {
  const realNow = Date.now;
  Date.now = () => now;
  try {
    new Webhook(secret).verify(body, headers);
    return true;
  } catch {
    return false;
  } finally {
    Date.now = realNow;
  }
}
